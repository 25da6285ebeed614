"""`situated run` and `situated replay` as a user calls them: outputs, JSON lines, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fakes import ROOT
from situated.cli import main

SCENE = ROOT / "examples" / "scenes" / "apartment.json"
PLAN = ROOT / "examples" / "plans" / "microwave_salmon.py"


def test_run_prints_steps_and_summary_and_writes_the_trace(tmp_path, capsys):
    out = tmp_path / "trace.jsonl"
    assert main(["run", str(PLAN), "--scene", str(SCENE), "--trace", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "putin('salmon', 'microwave')" in printed
    assert "salmon INSIDE microwave" in printed and "Exec 1.00" in printed
    events = [json.loads(line) for line in out.read_text().splitlines()]
    assert any(e["kind"] == "step" and e["call"] == "switchon('microwave')" and e["ok"] for e in events)


@pytest.mark.parametrize(("plan_text", "expected"), [
    ("def t():\n\timport os\n", "line 2"),
    ("def t():\n\twalk('kitchen').__class__\n", "line 2"),
    ("def t():\n\tfly('kitchen')\n", "unknown action 'fly'"),
    ("def t():\n\tgrab('unicorn')\n", "unknown object 'unicorn'"),
])
def test_run_rejects_bad_plans_with_one_line_and_exit_2(tmp_path, capsys, plan_text, expected):
    plan = tmp_path / "bad.py"
    plan.write_text(plan_text)
    assert main(["run", str(plan), "--scene", str(SCENE)]) == 2
    err = capsys.readouterr().err.strip()
    assert expected in err and len(err.splitlines()) == 1


def test_run_rejects_missing_and_invalid_scene_files(tmp_path, capsys):
    assert main(["run", str(PLAN), "--scene", str(tmp_path / "nope.json")]) == 2
    assert "nope.json" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text('{"nodes": [')
    assert main(["run", str(PLAN), "--scene", str(broken)]) == 2
    err = capsys.readouterr().err.strip()
    assert "broken.json" in err and len(err.splitlines()) == 1


def test_bad_input_never_shows_a_traceback_from_the_console_script(tmp_path):
    plan = tmp_path / "hostile.py"
    plan.write_bytes(b"def t():\n\texec('import os')\n\xff\xfe\n")
    proc = subprocess.run([sys.executable, "-m", "situated", "run", str(plan), "--scene", str(SCENE)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("split", ["env1", "env2"])
def test_replay_of_the_ground_truth_reaches_the_published_replay_scores(progprompt_data, capsys, split):
    assert main(["replay", str(progprompt_data), "--split", split, "--json"]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["split"] == split and last["tasks"] == 10
    assert last["sr"] >= 0.9 and last["gcr"] >= 0.99 and last["exec"] == 1.0


def test_replay_of_an_unknown_split_names_the_available_ones(progprompt_data, capsys):
    assert main(["replay", str(progprompt_data), "--split", "env9"]) == 2
    err = capsys.readouterr().err
    assert "env9" in err and "env1" in err

"""The tabletop from the command line: `eval tabletop` replayed from recorded calls of the 0.5B model, `run` and
`plan` on `--scene tabletop:...` with goal conditions and a camera image, and bad input as one line, exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fakes import CASSETTES, EXAMPLES, ROOT, ScriptedLLM
from situated.cli import main

pytest.importorskip("pybullet")

CASSETTE = CASSETTES / "tabletop_qwen0.5b.jsonl"
TASKS = EXAMPLES / "tabletop" / "tasks.json"
PNG = b"\x89PNG\r\n\x1a\n"


def one_line_error(capsys: pytest.CaptureFixture) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err and "Traceback" not in err, err
    return err


def test_eval_replayed_from_the_cassette_and_resumed(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    if not CASSETTE.is_file():
        pytest.fail(f"cassette {CASSETTE} missing")
    args = ["eval", "tabletop", "--tasks", str(TASKS), "--limit", "2", "--model", "llamacpp:qwen2.5-coder-0.5b",
            "--cassette", str(CASSETTE), "--cassette-mode", "replay", "--out", str(tmp_path / "out"), "--json"]
    assert main(args) == 0
    out = capsys.readouterr().out
    summary = json.loads(out.strip().splitlines()[-1])
    assert list(summary)[:5] == ["sr", "exec", "plan_sr", "tasks", "runs"]
    assert summary["tasks"] == 2 and summary["runs"] == 1 and summary["episodes"] == 4
    for key in ("sr", "exec", "plan_sr"):
        both = (summary[f"{key}_distractors"] + summary[f"{key}_no_distractors"]) / 2
        assert summary[key] == pytest.approx(both)
    records = [json.loads(x) for x in (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()]
    assert sorted((r["task"], r["details"]["distractors"]) for r in records) == [
        ("put_the_apple_in_the_bowl", False), ("put_the_apple_in_the_bowl+distractors", True),
        ("put_the_mug_and_the_soup_can_in_the_box", False),
        ("put_the_mug_and_the_soup_can_in_the_box+distractors", True)]
    for r in records:  # each plan chose from what the camera saw and kept to the grammar
        assert r["details"]["plan"].split("\n")[1] == "\tobjects = [" + ", ".join(
            f"'{o}'" for o in r["details"]["seen"]) + "]"
        assert r["details"]["dropped"] == 0 and r["metrics"]["exec"] == 1.0
    assert summary["sr"] == sum(r["metrics"]["success"] for r in records) / 4
    assert "Plan SR" in out and "banana" in out  # the table names each setting's distractors
    assert main(args) == 0  # a second run resumes: nothing is planned or simulated again
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == summary


def test_eval_refuses_a_bad_task_file_before_loading_a_model(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"task": "a", "objects": ["apple", "bowl"], "goal": ["'apple' in 'bowl'"]},
                                 {"task": "b", "objects": ["apel", "bowl"], "goal": ["'apel' in 'bowl'"]}]))
    assert main(["eval", "tabletop", "--tasks", str(tasks), "--model", "llamacpp:no-such-model"]) == 2
    assert f"{tasks}: task 1: field 'objects': unknown object 'apel'" in one_line_error(capsys)
    assert main(["eval", "tabletop", "--tasks", str(tmp_path / "none.json")]) == 2
    assert "no such tasks file" in one_line_error(capsys)


def test_eval_refuses_objects_that_cannot_be_placed(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    tasks = tmp_path / "crowded.json"
    tasks.write_text(json.dumps([{"task": "a", "objects": ["apple", "bowl", "box", "tray", "gift_bag", "plate"],
                                  "distractors": ["banana", "bottle", "mug", "toy_car", "pear", "ball", "duck",
                                                  "candy", "soup_can", "red_cube", "blue_cube", "green_cube"],
                                  "goal": ["'apple' in 'bowl'"]}]))
    assert main(["eval", "tabletop", "--tasks", str(tasks), "--model", "llamacpp:no-such-model"]) == 2
    err = one_line_error(capsys)
    assert f"{tasks}: task 0: field 'distractors'" in err and "cannot place" in err


def _scene(tmp_path: Path, objects: list[dict]) -> Path:
    path = tmp_path / "scene.json"
    path.write_text(json.dumps({"format": "situated-tabletop-scene/1", "objects": objects}))
    return path


@pytest.mark.parametrize(("objects", "field"), [
    ([{"name": "apel"}, {"name": "bowl"}], "objects[0].name: unknown object 'apel'"),
    ([{"name": "apple", "x": 1.1, "y": 0.0}, {"name": "bowl"}], "objects[0].x: 'apple' at (1.10, 0.00) is out of"),
    ([{"name": "apple", "x": 0.5, "y": 0.0}, {"name": "bowl", "x": 0.52, "y": 0.02}], "objects[1]: 'bowl' at"),
])
def test_run_refuses_bad_tabletop_scenes(tmp_path: Path, capsys: pytest.CaptureFixture, objects: list[dict],
                                         field: str) -> None:
    plan = tmp_path / "plan.py"
    plan.write_text("def f():\n\tgrab_and_putin('apple', 'bowl')\n")
    scene = _scene(tmp_path, objects)
    assert main(["run", str(plan), "--scene", f"tabletop:{scene}"]) == 2
    assert f"{scene}: {field}" in one_line_error(capsys)


def test_run_refuses_unknown_scenes_and_objects(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    plan = tmp_path / "plan.py"
    plan.write_text("def f():\n\tgrab_and_putin('pear', 'bowl')\n")
    assert main(["run", str(plan), "--scene", "tabletop:kitchen"]) == 2
    assert "'kitchen' is neither a built-in tabletop scene (gift_bag, fruit_bowl, sorting)" in one_line_error(capsys)
    assert main(["run", str(plan), "--scene", "tabletop:"]) == 2
    one_line_error(capsys)
    assert main(["run", str(plan), "--scene", "tabletop:fruit_bowl"]) == 2
    assert "unknown object 'pear'" in one_line_error(capsys)


def test_run_a_plan_on_a_builtin_scene_and_render_the_result(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    plan = tmp_path / "plan.py"  # as the planner writes it: with its local object list
    plan.write_text("def fruit():\n\tobjects = ['apple', 'banana', 'bowl', 'strawberry']\n"
                    "\t# 0: the banana\n\tgrab_and_putin('banana', 'bowl')\n\tgo_home()\n")
    image, trace = tmp_path / "final.png", tmp_path / "trace.jsonl"
    assert main(["run", str(plan), "--scene", "tabletop:fruit_bowl", "--render", str(image),
                 "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "grab_and_putin('banana', 'bowl')" in out and "banana INSIDE bowl" in out and "Exec 1.00" in out
    assert image.read_bytes().startswith(PNG)
    steps = [json.loads(line) for line in trace.read_text().splitlines() if '"step"' in line]
    assert [(s["call"], s["ok"], s["line"]) for s in steps] == [("grab_and_putin('banana', 'bowl')", True, 4),
                                                               ("go_home()", True, 5)]


def test_the_shipped_plan_is_valid_for_its_scene() -> None:
    from situated.envs.tabletop import BUILTIN_SCENES
    from situated.eval.systems.scenes import RUN_TABLETOP_SPACE
    from situated.planners.progprompt_tabletop import strip_objects_line
    from situated.program import parse, validate

    objects, body = strip_objects_line((EXAMPLES / "tabletop" / "plans" / "pack_the_gift_bag.py").read_text())
    assert objects is not None and set(objects) == set(BUILTIN_SCENES["gift_bag"])
    assert validate(parse(body), RUN_TABLETOP_SPACE, objects) == []


def test_render_needs_a_tabletop_scene(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    scene, plan = ROOT / "examples" / "scenes" / "apartment.json", ROOT / "examples" / "plans" / "watch_tv.py"
    assert main(["run", str(plan), "--scene", str(scene), "--render", str(tmp_path / "x.png")]) == 2
    assert "only a tabletop scene has a camera" in one_line_error(capsys)


def test_plan_on_a_tabletop_scene_shows_the_goal_and_renders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture) -> None:
    from situated.cli import models

    llm = ScriptedLLM(["# 0: the apple\n\tgrab_and_putin('apple', 'bowl')\n"])
    monkeypatch.setattr(models, "open_model", lambda *a, **k: llm)
    image = tmp_path / "after.png"
    assert main(["plan", "put the apple in the bowl", "--scene", "tabletop:fruit_bowl", "--tasks", str(TASKS),
                 "--render", str(image)]) == 0
    out = capsys.readouterr().out
    assert llm.prompts[0].endswith("():\n\tobjects = ['apple', 'banana', 'bowl', 'strawberry']\n\t")
    assert "✓ 'apple' in 'bowl'" in out and "goal conditions: 1/1" in out
    assert image.read_bytes().startswith(PNG)


def test_console_script_reports_a_bad_task_file_in_one_line(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"task": "a", "objects": ["apple", "bowl"], "goal": ["'apple' in 'box'"]}]))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "situated", "eval", "tabletop", "--tasks", str(tasks)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (f"error: {tasks}: task 0: field 'goal': goal 0: \"'apple' in 'box'\" names 'box', "
                           "which is not among the task's objects\n")


def test_eval_in_two_worker_processes_matches_one(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`--jobs 2`: episodes run in two worker processes (each with its own simulator and replayed model) and
    come out as one process gives them, each stored once."""
    args = ["eval", "tabletop", "--tasks", str(TASKS), "--limit", "2", "--model", "llamacpp:qwen2.5-coder-0.5b",
            "--cassette", str(CASSETTE), "--json"]
    assert main([*args, "--out", str(tmp_path / "one")]) == 0
    one = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert main([*args, "--out", str(tmp_path / "two"), "--jobs", "2"]) == 0
    two = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert two == one
    lines = (tmp_path / "two" / "episodes.jsonl").read_text().splitlines()
    assert sorted(json.loads(x)["task"] for x in lines) == sorted(
        json.loads(x)["task"] for x in (tmp_path / "one" / "episodes.jsonl").read_text().splitlines())
    assert len(lines) == 4

"""`situated sandbox study` as a user runs it: two scripted bags, one per condition, replayed from recorded 1.5B
calls, write the measures per session and per bag, the per-bag figure and an HTML report; a second run keeps what
is done; bad study folders are one-line errors with exit 2."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from fakes import CASSETTE_MODE, CASSETTES
from situated.cli import main

CASSETTE = CASSETTES / "sandbox_study_1.5b.jsonl"
MODEL = "llamacpp:qwen2.5-coder-1.5b"
SESSIONS = {
    "t1_teaching_bag1.session": "# situated-session/1\n# participant: t1\n# condition: teaching\n# trial: 1\n"
                                "# scene: gift_bag\nuser: pack the ball\nuser: pick up the ball\n"
                                "user: put it in the gift bag\nuser: that's it\nexpect: 'ball' in 'gift_bag'\n",
    "t1_no_teaching_bag1.session": "# situated-session/1\n# participant: t1\n# condition: no-teaching\n# trial: 1\n"
                                   "# scene: gift_bag\nuser: pick up the ball\nuser: put it in the gift bag\n"
                                   "expect: 'ball' in 'gift_bag'\n",
}


def _folder(root: Path) -> Path:
    folder = root / "sessions"
    folder.mkdir()
    for name, text in SESSIONS.items():
        (folder / name).write_text(text)
    return folder


def _study(folder: Path, out: Path, cassette: Path = CASSETTE, conditions: str = "teaching,no-teaching",
           mode: str = CASSETTE_MODE) -> int:
    return main(["sandbox", "study", "--sessions", str(folder), "--conditions", conditions, "--out", str(out),
                 "--model", MODEL, "--cassette", str(cassette), "--cassette-mode", mode])


@pytest.mark.slow
def test_the_study_writes_measures_figures_and_a_report_and_resumes(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("pybullet")
    pytest.importorskip("matplotlib")
    folder, out = _folder(tmp_path), tmp_path / "out"
    assert _study(folder, out) == 0
    printed = capsys.readouterr().out
    rows = json.loads((out / "sessions.json").read_text())
    by_condition = {r["condition"]: r for r in rows}
    assert set(by_condition) == {"teaching", "no-teaching"}, printed
    taught, baseline = by_condition["teaching"], by_condition["no-teaching"]
    assert taught["behaviours_taught"] == 1 and taught["lessons"] == 1 and taught["person_teaching_seconds"] > 0
    assert baseline["behaviours_taught"] == 0 and baseline["lessons"] == 0 and baseline["taught"] == []
    assert all(r["met"] == r["expectations"] == 1 for r in rows), printed
    assert all(r["person_supervision_seconds"] > 0 and r["participant"] == "t1" and r["trial"] == 1 for r in rows)
    with (out / "trials.csv").open() as handle:
        trials = list(csv.DictReader(handle))
    assert [(t["condition"], t["trial"]) for t in trials] == [("no-teaching", "1"), ("teaching", "1")]
    assert (out / "study.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = (out / "report.html").read_text()
    assert "Sandbox user study" in html and "Per bag" in html and "data:image/png;base64," in html
    assert "teaching" in printed and "bag 1" in printed
    # Resume: every session is in its store, so nothing asks the model (an empty cassette would fail if it did).
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert _study(folder, out, cassette=empty, mode="replay") == 0
    assert capsys.readouterr().out.count("done earlier (kept)") == 2
    assert json.loads((out / "sessions.json").read_text()) == rows
    # A selection reports only its sessions, from the same stores.
    assert main(["sandbox", "study", "--sessions", str(folder), "--out", str(out), "--model", MODEL, "--cassette",
                 str(empty), "--trials", "1", "--participants", "t1", "--conditions", "teaching"]) == 0
    assert [r["condition"] for r in json.loads((out / "sessions.json").read_text())] == ["teaching"]


def test_bad_study_folders_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    folder = _folder(tmp_path)
    assert _study(folder, tmp_path / "out", conditions="teaching,baseline") == 2
    assert "--conditions: expected teaching and/or no-teaching" in capsys.readouterr().err
    (folder / "t2_bag1.session").write_text("# situated-session/1\n# condition: teaching\n# trial: first\n")
    assert _study(folder, tmp_path / "out") == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("t2_bag1.session:3: trial: expected a whole number from 1 to 1000, got 'first'")
    assert len(err.splitlines()) == 1
    (folder / "t2_bag1.session").write_text("# situated-session/1\n# participant: t2\nuser: go home\n")
    assert _study(folder, tmp_path / "out") == 2
    assert "a study session names its condition and trial" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    (folder / "t2_bag1.session").unlink()
    assert main(["sandbox", "study", "--sessions", str(folder), "--out", str(tmp_path / "out"), "--trials", "one"]) == 2
    assert "--trials: expected whole numbers separated by commas, got 'one'" in capsys.readouterr().err


def test_a_bad_condition_option_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    script = tmp_path / "s.session"
    script.write_text("user: go home\n")
    for argv in (["sandbox", "--condition", "baseline", "--script", str(script), "--library", str(tmp_path / "l.db")],
                 ["eval", "sandbox", "--sessions", str(script), "--condition", "baseline"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err == "error: --condition: expected teaching or no-teaching, got 'baseline'", err

"""`situated eval sandbox` as a user runs it: a folder of sessions (each on the scene it names, a `# after:` file
on the library its base left) is run from the recorded 1.5B calls and reported with expectations met, model time
per utterance, skill failures and model cost; bad folders are one-line errors with exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fakes import CASSETTE_MODE, CASSETTES, EXAMPLES
from situated.cli import main
from situated.sandbox.evaluation import after_of, percentile, scene_of, session_files

CASSETTE = CASSETTES / "sandbox_gift_bag_1.5b.jsonl"


def test_scene_and_order_come_from_the_files(tmp_path: Path) -> None:
    (tmp_path / "b_later.session").write_text("# situated-session/1\n# after: a_first.session\nuser: go home\n")
    (tmp_path / "a_first.session").write_text("# scene: sorting\nuser: go home\n")
    (tmp_path / "fruit_bowl_x.session").write_text("user: go home\n")
    (tmp_path / "0_after_b.session").write_text("# after: b_later.session\nuser: go home\n")
    names = [p.name for p in session_files(tmp_path)]
    assert names.index("a_first.session") < names.index("b_later.session") < names.index("0_after_b.session")
    assert scene_of(tmp_path / "a_first.session", "gift_bag") == "sorting"
    assert scene_of(tmp_path / "fruit_bowl_x.session", "gift_bag") == "fruit_bowl"
    assert scene_of(tmp_path / "b_later.session", "gift_bag") == "gift_bag"
    assert after_of(tmp_path / "b_later.session") == "a_first.session"
    assert percentile([3.0, 1.0, 2.0, 10.0], 0.5) == 2.0 and percentile([3.0, 1.0, 2.0, 10.0], 0.95) == 10.0
    assert percentile([], 0.5) is None


def test_bad_session_folders_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["eval", "sandbox", "--sessions", str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.strip().endswith("no such folder or session file")
    assert main(["eval", "sandbox", "--sessions", str(tmp_path)]) == 2
    assert "no .session files" in capsys.readouterr().err
    (tmp_path / "x.session").write_text("user: hi\nexpect: 'ball' inside\n")
    assert main(["eval", "sandbox", "--sessions", str(tmp_path), "--model", "llamacpp:qwen2.5-coder-1.5b",
                 "--cassette", str(CASSETTE)]) == 2
    assert "x.session:2: expect:" in capsys.readouterr().err


@pytest.mark.slow
def test_the_gift_bag_sessions_are_evaluated_from_the_recorded_calls(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("pybullet")
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in ("gift_bag.session", "gift_bag_again.session"):
        shutil.copy(EXAMPLES / "sandbox" / name, folder / name)
    assert main(["eval", "sandbox", "--sessions", str(folder), "--model", "llamacpp:qwen2.5-coder-1.5b",
                 "--cassette", str(CASSETTE), "--cassette-mode", CASSETTE_MODE, "--json"]) == 0
    out = capsys.readouterr().out
    report = json.loads(out.strip().splitlines()[-1])
    totals = report["totals"]
    assert [s["name"] for s in report["sessions"]] == ["gift_bag.session", "gift_bag_again.session"]
    assert totals["expectations"] == 11 and totals["met"] == 11, out[-3000:]
    assert totals["model_calls"] >= 14 and totals["prompt_tokens"] > totals["completion_tokens"] > 0
    assert totals["latency_p50"] is not None and totals["latency_p95"] >= totals["latency_p50"]
    assert report["sessions"][1]["taught"] == []  # the second session found its lessons in the library
    assert "11/11 expectations met over 2 sessions" in out

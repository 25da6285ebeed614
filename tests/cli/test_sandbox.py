"""`situated sandbox` as a user runs it: the gift-bag script meets every expectation with the 1.5B model (its calls
recorded in tests/cassettes/sandbox_gift_bag_1.5b.jsonl and replayed), a new process on the same library uses what
the first one taught, a session killed mid-lesson leaves a healthy library, bad scripts and bad library files are
one-line errors with exit 2, and the console, `library` and `report` commands work."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakes import CASSETTE_MODE, CASSETTES, EXAMPLES, ROOT
from situated.cli import main

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from situated.sandbox import SkillLibrary

MODEL = "llamacpp:qwen2.5-coder-1.5b"
GIFT_BAG = EXAMPLES / "sandbox" / "gift_bag.session"
AGAIN = EXAMPLES / "sandbox" / "gift_bag_again.session"
CASSETTE = CASSETTES / "sandbox_gift_bag_1.5b.jsonl"
AGAIN_CASSETTE = CASSETTES / "sandbox_gift_bag_again_1.5b.jsonl"
SEED_SKILLS = {"go_home", "goto", "grasp", "release", "pickup"}
SCENE_OBJECTS = {"ball", "candy", "cube", "duck", "gift_bag", "toy_car", "tray"}


def sandbox(*args: str, cassette: Path = CASSETTE) -> list[str]:
    return [sys.executable, "-m", "situated", "sandbox", "--scene", "gift_bag", "--model", MODEL,
            "--cassette", str(cassette), "--cassette-mode", CASSETTE_MODE, *args]


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}


def last_json(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def gift_bag_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    """The gift-bag script, run once in its own process from the recorded calls."""
    for cassette in (CASSETTE, AGAIN_CASSETTE):
        if CASSETTE_MODE == "replay" and not cassette.is_file():
            pytest.fail(f"cassette {cassette} missing; record it as docs/sandbox.md says")
    library = tmp_path_factory.mktemp("gifts") / "gifts.db"
    proc = subprocess.run(sandbox("--script", str(GIFT_BAG), "--library", str(library), "--json"),
                          capture_output=True, text=True, timeout=900, env=child_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    return library, proc


def test_the_gift_bag_script_meets_every_expectation(gift_bag_run: tuple[Path, subprocess.CompletedProcess]) -> None:
    library, proc = gift_bag_run
    totals = last_json(proc.stdout)
    assert totals["expectations"] >= 8 and totals["met"] == totals["expectations"], proc.stdout[-3000:]
    # 13 utterances: 13 plan calls ("pack the ball" asked twice: first answered as the unknown object `ball`,
    # which contradicts the API; "make a gift with the duck" asked again with calls only, as the action-word
    # question found no verb, and those calls, about the duck, not the last request's toy car, left out), the 2
    # teach steps, the action-word, the verb and the first-step side questions on each unknown behaviour (3 + 3:
    # `pack`, `make_gift`, both read as verbs to be taught, neither's words giving a step) and 4 lesson side
    # questions (the first-words question on "pick up the ball", whose "pick" is one letter from the lesson's
    # "pack"; the step-or-over question on "go to the gift bag", "let go of it", "pack the candie"; "that's it"
    # ends a lesson without asking)
    assert totals["skill_failures"] == 0 and totals["utterances"] == 13 and totals["model_calls"] == 25
    assert len(totals["taught"]) == 2 and totals["taught"][0] == "pack"
    gift = totals["taught"][1]
    assert "robot: I don't know how to pack." in proc.stdout
    with SkillLibrary.open(library) as lib:
        assert lib.get("pack").params and lib.get("pack").calls == ("pickup", "goto", "release")
        assert lib.get(gift).calls == ("pack",) and lib.get(gift).depth == 2 and len(lib.get(gift).params) == 1
        [session] = lib.sessions()
        events = lib.events(session.id)
    # the planner never named a function or object that did not exist when it answered
    known = set(SEED_SKILLS)
    for event in events:
        if event.kind == "plan":
            for call in event.payload["calls"]:
                name, args = call.split("(", 1)
                assert name in known, call
                assert {a.strip(" ')") for a in args.split(",") if a.strip(" ')")} <= SCENE_OBJECTS, call
        if event.kind == "teaching":
            known.add(event.payload["name"])
        if event.kind in ("unknown_behaviour", "unknown_object"):
            assert event.payload["name"] not in known | SCENE_OBJECTS
    executions = [e.payload for e in events if e.kind == "execution"]
    assert max(e["depth"] for e in executions) == 2
    # make_gift runs pack twice, three skills each: "go to the gift bag" in the lesson moved the arm only (no goal)
    # and "let go of it" dropped the ball, so pack is pickup, goto, release
    assert any(c["behaviour"] and c["skills"] == 6 for e in executions for c in e["calls"])
    plans = [e.payload for e in events if e.kind == "plan"]
    assert all("goal" in p for p in plans)
    went = next(p for p in plans if p["utterance"] == "go to the gift bag")
    assert went["calls"] == ["goto('gift_bag')"] and went["goal"] == []


def test_a_new_process_uses_what_the_first_one_taught(gift_bag_run: tuple[Path, subprocess.CompletedProcess],
                                                     tmp_path: Path) -> None:
    library, _ = gift_bag_run
    copy = tmp_path / "gifts.db"
    with SkillLibrary.open(library) as lib:
        lib.export_json(tmp_path / "gifts.json")
    with SkillLibrary.open(copy) as lib:
        lib.import_json(tmp_path / "gifts.json")
    proc = subprocess.run(sandbox("--script", str(AGAIN), "--library", str(copy), "--json",
                                  cassette=AGAIN_CASSETTE),
                          capture_output=True, text=True, timeout=900, env=child_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    totals = last_json(proc.stdout)
    assert totals["met"] == totals["expectations"] >= 3, proc.stdout[-3000:]
    assert totals["taught"] == [] and "I don't know" not in proc.stdout


def test_a_session_killed_during_a_lesson_keeps_every_behaviour_taught_before(tmp_path: Path) -> None:
    """The script arrives line by line on stdin; the process is killed (SIGKILL) while it waits for the next step
    of the second lesson, right after it reported running the previous one."""
    lines = GIFT_BAG.read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if line.startswith("user: pack the duck")) + 1
    library = tmp_path / "gifts.db"
    proc = subprocess.Popen(sandbox("--script", "-", "--library", str(library)), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=child_env())
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.writelines(lines[:cut])
    proc.stdin.flush()
    deadline = time.monotonic() + 600
    seen: list[str] = []
    try:
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, "the session ended early:\n" + "".join(seen[-20:])
            seen.append(line)
            if len(seen) > 1 and seen[-2].startswith("robot: Done.") and "pack('duck')" in "".join(seen[-6:]):
                break
        else:
            pytest.fail("no line reported the lesson's step in time")
        assert proc.poll() is None  # still in the lesson, waiting for its next step
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    with SkillLibrary.open(library) as lib:
        assert lib.integrity() == "ok"
        assert [b.name for b in lib.behaviours()] == ["pack"]
        [session] = lib.sessions()
        assert session.ended_at is None and any(e.kind == "teaching" for e in lib.events(session.id))
    assert main(["sandbox", "library", "--library", str(library), "--json"]) == 0


def test_bad_script_lines_are_one_line_errors_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    script = tmp_path / "bad.session"
    script.write_text("# situated-session/1\nuser: pack the ball\npoint marker here there\n")
    assert main(["sandbox", "--script", str(script), "--library", str(tmp_path / "lib.db")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and f"{script}:3:" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "lib.db").exists()  # checked before anything ran
    assert main(["sandbox", "--script", str(tmp_path / "none.session")]) == 2
    assert "cannot read the script" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["garbage", "foreign", "truncated"])
def test_a_corrupt_or_foreign_library_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                          kind: str) -> None:
    bad = tmp_path / "lib.db"
    if kind == "garbage":
        bad.write_bytes(b"this is not a database\n" * 100)
    elif kind == "foreign":
        with sqlite3.connect(bad) as db:
            db.execute("CREATE TABLE recipes (name TEXT)")
    else:
        with SkillLibrary.open(bad) as lib:
            lib.add_behaviour("pack", ["obj"], "", "pickup(obj)\n", calls=["pickup"])
        data = bad.read_bytes()
        bad.write_bytes(data[: len(data) // 2])
    script = tmp_path / "s.session"
    script.write_text("user: go home\n")
    for argv in (["sandbox", "--script", str(script), "--library", str(bad)],
                 ["sandbox", "library", "--library", str(bad), "--json"], ["sandbox", "report", str(bad)]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and str(bad) in err and len(err.splitlines()) == 1


def test_library_and_report_commands(gift_bag_run: tuple[Path, subprocess.CompletedProcess], tmp_path: Path,
                                     capsys: pytest.CaptureFixture) -> None:
    library, proc = gift_bag_run
    assert main(["sandbox", "library", "--library", str(library), "--json"]) == 0
    out = capsys.readouterr().out
    listing = last_json(out)
    assert listing == {"behaviours": sorted(last_json(proc.stdout)["taught"]), "objects": [], "skills": [],
                       "integrity": "ok"}
    assert "def pack(" in out
    plot = tmp_path / "study.png"
    assert main(["sandbox", "report", str(library), "--out", str(plot), "--json"]) == 0
    out = capsys.readouterr().out
    [row] = last_json(out)
    totals = last_json(proc.stdout)
    assert row["confirmations"] == totals["confirmations"] and row["met"] == totals["met"]
    assert row["behaviours_taught"] == 2 and row["skills_per_behaviour"] > 3 and row["max_depth"] == 2
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["sandbox", "library", "--library", str(tmp_path / "none.db")]) == 2


def test_the_console_confirms_teaches_points_and_demonstrates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture) -> None:
    """The first lesson of the gift-bag script typed into the console (the same model calls, replayed), then the
    console's own commands."""
    typed = ["help", "pack the ball", "pick up the ball", "y", "go to the gift bag", "y", "let go of it", "y",
             "that's it", "point racer 999 999", "point racer 0.358 -0.375 0.03", "demo hover ball 0.59 -0.34 0.25 ;"
             " 0.59 -0.34 0.12", f"image {tmp_path / 'view.png'}", "library", "api", "metrics", "undo racer", "quit"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(typed) + "\n"))
    library = tmp_path / "lib.db"
    assert main(["sandbox", "--scene", "gift_bag", "--library", str(library), "--model", MODEL,
                 "--cassette", str(CASSETTE), "--cassette-mode", CASSETTE_MODE]) == 0
    out = capsys.readouterr().out
    assert "robot: I don't know how to pack." in out and "ok release()  (+ ball INSIDE gift_bag" in out
    assert "robot: I learned pack" in out and "def pack(" in out
    assert "robot: Now I know the racer." in out and "robot: I learned hover" in out
    assert "hover(target)" in out and "object RACER" in out and "confirmations: 3" in out
    assert "robot: I forgot racer." in out
    assert (tmp_path / "view.png").read_bytes()[:4] == b"\x89PNG"
    with SkillLibrary.open(library) as lib:
        assert [b.name for b in lib.behaviours()] == ["pack"] and [s.name for s in lib.skills()] == ["hover"]
        assert lib.objects() == [] and lib.sessions()[0].ended_at is not None

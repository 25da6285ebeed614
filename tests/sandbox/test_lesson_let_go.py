"""A lesson's "and let it go" over the tray, with the real 1.5B model: the model planned pickup('candy'),
goto(TABLE), release() for it (measured on a held-out session, now development data), so `stash` was saved as
putting the item back on the table and every later use missed the tray. The pickup of the item already held
changes nothing, the request names no place: the release alone is planned, where the arm is.

The model's calls are recorded in tests/cassettes/sandbox_lesson_let_go_1.5b.jsonl and replayed (record them again
with SITUATED_CASSETTE_MODE=record, which runs the real model)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from fakes import CASSETTES

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from situated.envs.tabletop import TabletopEnv
from situated.llm import cassette
from situated.sandbox import SkillLibrary
from situated.sandbox.script import Step, read_script, run_script
from situated.sandbox.session import SandboxSession

MODEL = "llamacpp:qwen2.5-coder-1.5b"
CASSETTE = CASSETTES / "sandbox_lesson_let_go_1.5b.jsonl"
MODE = os.environ.get("SITUATED_CASSETTE_MODE", "replay")
SCRIPT = """\
# situated-session/1
user: hi robot, could you put the ball in the gift bag please?
user: great. now the cube as well
user: I want you to stash the candy
user: pick up the candy
user: move over to the tray
user: and let it go
expect: not 'candy' in 'hands'
user: that's it, that's how you stash something
expect: 'candy' in 'tray'
user: ok, now stash the duck
expect: 'duck' in 'tray'
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> list[Step]:
    if MODE == "replay" and not CASSETTE.is_file():
        pytest.fail(f"cassette {CASSETTE} missing; record it with SITUATED_CASSETTE_MODE=record")
    folder: Path = tmp_path_factory.mktemp("let_go")
    script = folder / "stash.session"
    script.write_text(SCRIPT)
    llm = cassette.wrap(MODEL, CASSETTE, mode=MODE, n_threads=1)
    steps: list[Step] = []
    env = TabletopEnv("gift_bag", seed=0)
    try:
        with SkillLibrary.open(folder / "lib.db") as lib, SandboxSession(env, llm, lib, scene="gift_bag",
                                                                         model=MODEL) as session:
            run_script(session, read_script(script), steps.append)
    finally:
        env.close()
    return steps


def replies(steps: list[Step], number: int) -> list[Any]:
    return [r for s in steps if s.line.number == number for r in s.replies]


def met(steps: list[Step], number: int) -> bool:
    return next(s.met for s in steps if s.line.number == number)


def test_letting_go_over_the_tray_is_the_release_alone(run: list[Step]) -> None:
    planned = replies(run, 7)
    assert planned[0].kind == "plan" and planned[0].plan.text == "release()\n", [r.say for r in planned]
    assert met(run, 8)


def test_the_lesson_keeps_the_tray_and_carries_to_another_item(run: list[Step]) -> None:
    taught = replies(run, 9)
    assert taught[0].kind == "taught" and taught[0].taught.name == "stash", [r.say for r in taught]
    assert "goto('tray')" in taught[0].taught.text and "'table'" not in taught[0].taught.text
    assert met(run, 10) and met(run, 12)

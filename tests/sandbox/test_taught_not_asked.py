"""A taught behaviour the request does not ask for, with the real 1.5B model: after `gift` is taught, "give me
the cube" was planned gift('cube') with the stated goal 'cube' in 'hands' (measured on a development session), and
the goal was dropped for the behaviour's effect, so the cube went into the bag. Now the model is asked whether the
request asks for the taught behaviour or for its stated goal (taught_reading); it reads "give me the cube" as the
stated goal, which stands, and the cube is handed over; "gift the ball" names the behaviour and still gifts it.

The model's calls are recorded in tests/cassettes/sandbox_taught_not_asked_1.5b.jsonl and replayed (record them
again with SITUATED_CASSETTE_MODE=record, which runs the real model)."""

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
CASSETTE = CASSETTES / "sandbox_taught_not_asked_1.5b.jsonl"
MODE = os.environ.get("SITUATED_CASSETTE_MODE", "replay")
LESSON = """\
# situated-session/1
user: Hello robot! How are you today?
user: I'd like to teach you something new. Could you gift the candy?
user: Sure. First, pick up the candy.
user: Then go to the gift bag.
user: And let go of it.
user: That's how you gift something, thank you.
expect: 'candy' in 'gift_bag'
user: Lovely. Now please gift the duck.
user: Could you also put the cube in the tray, please?
user: And gift the toy car as well, if you don't mind.
user: Wonderful, that's all. Please go back home now.
"""
LATER = """\
# situated-session/1
user: hi
user: gift the ball
expect: 'ball' in 'gift_bag'
user: give me the cube
expect: 'cube' in 'hands'
expect: not 'cube' in 'gift_bag'
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Step], list[Step]]:
    """The lesson in one session; the later requests in a new one on the same library (a new process)."""
    if MODE == "replay" and not CASSETTE.is_file():
        pytest.fail(f"cassette {CASSETTE} missing; record it with SITUATED_CASSETTE_MODE=record")
    folder: Path = tmp_path_factory.mktemp("taught")
    llm = cassette.wrap(MODEL, CASSETTE, mode=MODE, n_threads=1)
    runs: list[list[Step]] = []
    for name, text in (("lesson", LESSON), ("later", LATER)):
        script = folder / f"{name}.session"
        script.write_text(text)
        steps: list[Step] = []
        env = TabletopEnv("gift_bag", seed=0)
        try:
            with SkillLibrary.open(folder / "lib.db") as lib, SandboxSession(env, llm, lib, scene="gift_bag",
                                                                             model=MODEL) as session:
                run_script(session, read_script(script), steps.append)
        finally:
            env.close()
        runs.append(steps)
    return runs[0], runs[1]


def replies(steps: list[Step], number: int) -> list[Any]:
    return [r for s in steps if s.line.number == number for r in s.replies]


def met(steps: list[Step], number: int) -> bool:
    return next(s.met for s in steps if s.line.number == number)


def test_the_taught_verb_still_runs_the_behaviour(run: Any) -> None:
    lesson, later = run
    assert met(lesson, 8)
    planned = replies(later, 3)
    assert planned[0].kind == "plan" and planned[0].plan.text == "gift('ball')\n", [r.say for r in planned]
    assert met(later, 4)


def test_another_verb_is_planned_for_what_it_asks_not_the_taught_behaviour(run: Any) -> None:
    _, later = run
    planned = replies(later, 5)
    assert planned[0].kind == "plan", [r.say for r in planned]
    assert "gift" not in planned[0].plan.text
    assert met(later, 6) and met(later, 7)

"""A taught behaviour the request does not ask for, with the real 1.5B model: after `gift` is taught, "give me
the cube" was planned gift('cube') with the stated goal 'cube' in 'hands' (measured on a development session), and
the goal was dropped for the behaviour's effect, so the cube went into the bag. Now the model is asked whether the
request asks for the taught behaviour or for its stated goal (taught_reading); it reads "give me the cube" as the
stated goal, which stands, and the cube is handed over; "gift the ball" names the behaviour and still gifts it.

The model's calls are recorded in tests/cassettes/sandbox_taught_not_asked_1.5b.jsonl and replayed (record them
again with SITUATED_CASSETTE_MODE=record, which runs the real model)."""

from __future__ import annotations

from typing import Any

import pytest

from fakes import CASSETTES

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from recorded_sessions import met, replies, run_recorded
from situated.sandbox.script import Step

CASSETTE = CASSETTES / "sandbox_taught_not_asked_1.5b.jsonl"
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
    lesson, later = run_recorded(CASSETTE, tmp_path_factory.mktemp("taught"), [LESSON, LATER])
    return lesson, later


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

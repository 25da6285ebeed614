"""A lesson's "and let it go" over the tray, with the real 1.5B model: the model planned pickup('candy'),
goto(TABLE), release() for it (measured on a held-out session, now development data), so `stash` was saved as
putting the item back on the table and every later use missed the tray. The pickup of the item already held
changes nothing, the request names no place: the release alone is planned, where the arm is.

The model's calls are recorded in tests/cassettes/sandbox_lesson_let_go_1.5b.jsonl and replayed (record them again
with SITUATED_CASSETTE_MODE=record, which runs the real model)."""

from __future__ import annotations

import pytest

from fakes import CASSETTES

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from recorded_sessions import met, replies, run_recorded
from situated.sandbox.script import Step

CASSETTE = CASSETTES / "sandbox_lesson_let_go_1.5b.jsonl"
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
    [steps] = run_recorded(CASSETTE, tmp_path_factory.mktemp("let_go"), [SCRIPT])
    return steps


def test_letting_go_over_the_tray_is_the_release_alone(run: list[Step]) -> None:
    planned = replies(run, 7)
    assert planned[0].kind == "plan" and planned[0].plan.text == "release()\n", [r.say for r in planned]
    assert met(run, 8)


def test_the_lesson_keeps_the_tray_and_carries_to_another_item(run: list[Step]) -> None:
    taught = replies(run, 9)
    assert taught[0].kind == "taught" and taught[0].taught.name == "stash", [r.say for r in taught]
    assert "goto('tray')" in taught[0].taught.text and "'table'" not in taught[0].taught.text
    assert met(run, 10) and met(run, 12)

"""A place corrected within a lesson's step, with the real 1.5B model: "go to the plate, no, sorry, the box" was
planned goto('plate') on a held-out session (now development data), so the behaviour was learnt with the plate.
The place question (`planners/place_meant.py`) reads which place the words mean in the end; the lesson keeps the
box and carries to another item.

The model's calls are recorded in tests/cassettes/sandbox_place_corrected_1.5b.jsonl and replayed (record them
again with SITUATED_CASSETTE_MODE=record, which runs the real model)."""

from __future__ import annotations

import pytest

from fakes import CASSETTES

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from recorded_sessions import met, replies, run_recorded
from situated.sandbox.script import Step

CASSETTE = CASSETTES / "sandbox_place_corrected_1.5b.jsonl"
SCRIPT = """\
# situated-session/1
# scene: sorting
user: hello! could you trash the soup can for me?
user: sure, first pick up the soup can
user: then move to the plate, wait no, sorry, the box
user: and open your hand
expect: 'soup_can' in 'box'
user: that's it, that's how you trash something
user: now trash the bottle
expect: 'bottle' in 'box'
expect: not 'bottle' in 'plate'
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> list[Step]:
    [steps] = run_recorded(CASSETTE, tmp_path_factory.mktemp("place_corrected"), [SCRIPT], scene="sorting")
    return steps


def test_the_step_goes_to_the_place_meant_in_the_end(run: list[Step]) -> None:
    planned = replies(run, 5)
    assert planned[0].kind == "plan" and planned[0].plan.text == "goto('box')\n", [r.say for r in planned]
    assert met(run, 7)


def test_the_lesson_keeps_the_box_and_carries_to_another_item(run: list[Step]) -> None:
    taught = replies(run, 8)
    assert taught[0].kind == "taught" and taught[0].taught.name == "trash", [r.say for r in taught]
    assert "goto('box')" in taught[0].taught.text and "'plate'" not in taught[0].taught.text
    assert met(run, 10) and met(run, 11)

"""Words about an unknown thing that ask for nothing, a lesson announced with a kind of thing, and a taught verb
used on an item its call does not name, with the real 1.5B model. Measured on a held-out session:
"That's going to be a lovely fruit salad." asked the person to point at the fruit, and so did "I'm going to teach
you to nestle a fruit", so no lesson began; after a lesson, "Discard the banana." was planned on the pear, and
"Discard the apple. Then the pear." put only the apple away.

The model's calls are recorded in tests/cassettes/sandbox_unnamed_thing_1.5b.jsonl and replayed (record them again
with SITUATED_CASSETTE_MODE=record, which runs the real model)."""

from __future__ import annotations

from typing import Any

import pytest

from fakes import CASSETTES, ScriptedLLM
from situated.planners.action_word import NO_ACTION

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from recorded_sessions import met, replies, run_recorded
from situated.sandbox import SkillLibrary
from situated.sandbox.script import Step
from situated.sandbox.session import SandboxSession

CASSETTE = CASSETTES / "sandbox_unnamed_thing_1.5b.jsonl"
SORTING = """\
# situated-session/1
user: Let me show you how to scrap something.
user: Pick up the bottle.
user: Go to the box.
user: Let go.
user: That's scrapping.
expect: 'bottle' in 'box'
user: Scrap the banana.
expect: 'banana' in 'box'
reset
user: Scrap the apple, then the pear.
expect: 'apple' in 'box'
expect: 'pear' in 'box'
"""


@pytest.fixture(scope="module")
def sorting(tmp_path_factory: pytest.TempPathFactory) -> list[Step]:
    [steps] = run_recorded(CASSETTE, tmp_path_factory.mktemp("sorting"), [SORTING], scene="sorting")
    return steps


def test_a_taught_verb_acts_on_the_item_the_request_names(sorting: Any) -> None:
    assert met(sorting, 7)
    planned = replies(sorting, 8)
    assert planned and planned[0].kind == "plan" and planned[0].plan.text == "scrap('banana')\n", \
        [r.say for r in planned]
    assert met(sorting, 9)


def test_a_taught_verb_said_of_two_items_acts_on_both(sorting: Any) -> None:
    planned = replies(sorting, 11)
    assert planned and "scrap('apple')" in planned[0].plan.text and "scrap('pear')" in planned[0].plan.text, \
        [r.say for r in planned]
    assert met(sorting, 12) and met(sorting, 13)


def test_an_unknown_thing_in_talk_plans_nothing_and_asks_no_one_to_point(fresh: Any, tmp_path: Any) -> None:
    """Scripted (exact answers): the word question finds the fruit a thing, the request question finds talk."""
    llm = ScriptedLLM([{"unknown_object": "fruit"}, {"word": "fruit", "is": "thing"},
                       {"word": "fruit", "is": "thing"}, {"action": NO_ACTION}, {"is": "talk"}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        reply = s.say("that will make a fine fruit cake")
        assert reply.kind == "notice", reply.say
        assert s.check("'duck' on 'table'")


def test_an_unknown_thing_in_a_lesson_announcement_begins_the_lesson(fresh: Any, tmp_path: Any) -> None:
    """Scripted: the fruit is a thing to the word question, but the words announce a lesson of their verb."""
    llm = ScriptedLLM([{"unknown_object": "fruit"}, {"word": "fruit", "is": "thing"},
                       {"word": "fruit", "is": "thing"}, {"action": "settle"}, {"is": "teach"},
                       {"unknown_behaviour": "settle", "objects": []}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        reply = s.say("I'm going to teach you to settle a fruit")
        assert reply.kind == "teach", reply.say
        assert s.teaching is not None and s.teaching.name == "settle"

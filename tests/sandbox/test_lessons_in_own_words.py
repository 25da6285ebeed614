"""Lessons and requests in the person's own words, as a user notices them: a lesson ends when the person says so
in any words (the model reads them), a lesson announced without an object takes the one it was shown on, a
request that names the tray is planned for the tray, a behaviour the person never named is not asked to be
taught, and a fixed plan picks the item up by name rather than closing the gripper wherever it is. The model is
scripted (exact answers); what the real model does is measured by `situated eval sandbox`."""

from __future__ import annotations

import pytest

from fakes import ScriptedLLM
from fakes import answer_plan as answer
from situated.actions import SANDBOX_SPACE
from situated.planners.lesson_end import LESSON_SCHEMA, lesson_messages
from situated.planners.toolcall import PlannedCalls, verb_said
from situated.program import Call, Condition

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from situated.envs.tabletop import TabletopEnv
from situated.sandbox import SkillLibrary
from situated.sandbox.checking import search
from situated.sandbox.places_said import meant_place
from situated.sandbox.session import SandboxSession
from situated.sandbox.table_copy import TableCopy

STEP, OVER = {"is": "step"}, {"is": "end"}




def test_a_lesson_ends_in_the_persons_own_words_and_takes_the_object_it_was_shown_on(fresh: TabletopEnv,
                                                                                      tmp_path) -> None:
    llm = ScriptedLLM([{"unknown_behaviour": "serve", "objects": []},
                       answer([("duck", "gripper")], ("pickup", {"obj": "duck"})),
                       STEP, answer([("duck", "tray")], ("goto", {"obj": "tray"}), ("release", {})),
                       STEP, answer([], ("go_home", {})),
                       OVER,
                       {"name": "serve", "params": ["toy"], "doc": "Put the toy on the tray."},
                       answer([], ("serve", {"toy": "ball"}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        assert s.say("I want to teach you a new trick called serve").kind == "teach"
        s.say("pick up the duck")      # the first step: nothing to end yet, so no side question
        s.confirm()
        s.say("put it on the tray")
        s.confirm()
        assert s.say("and then go back home").kind == "plan"   # the model read "step"
        s.confirm()
        taught = s.say("great, that's how you serve a toy")     # no "that's it": the model read "end"
        assert taught.kind == "taught" and "may not work" not in taught.say
        assert lib.get("serve").params == ("toy",)
        assert lib.get("serve").body == "pickup(toy)\ngoto('tray')\nrelease()\ngo_home()\n"
        asked = [c for c in llm.calls if c["schema"] == LESSON_SCHEMA]
        assert len(asked) == 3 and asked[-1]["messages"][-1]["content"].endswith(
            "The person says: great, that's how you serve a toy")
        # "I want to teach you ... serve" never asked for serve('duck'): it is not remembered as if it had
        assert all(e.utterance != "I want to teach you a new trick called serve" or "calls" not in e.answer
                   for e in s.memory.exchanges)
        s.say("serve the ball")
        assert s.confirm().execution.ok and s.check("'ball' in 'tray'")


@pytest.mark.parametrize("copied", ["Drop it", "let it fall"])
def test_words_read_as_the_end_that_ask_for_one_more_step_run_it_before_the_lesson_ends(
        fresh: TabletopEnv, tmp_path, copied: str) -> None:
    # heldout25_04: "Drop it. Congrats." was read as the lesson's end; yeet was learnt without its release
    llm = ScriptedLLM([{"unknown_behaviour": "yeet", "objects": []},
                       answer([("duck", "gripper")], ("pickup", {"obj": "duck"})),
                       STEP, answer([("duck", "gripper")], ("goto", {"obj": "tray"})),
                       OVER, {"step": copied},
                       *([answer([("duck", "tray")], ("release", {}))] if copied == "Drop it" else []),
                       {"name": "yeet", "params": ["thing"], "doc": "Put the thing on the tray."}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("I'll teach you to yeet")
        s.say("pick up the duck")
        s.confirm()
        s.say("now go to the tray")
        s.confirm()
        reply = s.say("Drop it. Congrats.")
        if copied != "Drop it":   # words the person did not say are no step: the lesson ends as read
            assert reply.kind == "taught" and "release" not in lib.get("yeet").body
            return
        assert reply.kind == "plan" and [c.action for c in reply.plan.calls] == ["release"]
        assert lib.get("yeet") is None             # not learnt before the step has run
        done = s.confirm()
        assert done.execution.ok and done.taught is not None and done.taught.name == "yeet"
        assert lib.get("yeet").body == "pickup(thing)\ngoto('tray')\nrelease()\n"
        assert s.teaching is None and s.check("'duck' on 'tray'")


def test_the_lesson_side_question_shows_worked_examples_of_both_answers() -> None:
    messages = lesson_messages("pack_away", "and that's packing away")
    assert messages[-1] == {"role": "user", "content": "Lesson: pack away\nThe person says: and that's packing away"}
    shown = [m["content"] for m in messages if m["role"] == "assistant"]
    assert '{"is": "step"}' in shown and '{"is": "end"}' in shown
    assert LESSON_SCHEMA["properties"]["is"]["enum"] == ["step", "end"]


def test_a_request_that_names_the_tray_is_planned_for_the_tray_not_the_table(fresh: TabletopEnv,
                                                                               tmp_path) -> None:
    llm = ScriptedLLM([answer([("candy", "table")], ("pickup", {"obj": "candy"}), ("goto", {"obj": "table"}),
                              ("release", {}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        plan = s.say("put the candy on the tray").plan
        assert [str(c.args[0]) for c in plan.calls if c.action == "goto"] == ["tray"]
        assert s.confirm().execution.ok and s.check("'candy' in 'tray'")


def test_a_place_the_request_names_as_where_things_come_from_is_not_taken_for_the_destination() -> None:
    table = TableCopy(frozenset({"candy", "ball"}), frozenset({"gift_bag", "tray"}), where={"candy": "tray"})
    to_bag = PlannedCalls((Call("pickup", ("candy",)), Call("goto", ("gift_bag",)), Call("release", ())),
                          (Condition("inside", ("candy", "gift_bag")),))
    assert meant_place(to_bag, "move the sweet off the tray and into the sack", table) is None
    table.where["candy"] = "table"   # not on the tray after all: the calls visiting the tray still say its part
    via = PlannedCalls((Call("goto", ("tray",)), *to_bag.calls), to_bag.goal)
    assert meant_place(via, "move the sweet off the tray and into the sack", table) is None
    to_table = PlannedCalls((Call("pickup", ("ball",)), Call("goto", ("table",)), Call("release", ())),
                            (Condition("on", ("ball", "table")),))
    assert meant_place(to_table, "put the ball down", table) is None              # no place named: as answered
    assert meant_place(to_table, "put the ball on the table", table) is None      # the place it names
    fixed, was, now = meant_place(to_table, "the ball goes on the tray", table)
    assert (was, now) == ("table", "tray") and fixed.goal == (Condition("inside", ("ball", "tray")),)


def test_a_behaviour_the_person_never_named_is_not_asked_to_be_taught(fresh: TabletopEnv, tmp_path) -> None:
    # measured: "Hi there! Could you please put the candy into the gift bag?" came back as the example's `wave`
    llm = ScriptedLLM([{"unknown_behaviour": "wave", "objects": []},
                       answer([("candy", "gift_bag")], ("pickup", {"obj": "candy"}), ("goto", {"obj": "gift_bag"}),
                              ("release", {}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        reply = s.say("Hi there! Could you please put the candy into the gift bag?")
        assert reply.kind == "plan" and s.teaching is None
        assert "unknown_behaviour" not in str(llm.calls[1]["schema"])
    assert verb_said("tidy", "It's called tidying up") and verb_said("serve", "a trick called serving")
    assert verb_said("make_gift", "make a gift with the duck") and not verb_said("wave", "hi there, put it away")


def test_a_verb_that_is_a_word_of_the_object_it_names_is_not_a_behaviour(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([{"unknown_behaviour": "toy", "objects": ["TOY_CAR"]},
                       answer([("toy_car", "gift_bag")], ("pickup", {"obj": "toy_car"}), ("goto", {"obj": "gift_bag"}),
                              ("release", {}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        assert s.say("toy car too").kind == "plan" and s.teaching is None


def test_a_fixed_plan_picks_the_item_up_by_name_rather_than_closing_the_gripper_where_it_is() -> None:
    table = TableCopy(frozenset({"ball", "duck"}), frozenset({"gift_bag", "tray"}), where={"ball": "tray"},
                      arm="ball")
    found = search([Condition("inside", ("ball", "gift_bag"))], SANDBOX_SPACE, table)
    assert found is not None and found[0] == Call("pickup", ("ball",))


def test_an_object_named_in_words_is_known_by_that_name_from_then_on(fresh: TabletopEnv, tmp_path) -> None:
    thing = {"word": "sweet", "is": "thing"}
    llm = ScriptedLLM([{"unknown_object": "sweet"}, thing, thing, {"word": "sweet", "names": "no"},  # point at it
                       {"unknown_object": "sweet"}, thing, thing, {"word": "sweet", "names": "CANDY"},
                       answer([("sweet", "tray")], ("pickup", {"obj": "sweet"}), ("goto", {"obj": "tray"}),
                              ("release", {})),
                       {"unknown_object": "serve"}, {"word": "serve", "is": "action"},    # no naming asked
                       {"unknown_behaviour": "serve", "objects": ["DUCK"]}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib, scene="gift_bag") as s:
        assert s.say("put the sweet on the tray").kind == "unknown_object"
        asked = llm.calls[3]
        assert asked["schema"]["properties"]["names"]["enum"] == ["TRAY", "no"]   # the objects the request names
        assert asked["messages"][-1]["content"] == "Known objects named: TRAY\nRequest: put the sweet on the tray\n" \
                                                  "Word: sweet"
        named = s.say("when I say the sweet, I mean the candy")
        assert named.kind == "taught" and named.say == "Now I know the sweet: it is the candy."
        assert fresh.aliases["sweet"] == "candy" and lib.get("sweet") is not None
        s.say("put the sweet on the tray")
        assert s.confirm().execution.ok and s.check("'candy' in 'tray'")
        # a word that is part of the action is never taken for a name, whatever the request names beside it
        s.say("I'd like to teach you a new word: serve. Let me walk you through serving the duck")
        assert "serve" not in fresh.aliases and not any("names" in str(c["schema"]) for c in llm.calls[9:])


def test_a_lesson_about_several_items_keeps_them_and_a_slip_is_not_a_place_named() -> None:
    from situated.sandbox.lessons import generalize

    table = TableCopy(frozenset({"banana", "strawberry"}), frozenset({"bowl"}))
    recipe = [Call("pickup", ("banana",)), Call("goto", ("bowl",)), Call("release", ()),
              Call("pickup", ("strawberry",)), Call("goto", ("bowl",)), Call("release", ())]
    assert generalize((), recipe, table).objects == ()               # "make a snack": both, always
    assert generalize((), recipe[:3], table).objects == ("banana",)   # "teach you to serve": shown on the banana
    sorting = TableCopy(frozenset({"bottle"}), frozenset({"plate", "box"}))
    to_box = PlannedCalls((Call("pickup", ("bottle",)), Call("goto", ("box",)), Call("release", ())),
                          (Condition("inside", ("bottle", "box")),))
    assert meant_place(to_box, "place the bottal in the boks", sorting) is None   # "place" is no plate


def test_a_place_visited_with_the_item_in_hand_is_where_it_goes() -> None:
    table = TableCopy(frozenset({"cube"}), frozenset({"gift_bag", "tray"}), held="cube")
    over = PlannedCalls((Call("goto", ("tray",)),), (Condition("on", ("cube", "table")),))
    fixed, was, now = meant_place(over, "Now move over to the tray.", table)
    assert (was, now) == ("table", "tray") and fixed.goal == (Condition("inside", ("cube", "tray")),)

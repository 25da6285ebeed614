"""A lesson's step that only carries the held item somewhere ("Then you take it over to the tray") is planned as
that move, the item still in hand, when the model reads it so; the next step lets it go. Measured on held-out
sessions: such steps were planned with a release, the item dropped a step early and the lesson was learnt wrong.
The model is scripted (exact answers); `situated eval sandbox` measures the real one."""

from __future__ import annotations

import pytest

from fakes import ScriptedLLM
from fakes import answer_plan as answer
from situated.planners.let_go import LET_GO_SCHEMA, let_go_messages

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from situated.envs.tabletop import TabletopEnv
from situated.sandbox import SkillLibrary
from situated.sandbox.session import SandboxSession


@pytest.mark.parametrize("read", ["hold", "release"])
def test_a_step_read_as_carrying_keeps_the_item_in_hand(fresh: TabletopEnv, tmp_path, read: str) -> None:
    carry = answer([("ball", "tray")], ("goto", {"obj": "tray"}), ("release", {}))
    llm = ScriptedLLM([{"unknown_behaviour": "stow", "objects": ["BALL"]},
                       answer([("ball", "gripper")], ("pickup", {"obj": "ball"})),
                       carry, {"is": read}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("stow the ball")
        s.say("first you pick up the ball")
        assert s.confirm().execution.ok
        shown = s.say("then you take it over to the tray")
        assert shown.kind == "plan"
        assert shown.plan.text == ("goto('tray')\n" if read == "hold" else "goto('tray')\nrelease()\n")
        assert s.confirm().execution.ok
        assert s.check("'ball' in 'hands'") is (read == "hold")
        assert s.check("'ball' on 'tray'") is (read == "release")
        asked = [c for c in llm.calls if c["schema"] is LET_GO_SCHEMA]
        assert len(asked) == 1 and "then you take it over to the tray" in asked[0]["messages"][-1]["content"]
        assert not llm.answers


@pytest.mark.parametrize("read", ["hold", "release"])
def test_a_step_planned_as_a_goto_short_of_its_goal_is_asked_about_too(fresh: TabletopEnv, tmp_path,
                                                                       read: str) -> None:
    # heldout25_01: "Over to the gift bag." planned goto(GIFT_BAG) with the goal CANDY in GIFT_BAG; sent back to
    # the model as short of its goal, it came back with two releases and a tray, and the lesson was learnt so
    carry = answer([("ball", "tray")], ("goto", {"obj": "tray"}))
    llm = ScriptedLLM([{"unknown_behaviour": "stow", "objects": ["BALL"]},
                       answer([("ball", "gripper")], ("pickup", {"obj": "ball"})),
                       carry, {"is": read}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("stow the ball")
        s.say("first you pick up the ball")
        assert s.confirm().execution.ok
        shown = s.say("over to the tray")
        assert shown.plan.text == ("goto('tray')\n" if read == "hold" else "goto('tray')\nrelease()\n")
        assert s.confirm().execution.ok
        assert s.check("'ball' in 'hands'") is (read == "hold")
        assert s.check("'ball' on 'tray'") is (read == "release")
        assert len([c for c in llm.calls if c["schema"] is LET_GO_SCHEMA]) == 1 and not llm.answers


@pytest.mark.parametrize("read", ["hold", "release"])
def test_a_step_planned_as_going_home_with_the_item_is_asked_whether_it_lets_go(fresh: TabletopEnv, tmp_path,
                                                                               read: str) -> None:
    # "and open your hand" over the box was planned go_home(): the behaviour learnt carried its item home
    llm = ScriptedLLM([{"unknown_behaviour": "stow", "objects": ["BALL"]},
                       answer([("ball", "gripper")], ("pickup", {"obj": "ball"})),
                       answer([("ball", "gripper")], ("goto", {"obj": "tray"})),
                       answer([], ("go_home", {})), {"is": read}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("stow the ball")
        for step in ("first you pick up the ball", "now go to the tray"):
            s.say(step)
            assert s.confirm().execution.ok
        shown = s.say("and open your hand")
        assert shown.plan.text == ("go_home()\n" if read == "hold" else "release()\n")
        assert s.confirm().execution.ok
        assert s.check("'ball' in 'hands'") is (read == "hold")
        assert s.check("'ball' on 'tray'") is (read == "release")
        asked = [c for c in llm.calls if c["schema"] is LET_GO_SCHEMA]
        assert len(asked) == 1 and asked[0]["messages"][-1]["content"] == "The step: and open your hand"
        assert not llm.answers


def test_a_step_outside_a_lesson_or_naming_no_place_is_not_asked_about(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([answer([("ball", "gripper")], ("pickup", {"obj": "ball"})),
                       answer([("ball", "tray")], ("goto", {"obj": "tray"}), ("release", {}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("pick up the ball")
        assert s.confirm().execution.ok
        assert s.say("take it over to the tray").plan.text == "goto('tray')\nrelease()\n"
        assert s.confirm().execution.ok and s.check("'ball' on 'tray'")
        assert not [c for c in llm.side_calls if c["schema"] is LET_GO_SCHEMA]


def test_the_let_go_question_shows_worked_examples_of_both_answers() -> None:
    messages = let_go_messages("swing over to the crate")
    assert messages[-1] == {"role": "user", "content": "The step: swing over to the crate"}
    shown = [m["content"] for m in messages if m["role"] == "assistant"]
    assert '{"is": "hold"}' in shown and '{"is": "release"}' in shown


def test_a_goal_that_puts_one_item_in_two_places_is_planned_for_the_last(fresh: TabletopEnv, tmp_path) -> None:
    # measured on a held-out session: "chuck the bottle in the box, nah hang on, on the plate" was planned to
    # both and stated as both; here, the candy to the gift bag and then the tray
    both = answer([("candy", "gift_bag"), ("candy", "tray")], ("pickup", {"obj": "candy"}),
                  ("goto", {"obj": "gift_bag"}), ("release", {}), ("pickup", {"obj": "candy"}),
                  ("goto", {"obj": "tray"}), ("release", {}))
    llm = ScriptedLLM([both])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        shown = s.say("toss the candy in the gift bag, nah hang on, on the tray")
        assert shown.kind == "plan" and shown.plan.text == "pickup('candy')\ngoto('tray')\nrelease()\n"
        assert s.confirm().execution.ok and s.check("'candy' on 'tray'") and not s.check("'candy' in 'gift_bag'")


def test_a_request_planned_as_going_home_with_the_item_lets_go_when_the_model_reads_it_so(fresh: TabletopEnv,
                                                                                         tmp_path) -> None:
    # heldout26_02: "open ur hand" over the tray, the duck in hand, was planned go_home() outside a lesson too
    llm = ScriptedLLM([answer([("duck", "gripper")], ("pickup", {"obj": "duck"})),
                       answer([], ("go_home", {})), {"is": "release"}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("pick up the duck")
        assert s.confirm().execution.ok
        assert s.say("open ur hand").plan.text == "release()\n"
        assert s.confirm().execution.ok and not s.check("'duck' in 'hands'") and s.check("'gripper' is 'opened'")
        assert [c["messages"][-1]["content"] for c in llm.calls if c["schema"] is LET_GO_SCHEMA] == [
            "The step: open ur hand"]
        assert not llm.answers

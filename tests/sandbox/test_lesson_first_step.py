"""Words that begin a lesson and give its first step in the same breath ("I want teach you new thing, is called
collect. First you take the banana.", a held-out session's): the step is planned and run as the lesson's first,
and the lesson keeps the object it names as its parameter. Words the model did not copy from the request, or that
say the new verb itself, are no step. The model is scripted (exact answers); `situated eval sandbox` measures the
real one."""

from __future__ import annotations

import pytest

from fakes import ScriptedLLM
from fakes import answer_plan as answer
from situated.planners.lesson_end import STEP_SCHEMA, step_messages

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from situated.envs.tabletop import TabletopEnv
from situated.sandbox import SkillLibrary
from situated.sandbox.session import SandboxSession

BEGIN = "I'll teach you something new, it's called stow. First you pick up the ball."




def test_a_step_given_with_the_lesson_is_run_as_its_first_and_keeps_its_object(fresh: TabletopEnv,
                                                                               tmp_path) -> None:
    llm = ScriptedLLM([{"unknown_behaviour": "stow", "objects": []},
                       {"step": "pick up the ball"},
                       answer([("ball", "gripper")], ("pickup", {"obj": "ball"})),
                       answer([("ball", "tray")], ("goto", {"obj": "tray"}), ("release", {})),
                       {"name": "stow", "params": ["thing"], "doc": "Put the thing on the tray."},
                       {"goal": [], "calls": ["stow(DUCK)"]}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        begun = s.say(BEGIN)
        assert begun.kind == "plan" and "Teach me" in begun.say and s.teaching is not None
        assert begun.plan.text == "pickup('ball')\n"
        assert s.confirm().execution.ok and s.check("'ball' in 'hands'")
        assert s.teaching.steps and s.teaching.steps[0].action == "pickup"
        s.say("then put it on the tray")
        assert s.confirm().execution.ok
        assert s.say("that's it").kind == "taught"
        assert lib.get("stow").body == "pickup(thing)\ngoto('tray')\nrelease()\n"
        s.say("stow the duck")
        assert s.confirm().execution.ok and s.check("'duck' on 'tray'")
        asked = [c for c in llm.calls if c["schema"] is STEP_SCHEMA]
        assert len(asked) == 1 and BEGIN in asked[0]["messages"][-1]["content"]


@pytest.mark.parametrize("step", ["stow the ball", "pick up the cube", "", "that's it"])
def test_words_that_are_no_step_of_the_request_begin_the_lesson_as_before(fresh: TabletopEnv, tmp_path,
                                                                           step: str) -> None:
    llm = ScriptedLLM([{"unknown_behaviour": "stow", "objects": ["BALL"]}, {"step": step}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        before = s.table()
        begun = s.say("I'll teach you to stow. Stow the ball, please")
        assert begun.kind == "teach" and s.pending is None and s.teaching is not None and not s.teaching.steps
        assert s.table().where == before.where and s.table().held is None   # nothing moved
        assert len(llm.calls) == 2 and not llm.answers   # no plan asked for the words


def test_the_first_step_question_shows_worked_examples_of_both_answers() -> None:
    messages = step_messages("put_away", "let me teach you put away. grab the mug")
    assert messages[-1] == {"role": "user", "content": "Lesson: put away\nThe person says: let me teach you put "
                                                       "away. grab the mug"}
    shown = [m["content"] for m in messages if m["role"] == "assistant"]
    assert '{"step": ""}' in shown and any(a != '{"step": ""}' for a in shown) and len(shown) >= 6


PRESENT = "Robot, I'm going to teach you what it means to present something. Step one: pick up the duck."


@pytest.mark.parametrize("announced", [True, False])
def test_a_lesson_announced_with_a_step_whose_action_is_a_skills_begins_only_when_the_model_reads_it_so(
        fresh: TabletopEnv, tmp_path, announced: bool) -> None:
    pick = answer([("duck", "gripper")], ("pickup", {"obj": "duck"}))
    script = [{"unknown_behaviour": "present", "objects": []}, {"action": "pick"},
              {"is": "teach" if announced else "other"}]
    llm = ScriptedLLM([*script, {"step": "pick up the duck"}, pick] if announced else [*script, pick])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        shown = s.say(PRESENT)
        assert shown.kind == "plan" and shown.plan.text == "pickup('duck')\n"
        assert s.confirm().execution.ok and s.check("'duck' in 'hands'")
        assert (s.teaching is not None and s.teaching.name == "present") is announced
        assert not llm.answers
        if announced:
            assert [c.action for c in s.teaching.steps] == ["pickup"]

"""Teaching as a user sees it: a behaviour shown step by step generalizes the named object into a parameter, joins
the API and the library; bodies are plan text read by the parser only; composition depth is bounded and cycles
are refused; a skill taught by demonstration reaches a new goal within 1 cm on the simulated arm."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from fakes import ScriptedLLM, answer_calls
from situated.actions import SANDBOX_SPACE, Behaviour, Param
from situated.errors import DataError, ParseError, ValidationError
from situated.program import Call, Var

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from situated.envs.tabletop import TabletopEnv
from situated.sandbox import SkillLibrary
from situated.sandbox.behaviours import (
    MAX_COMPOSITION_DEPTH,
    body_text,
    check_body,
    definition_text,
    expand,
    parse_body,
)
from situated.sandbox.motions import DemoSkill, learn_from_demo, object_position
from situated.sandbox.session import SandboxSession
from situated.sandbox.teaching import Teaching, is_abort, is_done


def calls(*items: tuple[str, dict[str, str]]) -> dict:
    return {"calls": answer_calls(items)}



def teach_pack(session: SandboxSession) -> Any:
    """Teach pack(item) by showing it; the robot's first reply."""
    first = session.say("pack the ball")
    for text in ("pick up the ball", "go to the gift bag", "release it"):
        assert session.say(text).kind == "plan"
        assert session.confirm().execution.ok
    assert session.say("that's it").kind == "taught"
    return first


PACK_ANSWERS = [{"unknown_behaviour": "pack", "objects": ["BALL"]}, calls(("pickup", {"obj": "ball"})),
                calls(("goto", {"obj": "gift_bag"})), calls(("release", {})),
                {"name": "pack", "params": ["item"], "doc": "Put the item into the gift bag."}]


def test_teaching_generalizes_the_named_object_into_a_parameter(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([*PACK_ANSWERS, calls(("pack", {"item": "duck"}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib, scene="gift_bag") as s:
        assert s.say("pack the ball").kind == "teach"
        s.say("pick up the ball")
        status = s.status()
        assert status["mode"] == "confirm" and status["teaching"] == {"name": "pack", "utterance": "pack the ball",
                                                                     "steps": []}
        s.confirm()
        assert s.status()["teaching"]["steps"] == ["pickup('ball')"]
        for text in ("go to the gift bag", "release it"):
            s.say(text)
            s.confirm()
        assert s.say("that's it").kind == "taught"
        record = lib.get("pack")
        assert record.params == ("item",) and record.calls == ("pickup", "goto", "release")
        assert record.body == "pickup(item)\ngoto('gift_bag')\nrelease()\n" and record.depth == 1
        assert s.definition("pack") == "def pack(item):\n    pickup(item)\n    goto('gift_bag')\n    release()\n"
        assert "pack" in s.space and s.space.get("pack").doc == "Put the item into the gift bag."
        assert s.status()["functions"][-1].startswith("def pack(item):") and s.status()["teaching"] is None
        json.dumps(s.status())
        # the teach step saw the steps with objects as members; the trigger is answered anew with the taught call
        # at the memory's end (appended, so the prompt's prefix stays)
        assert "pickup(X)\ngoto(GIFT_BAG)" in llm.calls[4]["messages"][-1]["content"]
        assert s.memory.exchanges[-1].utterance == "pack the ball"
        assert s.memory.exchanges[-1].answer == {"goal": ["BALL in GIFT_BAG"],
                                                **calls(("pack", {"item": "ball"}))}
        # the very next utterance can use it, on another object; the schema offered it
        plan = s.say("pack the duck")
        assert plan.plan.text == "pack('duck')\n"
        assert "pack" in str(llm.calls[-1]["schema"])
        done = s.confirm()
        assert [k.call for k in done.execution.calls[0].skills] == ["pickup('duck')", "goto('gift_bag')", "release()"]
        assert s.check("'duck' in 'gift_bag'")
        metrics = s.metrics()
        assert metrics.behaviours_taught == 1 and metrics.behaviour_calls == 1 and metrics.skills_per_behaviour == 3


def test_a_behaviour_of_behaviours_opens_sub_goals_and_has_depth_two(fresh: TabletopEnv, tmp_path) -> None:
    answers = [*PACK_ANSWERS, {"unknown_behaviour": "gift", "objects": ["DUCK"]},
               calls(("pack", {"item": "duck"})), calls(("pack", {"item": "candy"})),
               {"name": "gift", "params": ["toy"], "doc": "Pack the toy and a candy."}]
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, ScriptedLLM(answers), lib) as s:
        teach_pack(s)
        assert s.say("make a gift with the duck").kind == "teach"
        for text in ("pack the duck", "pack the candie"):
            assert s.say(text).kind == "plan" and s.confirm().execution.ok
        taught = s.say("done")
        assert taught.taught.text == "def gift(toy):\n    pack(toy)\n    pack('candy')\n"
        assert lib.get("gift").depth == 2 and lib.get("gift").calls == ("pack",)
        expansion = expand([Call("gift", ("cube",))], s.space)
        assert expansion.depth == 2
        assert expansion.text.splitlines()[:3] == ["# gift('cube')", "# pack('cube')", "pickup('cube')"]


def test_nothing_shown_or_abandoned_teaches_nothing(fresh: TabletopEnv, tmp_path) -> None:
    answers = [{"unknown_behaviour": "wave", "objects": []}, {"unknown_behaviour": "wave", "objects": []}]
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, ScriptedLLM(answers), lib) as s:
        assert s.say("wave at me").kind == "teach"
        assert s.say("That's it!").kind == "notice"
        assert s.say("wave at me").kind == "teach"
        assert s.say("never mind").kind == "notice" and s.teaching is None
        assert s.say("done").kind == "notice" and len(s.planner.llm.calls) == 2  # no lesson: no model call
        assert lib.behaviours() == [] and "wave" not in s.space


def test_done_and_abort_phrases() -> None:
    assert all(is_done(t) for t in ("done", "Done.", "That's it!", "that\u2019s it", "that is all", "I'm done"))
    assert not any(is_done(t) for t in ("done with the ball", "pack it", "it"))
    # courtesies around the closing phrase do not hide it; alone, or around anything else, they end nothing
    assert all(is_done(t) for t in ("OK, done.", "Great, that's it, thanks!", "Okay robot, I'm done now", "yes done"))
    assert not any(is_done(t) for t in ("OK.", "thanks", "ok now drop it", "done stacking it", "all right"))
    assert is_abort("Okay, forget it.") and not is_abort("okay")
    assert is_abort("Never mind.") and not is_abort("mind the duck")
    teaching = Teaching("pack", "pack the ball and the duck", ("ball", "duck"),
                        [Call("pickup", ("ball",)), Call("goto", ("gift_bag",)), Call("release")])
    assert teaching.generalized() == ("ball",)  # the duck was named but never used
    assert teaching.body_calls(["obj"])[0] == Call("pickup", (Var("obj"),))


def test_bodies_are_plan_text_read_by_the_parser_only() -> None:
    assert body_text([Call("pickup", (Var("obj"),)), Call("goto", ("gift_bag",))]) == "pickup(obj)\ngoto('gift_bag')\n"
    assert parse_body("# comment\npickup(obj)\n", ["obj"]) == (Call("pickup", (Var("obj"),), 2, 1),)
    for hostile in ("import os\n", "exec('x')\n", "pickup(obj).__class__\n", "pickup(other)\n", "for x in ['a']:\n"
                    "    pickup(x)\n", "", "assert('ball' in 'hands')\n"):
        with pytest.raises(ParseError):
            parse_body(hostile, ["obj"])
    with pytest.raises(ParseError) as err:
        parse_body("pickup(obj)\nimport os\n", ["obj"], source="pack")
    assert err.value.line == 2 and "pack" in str(err.value)
    assert definition_text("pack", ["obj"], "pickup(obj)\n") == "def pack(obj):\n    pickup(obj)\n"
    with pytest.raises(ValidationError, match="unknown function 'fly'"):
        check_body("b", [], "fly()\n", SANDBOX_SPACE)


def chain(depth: int) -> tuple[Behaviour, ...]:
    """b1 calls go_home, b2 calls b1, ...: b_n has composition depth n."""
    return tuple(Behaviour(f"b{i}", (), f"level {i}", body="go_home()\n" if i == 1 else f"b{i - 1}()\n")
                 for i in range(1, depth + 1))


def test_composition_depth_is_bounded() -> None:
    space = SANDBOX_SPACE
    for behaviour in chain(MAX_COMPOSITION_DEPTH):
        space = space.with_action(behaviour)
    assert expand([Call(f"b{MAX_COMPOSITION_DEPTH}")], space).depth == MAX_COMPOSITION_DEPTH
    deeper = space.with_action(Behaviour("b9", (), "too deep", body="b8()\n"))
    with pytest.raises(ValidationError, match="composition"):
        expand([Call("b9")], deeper)
    with pytest.raises(ValidationError, match="composition depth 9"):
        check_body("b9", [], "b8()\n", deeper)
    loop = SANDBOX_SPACE.with_action(Behaviour("a", (), "", body="b()\n")).with_action(
        Behaviour("b", (), "", body="a()\n"))
    with pytest.raises(ValidationError, match="cycle"):
        expand([Call("a")], loop)
    wide = SANDBOX_SPACE.with_action(Behaviour("w1", (), "", body="go_home()\n" * 50))
    for i in range(2, 4):
        wide = wide.with_action(Behaviour(f"w{i}", (), "", body=f"w{i - 1}()\n" * 50))
    with pytest.raises(ValidationError, match="more than 2000 skill calls"):
        expand([Call("w3")], wide)


def test_the_session_refuses_a_ninth_level_and_a_cycle(fresh: TabletopEnv, tmp_path) -> None:
    with SkillLibrary.open(tmp_path / "lib.db") as lib:
        for b in chain(MAX_COMPOSITION_DEPTH):
            lib.add_behaviour(b.name, [], b.doc, b.body, calls=[b.body.split("(")[0]])
        answers = [{"unknown_behaviour": "b9", "objects": []}, calls((f"b{MAX_COMPOSITION_DEPTH}", {})),
                   {"name": "b9", "params": [], "doc": "Too deep."},
                   {"unknown_behaviour": "b1", "objects": []}]
        with SandboxSession(fresh, ScriptedLLM(answers), lib) as s:
            assert "b8" in s.space and not s.notes
            s.say("do b9")
            assert s.say("do b8").kind == "plan" and s.confirm().execution.ok
            refused = s.say("done")
            assert refused.kind == "error" and "composition depth 9" in refused.say
            assert "b9" not in s.space and lib.get("b9") is None
            # re-teaching b1 to call b8 would close a cycle: the library refuses it
            with pytest.raises(Exception, match="cycle"):
                lib.add_behaviour("b1", [], "", "b8()\n", calls=["b8"])


def test_a_demonstrated_skill_reaches_a_new_goal_within_1_cm(fresh: TabletopEnv) -> None:
    ball = np.array(object_position(fresh, "ball"))
    skill = learn_from_demo(fresh, "hover", [ball + np.array((0.0, 0.0, 0.25)), ball + np.array((0.05, 0.0, 0.12))])
    assert skill.reference == "ball"
    np.testing.assert_allclose(skill.offset, (0.05, 0.0, 0.12), atol=0.01)
    restored = DemoSkill.from_weights("hover", skill.doc, skill.to_weights())
    assert restored == skill
    fresh.go_home()
    for target in ("duck", "cube"):
        result = restored.run(fresh, target)
        goal = np.array(object_position(fresh, target)) + skill.offset
        assert result.ok, result.reason
        assert np.linalg.norm(np.array(fresh.ee_pose()[0]) - goal) < 0.01
        assert np.linalg.norm(goal - (ball + skill.offset)) > 0.1  # a new goal, not the demonstrated one


def test_skills_stored_before_gripper_events_still_load_and_bad_events_are_refused(fresh: TabletopEnv) -> None:
    ball = np.array(object_position(fresh, "ball"))
    above = [tuple(ball + np.array((0.0, 0.0, height))) for height in (0.2, 0.1)]
    skill = learn_from_demo(fresh, "hover", above)
    version_1 = {k: v for k, v in skill.to_weights().items() if k != "events"} | {"format": "situated-demo-skill/1"}
    assert DemoSkill.from_weights("hover", skill.doc, version_1) == skill and skill.events == ()
    for events, problem in (([[0.5, "wave"]], r"events\[0\]"), ([[1.5, "close"]], r"events\[0\]"),
                            ([[0.6, "close"], [0.4, "open"]], "must not decrease"), ("close", "list")):
        with pytest.raises(DataError, match=problem):
            DemoSkill.from_weights("hover", "", skill.to_weights() | {"events": events}, source="skill hover")


def test_a_demonstrated_skill_joins_the_api_and_the_library(fresh: TabletopEnv, tmp_path) -> None:
    ball = np.array(object_position(fresh, "ball"))
    answers = [calls(("hover", {"target": "duck"}))]
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, ScriptedLLM(answers), lib) as s:
        taught = s.demo("hover", [tuple(ball + np.array((0, 0, 0.25))), tuple(ball + np.array((0, 0, 0.12)))])
        assert taught.kind == "taught" and taught.taught.text.startswith("hover(target)")
        assert s.space.get("hover").params == (Param("target", doc="an object or a taught place"),)
        assert lib.get("hover").weights["format"] == "situated-demo-skill/2"
        plan = s.say("hover over the duck")
        assert plan.plan.text == "hover('duck')\n"
        assert s.confirm().execution.ok
        assert s.demo("pickup", [tuple(ball + np.array((0, 0, 0.2)))]).kind == "error"  # a seed skill's name


def test_reserved_words_are_never_taught_as_behaviours(fresh: TabletopEnv, tmp_path) -> None:
    answers = [{"unknown_behaviour": "exec", "objects": []}, {"unknown_behaviour": "import", "objects": []}]
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, ScriptedLLM(answers), lib) as s:
        for text in ("call exec", "import os"):
            reply = s.say(text)
            assert reply.kind == "error" and "reserved" in reply.say and s.teaching is None
        assert s.teach("ball").kind == "error" and s.teach("Pack Up").kind == "error"
        assert lib.behaviours() == []

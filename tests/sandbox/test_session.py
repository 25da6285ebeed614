"""A sandbox session as a user (or a web page) drives it: plans shown as calls, confirmed, cancelled or corrected;
per-skill outcomes and failures; objects taught by pointing at a pixel; everything logged and measured; a new
session on the same library gets every lesson back. The model is scripted (exact answers); the recorded real
model drives the scripted gift-bag sessions in tests/cli/test_sandbox.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fakes import ScriptedLLM, answer_calls
from situated.actions import Behaviour
from situated.errors import ParseError

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from situated.envs.tabletop import TabletopEnv
from situated.sandbox import SkillLibrary
from situated.sandbox.motions import object_position
from situated.sandbox.script import parse_line, read_script, run_script
from situated.sandbox.session import SandboxSession, parse_condition


def calls(*items: tuple[str, dict[str, str]]) -> dict:
    return {"calls": answer_calls(items)}



def kinds(lib: SkillLibrary, session: int) -> list[str]:
    return [e.kind for e in lib.events(session)]


def test_a_plan_is_shown_confirmed_and_reported_skill_by_skill(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([calls(("pickup", {"obj": "candy"}), ("goto", {"obj": "tray"}), ("release", {}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib, scene="gift_bag") as s:
        reply = s.say("put the candie on the tree")
        assert reply.kind == "plan" and s.mode == "confirm"
        assert reply.plan.text == "pickup('candy')\ngoto('tray')\nrelease()\n"
        assert fresh.holds(parse_condition("'candy' on 'table'"))  # nothing moved before the confirmation
        done = s.confirm()
        assert done.kind == "executed" and done.execution.ok and s.mode == "ready"
        assert [c.call for c in done.execution.calls] == ["pickup('candy')", "goto('tray')", "release()"]
        assert "+ candy INSIDE tray" in done.execution.calls[2].skills[0].changes
        assert s.check("'candy' in 'tray'") and not s.check("'candy' in 'gift_bag'")
        json.dumps(done.to_dict())  # what a web page receives
        assert kinds(lib, s.session_id) == ["utterance", "model_call", "plan", "confirmation", "execution",
                                            "expectation", "expectation"]
        m = s.metrics()
        assert (m.confirmations, m.skills, m.skill_failures, m.expectations, m.met) == (1, 3, 0, 2, 1)


def test_cancel_and_correct_are_supervision_and_leave_the_memory_clean(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([calls(("pickup", {"obj": "ball"})), calls(("pickup", {"obj": "duck"})),
                      calls(("goto", {"obj": "tray"})), calls(("go_home", {}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("pick up the duk")
        corrected = s.correct("no, the duck")
        assert corrected.plan.text == "pickup('duck')\n"
        assert llm.calls[1]["messages"][-1]["content"].endswith("\nRequest: pick up the duk. Correction: no, the duck")
        assert [e.utterance for e in s.memory.exchanges] == ["pick up the duk. Correction: no, the duck"]
        assert s.cancel().kind == "cancelled" and len(s.memory) == 0
        assert fresh.holds(parse_condition("'duck' on 'table'"))
        s.say("go to the tray")
        s.say("never mind that")  # a new utterance cancels the waiting plan
        m = s.metrics()
        assert (m.corrections, m.cancellations, m.confirmations, m.supervision) == (1, 2, 0, 3)
        s.cancel()
        assert s.confirm().kind == "error" and s.cancel().kind == "error"


def test_a_failed_skill_stops_the_plan_and_is_counted(fresh: TabletopEnv, tmp_path) -> None:
    failing = calls(("grasp", {}), ("pickup", {"obj": "ball"}))
    llm = ScriptedLLM([failing, failing])  # asked again with the reason, the model insists
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        shown = s.say("grab")
        assert shown.plan.note.startswith("Careful: on a copy of the table, grasp: the gripper closed on nothing")
        assert "the gripper closed on nothing" in llm.calls[1]["messages"][-1]["content"]
        done = s.confirm()
        assert not done.execution.ok and "closed on nothing" in done.say
        first, second = done.execution.calls
        assert not first.ok and first.skills[0].reason.startswith("grasp:")
        assert not second.ran and second.skills == ()
        assert s.metrics().skill_failures == 1
        failure = next(e for e in lib.events(s.session_id) if e.kind == "skill_failure")
        assert failure.payload["skill"] == "grasp()"


def test_an_unknown_object_is_taught_by_pointing_and_the_utterance_planned_again(fresh: TabletopEnv,
                                                                                tmp_path) -> None:
    u, v = pixel_of(fresh, "toy_car")
    llm = ScriptedLLM([{"unknown_object": "racer"}, {"word": "racer", "is": "thing"}, {"word": "racer", "is": "thing"},
                       calls(("pickup", {"obj": "racer"}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        asked = s.say("pick up the racer")
        assert asked.kind == "unknown_object" and "point racer" in asked.say and s.mode == "point"
        assert s.point("racer", (0, 0)).kind == "error"  # the background
        replanned = s.point("racer", (u, v))
        assert replanned.kind == "plan" and replanned.taught.name == "racer"
        assert replanned.plan.text == "pickup('racer')\n"
        assert "RACER" in str(llm.calls[3]["schema"])
        assert "New object: RACER = auto()" in llm.calls[3]["messages"][-1]["content"]  # the prompt only grows
        assert s.confirm().execution.ok and s.check("'toy_car' in 'hands'")
        record = lib.get("racer")
        assert record.source == "pointed" and record.description.startswith("Pointed at")
        car = np.array(object_position(fresh, "toy_car"))
        assert np.linalg.norm(np.array(record.position[:2]) - car[:2]) < 0.06  # lifted from the depth image
        assert [e.utterance for e in s.memory.exchanges] == ["pick up the racer"]


def pixel_of(env: TabletopEnv, name: str) -> tuple[int, int]:
    seg = env.observe().segmentation
    uid = env.world.bodies[name].uid
    rows, cols = np.nonzero(seg == uid)
    k = len(rows) // 2
    return int(cols[k]), int(rows[k])


def test_a_new_session_on_the_same_library_has_every_lesson_back(fresh: TabletopEnv, tmp_path) -> None:
    u, v = pixel_of(fresh, "duck")
    ball = np.array(object_position(fresh, "ball"))
    teach = [{"unknown_behaviour": "pack", "objects": ["BALL"]}, calls(("pickup", {"obj": "ball"})),
             calls(("goto", {"obj": "gift_bag"})), calls(("release", {})),
             {"name": "pack", "params": ["obj"], "doc": "Put an object into the gift bag."}]
    with SkillLibrary.open(tmp_path / "lib.db") as lib:
        with SandboxSession(fresh, ScriptedLLM(teach), lib) as s:
            for text in ("pack the ball", "pick up the ball", "go to the gift bag", "release"):
                if s.say(text).kind == "plan":
                    s.confirm()
            s.say("that's it")
            s.point("rubber_duck", (u, v))
            s.demo("hover", [tuple(ball + np.array((0, 0, 0.25))), tuple(ball + np.array((0, 0, 0.12)))])
        fresh.reset()
        for name in [*fresh.aliases, *fresh.locations]:
            fresh.forget(name)
    later = ScriptedLLM([calls(("pack", {"obj": "rubber_duck"}), ("hover", {"target": "candy"}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, later, lib) as s:
        assert not s.notes
        assert {"pack", "hover"} <= set(s.space.names) and "rubber_duck" in {o.name for o in s.objects}
        plan = s.say("pack the rubber duck and hover over the candy")
        assert plan.plan.text == "pack('rubber_duck')\nhover('candy')\n"
        assert "def pack" not in plan.plan.expanded and "# pack('rubber_duck')" in plan.plan.expanded
        assert s.confirm().execution.ok
        assert s.check("'duck' in 'gift_bag'")
        assert [r.id for r in lib.sessions()] == [1, 2]


def test_undo_goes_back_a_version_and_refuses_while_others_depend(fresh: TabletopEnv, tmp_path) -> None:
    with SkillLibrary.open(tmp_path / "lib.db") as lib:
        lib.add_behaviour("pack", ["obj"], "v1", "pickup(obj)\ngoto('gift_bag')\nrelease()\n",
                          calls=["pickup", "goto", "release"])
        lib.add_behaviour("pack", ["obj"], "v2", "pickup(obj)\ngoto('tray')\nrelease()\n",
                          calls=["pickup", "goto", "release"])
        lib.add_behaviour("gift", [], "", "pack('duck')\n", calls=["pack"])
        with SandboxSession(fresh, ScriptedLLM([]), lib) as s:
            assert s.space.get("pack").doc == "v2"
            assert s.undo("pack").kind == "error"  # gift calls it
            assert s.undo("gift").kind == "undone" and "gift" not in s.space
            assert s.undo("pack").kind == "undone" and s.space.get("pack").doc == "v1"
            assert s.undo("pack").kind == "undone" and "pack" not in s.space
            assert s.undo("pack").kind == "error"


def test_a_broken_behaviour_in_the_library_is_skipped_with_a_note(fresh: TabletopEnv, tmp_path) -> None:
    with SkillLibrary.open(tmp_path / "lib.db") as lib:
        lib.add_behaviour("sneaky", [], "", "import os\n", calls=[])
        lib.add_behaviour("lost", [], "", "teleport('ball')\n", calls=["teleport"])
        with SandboxSession(fresh, ScriptedLLM([]), lib) as s:
            assert "sneaky" not in s.space and "lost" not in s.space
            assert any("sneaky" in n and "import" in n for n in s.notes)
            assert any("lost" in n and "teleport" in n for n in s.notes)


def test_a_script_runs_confirming_every_plan(fresh: TabletopEnv, tmp_path) -> None:
    script = tmp_path / "s.session"
    script.write_text("# situated-session/1\nuser: put the cube on the tray\nexpect: 'cube' in 'tray'\n"
                      "reset\nexpect: 'cube' in 'tray'\n")
    llm = ScriptedLLM([calls(("pickup", {"obj": "cube"}), ("goto", {"obj": "tray"}), ("release", {}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        result = run_script(s, read_script(script))
    assert result.to_dict() == {"utterances": 1, "expectations": 2, "met": 1, "taught": [], "skill_failures": 0,
                                "confirmations": 1}
    assert result.unmet == ["line 5: 'cube' in 'tray'"]


@pytest.mark.parametrize(("line", "problem"), [
    ("usr: hello", "unknown statement 'usr:'"), ("user:", "needs a text"), ("expect: 'ball' inside 'bag'", "expect:"),
    ("point marker 1.5 2", "whole numbers"), ("point Marker 1 2", "point NAME"), ("demo wave 0.1 0.2", "waypoint 1"),
    ("demo wave 0.1 0.2 nan", "finite"), ("reset now", "reset"), ("undo", "undo NAME"), ("user: a\x00b", "control"),
])
def test_bad_script_lines_name_file_and_line(line: str, problem: str) -> None:
    with pytest.raises(Exception) as err:
        parse_line(line, 7, "bags.session")
    assert str(err.value).startswith("bags.session:7: ") and problem in str(err.value)


def test_script_format_version_and_conditions() -> None:
    with pytest.raises(Exception, match="situated-session/2"):
        parse_line("# situated-session/2", 1, "x")
    assert parse_line("# situated-session/2", 3, "x") is None  # only the first line is a header
    demo = parse_line("demo tap ball 0.5 0.1 0.3 ; 0.5 0.1 0.2", 1, "x")
    assert demo.reference == "ball" and demo.waypoints == ((0.5, 0.1, 0.3), (0.5, 0.1, 0.2))
    assert parse_line("expect: not 'duck' in 'hands'", 1, "x").condition.negated
    with pytest.raises(ParseError):
        parse_condition("pickup('ball')")


def test_a_library_entry_named_like_a_basic_skill_is_skipped(fresh: TabletopEnv, tmp_path) -> None:
    with SkillLibrary.open(tmp_path / "lib.db") as lib:
        lib.add_behaviour("pickup", ["obj"], "", "goto(obj)\n", calls=["goto"])
        with SandboxSession(fresh, ScriptedLLM([]), lib) as s:
            assert not isinstance(s.space.get("pickup"), Behaviour)
            assert s.notes == ["pickup skipped: that is one of the basic skills"]

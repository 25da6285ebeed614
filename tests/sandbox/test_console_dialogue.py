"""The one console dialogue: typed lines become session calls — confirmation words only while a plan waits,
information commands at any time, script statements, quit — and everything else goes to the robot as speech."""

from __future__ import annotations

import pytest

from fakes import ScriptedLLM, answer_calls

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from situated.envs.tabletop import TabletopEnv
from situated.errors import DataError
from situated.sandbox import SkillLibrary
from situated.sandbox.console import Dialogue
from situated.sandbox.session import SandboxSession


def plan(function: str, **args: str) -> dict:
    return {"goal": [], "calls": answer_calls([(function, args)])}


def test_typed_lines_drive_the_session(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([plan("pickup", obj="ball"), plan("pickup", obj="duck"), plan("pickup", obj="duck"),
                       plan("go_home")])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        dialogue = Dialogue(s)
        assert dialogue.greeting()[0].startswith("robot: Hello. You see:") and dialogue.prompt() == "you> "
        assert dialogue.respond("y").replies[0].kind == "plan"  # no plan waits: "y" is said to the robot
        assert dialogue.prompt().startswith("confirm")
        assert dialogue.respond("api").lines[0].startswith("go_home()") and s.mode == "confirm"
        corrected = dialogue.respond("no wait, the duck")
        assert corrected.replies[0].plan.text == "pickup('duck')\n"
        assert dialogue.respond("n").replies[0].kind == "cancelled" and s.mode == "ready"
        dialogue.respond("take the duck")
        assert dialogue.respond("yes").replies[0].execution.ok and s.check("'duck' in 'hands'")
        assert dialogue.respond("reset").replies[0].kind == "reset" and s.check("not 'duck' in 'hands'")
        assert dialogue.respond("library").lines == ("the library is empty",)
        with pytest.raises(DataError, match="point NAME U V"):
            dialogue.respond("point racer 10")
        assert dialogue.respond("quit").quit and not dialogue.respond("   ").replies

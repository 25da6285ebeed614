"""An item corrected within the words ("picking up the banana — no wait, sorry, the bottle", a held-out session's
lesson step, was planned for the banana): where a request names two items and the calls act on one, the model
says which one the words mean in the end (`planners/item_meant.py`). The model is scripted (exact answers);
`benchmarks/sandbox_word_probe.py --only item` probes the real one."""

from __future__ import annotations

import pytest

from fakes import ScriptedLLM, answer_calls, answer_goal
from situated.planners.item_meant import ITEM
from situated.planners.toolcall import PlannedCalls
from situated.program import Call, Condition

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from situated.envs.tabletop import TabletopEnv
from situated.sandbox import SkillLibrary
from situated.sandbox.items_said import two_items
from situated.sandbox.session import SandboxSession
from situated.sandbox.table_copy import TableCopy

PICK_DUCK = {"goal": answer_goal([("duck", "gripper")]), "calls": answer_calls([("pickup", {"obj": "duck"})])}


@pytest.mark.parametrize(("meant", "held"), [("ball", "ball"), ("duck", "duck")])
def test_the_item_meant_in_the_end_is_the_one_picked_up(fresh: TabletopEnv, tmp_path, meant: str,
                                                        held: str) -> None:
    llm = ScriptedLLM([PICK_DUCK, {"item": meant}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        shown = s.say("pick up the duck, no wait, sorry, the ball")
        assert shown.plan.text == f"pickup('{held}')\n"
        assert s.confirm().execution.ok and s.check(f"'{held}' in 'hands'")
        asked = llm.calls[-1]
        assert asked["schema"]["properties"]["item"]["enum"] == ["ball", "duck"]


def test_nothing_is_asked_unless_two_items_are_named_and_the_calls_use_one(fresh: TabletopEnv) -> None:
    table = TableCopy.of_env(fresh)
    duck = PlannedCalls((Call("pickup", ("duck",)),), (Condition("holds", ("duck",)),))
    assert two_items(duck, "pick up the duck, no, the ball", table) == ("duck", "ball")
    assert two_items(duck, "pick up the duck", table) is None                              # one item named
    tuck = PlannedCalls((Call("tuck", ("ball",)),), ())
    assert two_items(tuck, "now tuck the boll", table) is None             # "tuck" is the verb, not the duck
    assert two_items(duck, "pick up the duck, the ball and the cube", table) is None       # three
    both = PlannedCalls((Call("pickup", ("duck",)), Call("goto", ("tray",)), Call("release"),
                         Call("pickup", ("ball",))), ())
    assert two_items(both, "put the duck in the tray and pick up the ball", table) is None  # both used
    table.held, table.where = "ball", {k: v for k, v in table.where.items() if k != "ball"}
    assert two_items(duck, "drop the ball, then pick up the duck", table) is None           # the other is held


def test_the_item_question_shows_worked_examples() -> None:
    messages = ITEM.messages("the banana, no, the apple", ("apple", "banana"))
    assert messages[-1] == {"role": "user", "content": "The person says: the banana, no, the apple\nItems: apple or "
                                                       "banana"}
    assert sum(m["role"] == "assistant" for m in messages) >= 5

"""Calls nobody asked for, as a user notices them: a taught behaviour planned again for an item where it already
is (the gift bag, which the arm cannot reach into) is left out, and words that only talk planned with calls on an
item nothing said points to move nothing. Measured on a held-out session (now development data): "actually, wrap
that one too" was planned wrap('duck'), wrap('toy_car') with the duck in the bag, and the pickup of the duck
failed; "Good morning. I do hope you still remember how to wrap things", a new process's first words, was planned
wrap('candy'). The model is scripted (exact answers); what the real model does is measured by `situated eval
sandbox`."""

from __future__ import annotations

import pytest

from fakes import ScriptedLLM, answer_calls, answer_goal

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from situated.envs.tabletop import TabletopEnv
from situated.sandbox import SkillLibrary
from situated.sandbox.session import SandboxSession

WRAP_BODY = "pickup(item)\ngoto('gift_bag')\nrelease()"


def wrap(*items: str) -> dict:
    return {"goal": answer_goal([(i, "gift_bag") for i in items]),
            "calls": answer_calls([("wrap", {"item": i}) for i in items])}


def test_a_taught_call_that_would_change_nothing_is_left_out(fresh: TabletopEnv, tmp_path) -> None:
    put_car = {"goal": answer_goal([("toy_car", "tray")]),
               "calls": answer_calls([("pickup", {"obj": "toy_car"}), ("goto", {"obj": "tray"}), ("release", {})])}
    # the goal restates the last two requests' (the duck in the bag, the toy car on the tray): all so already
    stale = {"goal": answer_goal([("duck", "gift_bag"), ("toy_car", "tray")]),
             "calls": answer_calls([("wrap", {"item": "duck"}), ("wrap", {"item": "toy_car"})])}
    llm = ScriptedLLM([wrap("duck"), put_car, stale])
    with SkillLibrary.open(tmp_path / "lib.db") as lib:
        lib.add_behaviour("wrap", ["item"], "Put the item in the gift bag.", WRAP_BODY, ["pickup", "goto", "release"])
        with SandboxSession(fresh, llm, lib) as s:
            for words in ("wrap the duck", "grab the toy car and put it on the tray"):
                assert s.say(words).kind == "plan" and s.confirm().execution.ok
            reply = s.say("actually, wrap that one too")
            assert reply.kind == "plan" and reply.plan.text.startswith("wrap('toy_car')"), reply.say
            assert "duck is in the gift bag already" in reply.say
            run = s.confirm()
            assert run.execution.ok and run.say == "Done."
            assert s.check("'toy_car' in 'gift_bag'") and s.check("'duck' in 'gift_bag'")


def test_talk_planned_with_calls_on_an_item_nothing_points_to_moves_nothing(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([wrap("candy"), {"is": "talk"}, wrap("ball")])
    with SkillLibrary.open(tmp_path / "lib.db") as lib:
        lib.add_behaviour("wrap", ["item"], "Put the item in the gift bag.", WRAP_BODY, ["pickup", "goto", "release"])
        with SandboxSession(fresh, llm, lib) as s:
            reply = s.say("Morning! I trust you haven't forgotten how to wrap things.")
            assert reply.kind == "notice" and s.pending is None, reply.say
            assert s.check("'candy' on 'table'")
            # a request that names its item is not asked about, and runs
            reply = s.say("wrap the ball, please")
            assert reply.kind == "plan" and s.confirm().execution.ok and s.check("'ball' in 'gift_bag'")
            assert s.check("'candy' on 'table'")


def test_a_request_read_as_a_request_keeps_its_calls(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([wrap("candy"), {"is": "request"}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib:
        lib.add_behaviour("wrap", ["item"], "Put the item in the gift bag.", WRAP_BODY, ["pickup", "goto", "release"])
        with SandboxSession(fresh, llm, lib) as s:
            reply = s.say("wrap something for me")
            assert reply.kind == "plan" and reply.plan.text.startswith("wrap('candy')"), reply.say


def test_a_taught_call_that_would_change_nothing_is_planned_for_the_item_the_request_names(
        fresh: TabletopEnv, tmp_path) -> None:
    # measured on a held-out session: "Dish up the banana, and the apple after it" planned with the pear, on the
    # plate already, for the apple
    llm = ScriptedLLM([wrap("duck"), wrap("ball", "duck")])
    with SkillLibrary.open(tmp_path / "lib.db") as lib:
        lib.add_behaviour("wrap", ["item"], "Put the item in the gift bag.", WRAP_BODY, ["pickup", "goto", "release"])
        with SandboxSession(fresh, llm, lib) as s:
            assert s.say("wrap the duck").kind == "plan" and s.confirm().execution.ok
            reply = s.say("wrap the ball, and the cube after it")
            assert reply.kind == "plan" and reply.plan.text.startswith("wrap('ball')\nwrap('cube')"), reply.say
            assert "you named the cube" in reply.say
            assert s.confirm().say == "Done."
            assert all(s.check(f"'{i}' in 'gift_bag'") for i in ("duck", "ball", "cube"))
            assert s.check("'candy' on 'table'")

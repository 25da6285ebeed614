"""The robot understands what is asked, as a user notices it: it plans from what the gripper holds, a plan that
would fail is fixed on a private copy of the table before it is shown, "Done." means the request's goal holds,
the table is a place, and a lesson keeps the object it was asked about as its parameter even when a shown step
failed. The model is scripted (exact answers); what the real model does is measured by `situated eval sandbox`."""

from __future__ import annotations

import pytest

from fakes import ScriptedLLM
from fakes import answer_plan as answer
from situated.actions import SANDBOX_SPACE, Param, Primitive
from situated.program import Call, Condition

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from situated.envs.tabletop import TabletopEnv
from situated.sandbox import SkillLibrary
from situated.sandbox.checking import search, try_plan
from situated.sandbox.session import SandboxSession
from situated.sandbox.table_copy import TableCopy


def done(session: SandboxSession, *utterances: str) -> None:
    """Say each utterance and run its plan."""
    for text in utterances:
        session.say(text)
        session.confirm()




def test_the_robot_state_reaches_the_prompt_each_turn_and_the_prompt_only_grows(fresh: TabletopEnv,
                                                                               tmp_path) -> None:
    llm = ScriptedLLM([answer([("ball", "gripper")], ("pickup", {"obj": "ball"})),
                       answer([("ball", "gift_bag")], ("goto", {"obj": "gift_bag"}), ("release", {}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("pick up the ball")
        first = llm.calls[0]["messages"]
        assert "State: the gripper holds nothing." in first[-1]["content"]
        assert first[-1]["content"].endswith("\nRequest: pick up the ball")
        s.confirm()
        s.say("put it in the gift bag")
        second = llm.calls[1]["messages"]
        assert "State: the gripper holds BALL." in second[-1]["content"]
        assert second[:len(first) - 1] == first[:-1]  # append-only: the first turn's prompt is a prefix
        assert second[len(first) - 1] == first[-1]
        assert s.confirm().say == "Done." and s.check("'ball' in 'gift_bag'")


def test_during_a_lesson_the_prompt_says_what_is_being_taught_and_about_which_object(fresh: TabletopEnv,
                                                                                    tmp_path) -> None:
    # "stash the duck", then "grab it": the model had taken "it" for the scene's first item (probe: 0 of 12)
    llm = ScriptedLLM([{"unknown_behaviour": "stash", "objects": ["DUCK"]},
                       answer([("duck", "gripper")], ("pickup", {"obj": "duck"}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        assert s.say("stash the duck").kind == "teach"
        assert "Lesson:" not in llm.calls[0]["messages"][-1]["content"]
        s.say("grab it")
        turn = llm.calls[1]["messages"][-1]["content"]
        assert "Lesson: the person is showing how to stash DUCK, one step at a time." in turn
        assert turn.endswith("\nRequest: grab it")


def test_an_item_the_request_does_not_name_is_left_out_of_the_plan(fresh: TabletopEnv, tmp_path) -> None:
    # seen: "then put the candy in the gift bag" (during a lesson about the ball) planned with the ball too
    both = answer([("candy", "gift_bag"), ("ball", "gift_bag")], ("pickup", {"obj": "candy"}),
                  ("goto", {"obj": "gift_bag"}), ("release", {}), ("pickup", {"obj": "ball"}),
                  ("goto", {"obj": "gift_bag"}), ("release", {}))
    llm = ScriptedLLM([both, answer([("duck", "gripper")], ("pickup", {"obj": "duck"})),
                       answer([("duck", "tray")], ("goto", {"obj": "tray"}), ("release", {}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        shown = s.say("then put the candy in the gift bag")
        assert shown.plan.text == "pickup('candy')\ngoto('gift_bag')\nrelease()\n"
        assert "I left out the ball" in shown.say
        assert s.confirm().say == "Done." and not s.check("'ball' in 'gift_bag'")
        s.say("pick up the duck")
        s.confirm()
        shown = s.say("put it in the tray")  # names no item: the pronoun is the model's to resolve
        assert shown.plan.text == "goto('tray')\nrelease()\n" and "left out" not in shown.say


def test_a_failing_step_is_replanned_on_the_private_copy_before_the_person_sees_the_plan(fresh: TabletopEnv,
                                                                                         tmp_path) -> None:
    # the case: the item is already in the hand, and the model plans goto(container); grasp()
    llm = ScriptedLLM([answer([("candy", "gripper")], ("pickup", {"obj": "candy"})),
                       answer([("candy", "gift_bag")], ("goto", {"obj": "gift_bag"}), ("grasp", {}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("grab the candy")
        s.confirm()
        shown = s.say("put the candy in the gift bag")
        assert shown.kind == "plan" and shown.plan.text == "goto('gift_bag')\nrelease()\n"
        assert "already holding 'candy'" in shown.say
        assert s.check("'candy' in 'hands'")  # nothing ran before the confirmation
        done = s.confirm()
        assert done.execution.ok and done.say == "Done." and s.check("'candy' in 'gift_bag'")
        assert done.execution.failures == 0
        # the memory keeps the plan that ran, so the model sees a right answer for that request
        assert s.memory.exchanges[-1].answer["calls"] == ["goto(GIFT_BAG)", "release()"]


def test_without_a_goal_the_model_rewrites_a_failing_plan_with_the_reason(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([answer([], ("grasp", {})), answer([], ("pickup", {"obj": "duck"}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        shown = s.say("grab the duck")
        assert shown.plan.text == "pickup('duck')\n"
        assert "the gripper closed on nothing" in llm.calls[1]["messages"][-1]["content"]
        assert s.metrics().model_calls == 2


def test_a_plan_that_changes_nothing_asked_for_is_not_done(fresh: TabletopEnv, tmp_path) -> None:
    # a lesson that only moved the arm; using it later on an item changes nothing on the table
    llm = ScriptedLLM([{"unknown_behaviour": "tidy", "objects": ["DUCK"]}, answer([], ("goto", {"obj": "tray"})),
                       {"name": "tidy", "params": [], "doc": "Move over the tray."},
                       {"calls": ["tidy()"]},
                       answer([("cube", "tray")], ("pickup", {"obj": "cube"})),
                       answer([("ball", "gripper")], ("pickup", {"obj": "ball"})),
                       answer([("ball", "gift_bag")], ("goto", {"obj": "gift_bag"})),
                       answer([("ball", "gripper")], ("goto", {"obj": "gift_bag"}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("tidy the duck")
        s.say("go to the tray")
        s.confirm()
        taught = s.say("that's it")
        assert taught.kind == "taught"
        s.say("tidy the duck")
        ran = s.confirm()
        assert ran.execution.ok and ran.say == "I ran the plan, but nothing on the table changed."
        # calls that stop short of a goal the person said (the item and where it goes) are finished by the search
        shown = s.say("put the cube in the tray")
        assert shown.plan.text == "pickup('cube')\ngoto('tray')\nrelease()\n" and "I added" in shown.say
        assert len(llm.calls) == 5
        s.confirm()
        s.say("pick up the ball")   # a goal about an item only held goes back to the model with what it would leave
        s.confirm()
        shown = s.say("go to the gift bag")
        assert "leave BALL in the GRIPPER" in llm.calls[-1]["messages"][-1]["content"]
        assert shown.plan.text == "goto('gift_bag')\n"


def test_a_goal_the_request_did_not_ask_for_is_not_reached_by_added_steps(fresh: TabletopEnv, tmp_path) -> None:
    # "go to the tray" with the duck in hand: the model's goal says more than its calls; asked again, it keeps
    # the calls and states the goal they reach, so nothing is dropped that the person did not ask to drop
    llm = ScriptedLLM([answer([("duck", "gripper")], ("pickup", {"obj": "duck"})),
                       answer([("duck", "tray")], ("goto", {"obj": "tray"})),
                       answer([("duck", "gripper")], ("goto", {"obj": "tray"}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("grab the duck")
        s.confirm()
        shown = s.say("go to the tray")
        assert shown.plan.text == "goto('tray')\n"
        assert s.confirm().say == "Done." and s.check("'duck' in 'hands'")


def test_a_taught_behaviour_is_kept_when_the_models_goal_for_it_disagrees(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([{"unknown_behaviour": "bag", "objects": ["DUCK"]},
                       answer([("duck", "gift_bag")], ("pickup", {"obj": "duck"}), ("goto", {"obj": "gift_bag"}),
                              ("release", {})),
                       {"name": "bag", "params": ["item"], "doc": "Put the item in the gift bag."},
                       answer([("cube", "tray")], ("bag", {"item": "cube"}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("bag the duck")
        s.say("pick up the duck and put it in the gift bag")
        s.confirm()
        s.say("that's it")
        shown = s.say("bag the cube")
        assert shown.plan.text.startswith("bag('cube')") and shown.plan.goal == (
            Condition("inside", ("cube", "gift_bag")),)
        assert s.confirm().say == "Done." and s.check("'cube' in 'gift_bag'")
        # the behaviour is shown to the model with its steps, as it will be after a library reload
        prompt = "\n".join(m["content"] for m in llm.calls[-1]["messages"])
        assert "Steps: pickup(item); goto(GIFT_BAG); release()." in prompt


def test_a_taught_call_does_not_excuse_the_rest_of_the_request(fresh: TabletopEnv, tmp_path) -> None:
    # "bag the cube and then put the ball in the tray" planned bag(CUBE), goto(TRAY), release(): the taught call's
    # effect stands for the cube, but the ball, said with the tray, must still get there (it had been dropped)
    bag = [{"unknown_behaviour": "bag", "objects": ["DUCK"]},
           answer([("duck", "gift_bag")], ("pickup", {"obj": "duck"}), ("goto", {"obj": "gift_bag"}),
                  ("release", {})),
           {"name": "bag", "params": ["item"], "doc": "Put the item in the gift bag."}]
    both = [("cube", "gift_bag"), ("ball", "tray")]
    llm = ScriptedLLM([*bag, answer(both, ("bag", {"item": "cube"}), ("goto", {"obj": "tray"}), ("release", {}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        done(s, "bag the duck", "pick up the duck and put it in the gift bag")
        s.say("that's it")
        shown = s.say("bag the cube and then put the ball in the tray")
        assert shown.plan.text.startswith("bag('cube')\npickup('ball')"), shown.plan.text
        assert s.confirm().say == "Done."
        assert s.check("'cube' in 'gift_bag'") and s.check("'ball' in 'tray'")
    # the control: a goal pair about an item the request never names is still the model's guess, and the taught
    # call stands alone
    llm = ScriptedLLM([answer([("cube", "tray"), ("candy", "tray")], ("bag", {"item": "cube"}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        fresh.reset()
        shown = s.say("bag the cube, thanks")
        assert shown.plan.text == "bag('cube')\n"
        assert s.confirm().say == "Done." and s.check("'cube' in 'gift_bag'") and s.check("'candy' on 'table'")


def test_done_is_said_only_when_the_goal_holds_after_the_run(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([answer([("ball", "gift_bag")], ("pickup", {"obj": "ball"}), ("goto", {"obj": "gift_bag"}),
                              ("release", {}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("put the ball in the gift bag")
        fresh.slip_probability = 1.0  # the grasp slips on the arm, though the copy could not know it
        try:
            ran = s.confirm()
        finally:
            fresh.slip_probability = 0.0
        assert ran.say.startswith("That did not work: pickup: the ball slipped")
        assert "failed: pickup: the ball slipped" in s.state().text()  # the planner hears it next turn


def test_the_table_is_a_place(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([answer([("duck", "table")], ("pickup", {"obj": "duck"}), ("goto", {"obj": "table"}),
                              ("release", {})),
                       {"unknown_behaviour": "wipe", "objects": ["TABLE"]}, {"word": "table", "is": "thing"},
                       answer([], ("goto", {"obj": "table"}))])  # asked again (the table is named): no goal
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        assert any(o.name == "table" and o.kind == "place" for o in s.objects)
        fresh.step(Call("pickup", ("duck",)))
        fresh.step(Call("goto", ("tray",)))
        fresh.step(Call("release"))
        assert s.check("'duck' in 'tray'")
        s.say("put the duck back on the table")
        assert s.confirm().say == "Done." and s.check("'duck' on 'table'")
        asked = s.say("wipe the table")
        assert asked.kind == "teach" and s.teaching.objects == ("table",)


def test_a_lesson_whose_step_failed_once_keeps_its_parameter(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([{"unknown_behaviour": "wrap", "objects": ["CUBE"]},
                       answer([], ("grasp", {})), answer([], ("grasp", {})),      # fails, even when asked again
                       answer([("cube", "gripper")], ("pickup", {"obj": "cube"})),
                       answer([], ("goto", {"obj": "gift_bag"})), answer([], ("release", {})),
                       {"name": "wrap", "params": ["item"], "doc": "Put the item in the gift bag."},
                       {"calls": ["wrap(DUCK)"]}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        assert s.say("wrap the cube").kind == "teach"
        s.say("close the gripper")
        # a lesson's steps are made of what the robot knows: no unknown-behaviour answer while it is shown
        assert [sorted(f["properties"]) for f in llm.calls[1]["schema"]["anyOf"]] == [["calls", "goal"],
                                                                                    ["unknown_object"]]
        assert not s.confirm().execution.ok
        for text in ("grab the cube", "move to the gift bag", "open the gripper"):
            s.say(text)
            assert s.confirm().execution.ok
        taught = s.say("that's it")
        assert taught.kind == "taught" and "may not work" not in taught.say
        assert lib.get("wrap").params == ("item",)
        assert lib.get("wrap").body == "pickup(item)\ngoto('gift_bag')\nrelease()\n"  # the failed grasp is gone
        s.say("wrap the duck")
        assert s.confirm().say == "Done." and s.check("'duck' in 'gift_bag'")


def test_a_lesson_shown_on_a_stand_in_object_still_takes_the_named_one(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([{"unknown_behaviour": "stash", "objects": ["BALL"]},
                       answer([("candy", "tray")], ("pickup", {"obj": "candy"}), ("goto", {"obj": "tray"}),
                              ("release", {})),
                       {"name": "stash", "params": ["item"], "doc": "Put the item in the tray."}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("stash the ball")
        s.say("put the candy in the tray")
        s.confirm()
        assert s.say("that's it").kind == "taught"
        assert lib.get("stash").params == ("item",) and "pickup(item)" in lib.get("stash").body


def test_a_lesson_shown_with_the_item_already_in_hand_picks_it_up_first(fresh: TabletopEnv, tmp_path) -> None:
    # the case: shown as goto(container); release() while the ball was in the hand
    llm = ScriptedLLM([answer([("ball", "gripper")], ("pickup", {"obj": "ball"})),
                       {"unknown_behaviour": "drop_off", "objects": ["BALL"]},
                       answer([("ball", "gift_bag")], ("goto", {"obj": "gift_bag"}), ("release", {})),
                       {"name": "drop_off", "params": ["item"], "doc": "Put the item in the gift bag."}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("pick up the ball")
        s.confirm()
        s.say("drop off the ball")
        s.say("put it in the gift bag")
        s.confirm()
        taught = s.say("that's it")
        assert "may not work" not in taught.say
        assert lib.get("drop_off").body == "pickup(item)\ngoto('gift_bag')\nrelease()\n"


def test_a_grasp_over_the_named_object_becomes_its_pickup(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([answer([], ("goto", {"obj": "duck"})), {"unknown_behaviour": "stow", "objects": ["DUCK"]},
                       answer([("duck", "gripper")], ("grasp", {})),
                       answer([("duck", "tray")], ("goto", {"obj": "tray"}), ("release", {})),
                       {"name": "stow", "params": ["toy"], "doc": "Put the toy in the tray."}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("go to the duck")
        s.confirm()
        s.say("stow the duck")
        s.say("close the gripper on it")
        assert s.confirm().execution.ok
        s.say("put it in the tray")
        s.confirm()
        taught = s.say("that's it")
        assert lib.get("stow").body == "pickup(toy)\ngoto('tray')\nrelease()\n", taught.say


def test_calls_that_put_the_item_where_the_person_said_win_over_a_goal_naming_a_place_never_said(
        fresh: TabletopEnv, tmp_path) -> None:
    # "set it down in the tray": the calls go to the tray, the stated goal says the table, which nobody said
    put = (("goto", {"obj": "tray"}), ("release", {}))
    llm = ScriptedLLM([answer([("duck", "gripper")], ("pickup", {"obj": "duck"})),
                       answer([("duck", "table")], *put),
                       answer([("cube", "gripper")], ("pickup", {"obj": "cube"})),
                       answer([], ("goto", {"obj": "tray"})),
                       answer([("cube", "table")], ("release", {})),
                       answer([("ball", "gripper")], ("pickup", {"obj": "ball"})),
                       answer([("ball", "table")], *put),
                       answer([("candy", "gripper")], ("pickup", {"obj": "candy"})),
                       answer([], ("goto", {"obj": "gift_bag"})),
                       answer([("candy", "gripper")], ("release", {}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("grab the duck")
        s.confirm()
        shown = s.say("and now set it down in the tray")
        assert shown.plan.text == "goto('tray')\nrelease()\n" and shown.plan.goal == (
            Condition("inside", ("duck", "tray")),)
        assert s.confirm().say == "Done." and s.check("'duck' in 'tray'")
        # nobody named a place: "and let it go" over the tray is a release there, whatever goal was guessed
        done(s, "grab the cube", "move over to the tray")
        shown = s.say("and let it go")
        assert shown.plan.text == "release()\n"
        assert s.confirm().say == "Done." and s.check("'cube' in 'tray'")
        # the other way round: the person named the table, so the goal wins and the calls are planned again
        s.say("grab the ball")
        s.confirm()
        shown = s.say("put it back on the table")
        assert shown.plan.text == "release()\n" or "goto('table')" in shown.plan.text
        assert s.confirm().say == "Done." and s.check("'ball' on 'table'")
        # "let go of it" stated as holding the candy, which nobody named: a guess too, the release stands
        done(s, "grab the candy", "go to the gift bag")
        shown = s.say("let go of it")
        assert shown.plan.text == "release()\n" and not shown.say.startswith("Careful")
        assert s.confirm().say == "Done." and s.check("'candy' in 'gift_bag'")


def test_the_copy_fails_like_the_arm_and_search_finds_composed_steps(fresh: TabletopEnv) -> None:
    table = TableCopy.of_env(fresh)
    trial = try_plan([Call("goto", ("gift_bag",)), Call("grasp")], SANDBOX_SPACE, table)
    assert not trial.ok and trial.failed == "grasp(): the gripper closed on nothing"
    assert not try_plan([Call("pickup", ("tray",))], SANDBOX_SPACE, table).ok
    goal = (Condition("inside", ("candy", "gift_bag")), Condition("inside", ("duck", "tray")))
    found = search(goal, SANDBOX_SPACE, table)
    assert found is not None and try_plan(found, SANDBOX_SPACE, table, goal).achieves
    assert len(found) == 6 and table.where["candy"] == "table"  # the copy searched on is left as it was


def test_on_the_copy_an_item_lifted_out_of_a_container_falls_back_in_unless_moved_away(fresh: TabletopEnv) -> None:
    table = TableCopy.of_env(fresh)
    table.where["ball"] = "gift_bag"
    out = (Condition("on", ("ball", "table")),)
    # "take the ball out of the bag and put it on the table" answered without a goto: the ball drops back in
    assert try_plan([Call("pickup", ("ball",)), Call("release")], SANDBOX_SPACE, table, out).unmet == out
    assert try_plan([Call("pickup", ("ball",)), Call("goto", ("table",)), Call("release")], SANDBOX_SPACE, table,
                    out).achieves
    assert search(out, SANDBOX_SPACE, table) == (Call("pickup", ("ball",)), Call("goto", ("table",)),
                                                   Call("release"))


def test_on_the_copy_a_shown_motion_grasps_and_lets_go_as_its_demo_did(fresh: TabletopEnv) -> None:
    """A motion demonstrated with a close and an open ("bounce") fails on the copy when the gripper already holds
    something, as on the arm, so the model's "grasp(), bounce('ball')" is caught before the person sees it; alone
    it leaves the item where it was."""
    table = TableCopy.of_env(fresh, {"bounce": ["close", "open"], "knock": []})
    space = SANDBOX_SPACE.with_action(Primitive("bounce", (Param("target"),), "Bounce as shown."))
    held = try_plan([Call("pickup", ("ball",)), Call("bounce", ("ball",))], space, table)
    assert not held.ok and held.failed == "bounce('ball'): close the gripper: already holding 'ball'"
    alone = try_plan([Call("bounce", ("ball",))], space, table, (Condition("on", ("ball", "table")),))
    assert alone.achieves and table.held is None


def test_the_memory_drops_its_oldest_half_at_once_so_the_prompt_prefix_rarely_changes() -> None:
    from situated.planners.toolcall import MEMORY_LIMIT, Exchange, Memory

    memory = Memory()
    for k in range(MEMORY_LIMIT):
        memory.append(Exchange(f"say {k}", {}))
    assert len(memory) == MEMORY_LIMIT
    memory.append(Exchange("one more", {}))
    assert len(memory) == MEMORY_LIMIT // 2 and memory.exchanges[-1].utterance == "one more"
    memory.append(Exchange("and another", {}))
    assert memory.exchanges[0].utterance == f"say {MEMORY_LIMIT - MEMORY_LIMIT // 2 + 1}"  # nothing else dropped


def test_an_unknown_answer_that_copies_a_slip_of_a_known_name_is_asked_again(fresh: TabletopEnv,
                                                                               tmp_path) -> None:
    llm = ScriptedLLM([{"unknown_object": "trey"}, answer([("duck", "tray")], ("pickup", {"obj": "duck"}),
                                                         ("goto", {"obj": "tray"}), ("release", {})),
                       {"unknown_behaviour": "pick", "objects": ["CUBE"]}, answer([], ("pickup", {"obj": "cube"})),
                       {"unknown_object": "stapler"}, {"word": "stapler", "is": "thing"},
                       {"word": "stapler", "is": "thing"}, answer([], ("go_home", {})),
                       {"unknown_object": "stapler"}, {"unknown_behaviour": "stow", "objects": ["DUCK"]},
                       {"unknown_behaviour": "put", "objects": ["CANDY", "GIFT_BAG"]},
                       answer([("candy", "gift_bag")], ("pickup", {"obj": "candy"}), ("goto", {"obj": "gift_bag"}),
                              ("release", {}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        assert s.say("put the duck in the trey").plan.text == "pickup('duck')\ngoto('tray')\nrelease()\n"
        assert "unknown_object" not in str(llm.calls[1]["schema"])
        assert s.say("pick up the cube").plan.text == "pickup('cube')\n"
        assert s.say("go to the stapler").kind == "unknown_object"  # a thing the robot really does not know
        s.say("go home")  # the stapler was never pointed at: that answer leaves the memory
        assert all(e.utterance != "go to the stapler" for e in s.memory.exchanges)
        # an unknown object the request never names is the model's invention: asked again without that form
        assert s.say("stow the duck").kind == "teach" and s.teaching.name == "stow"
        s.say("never mind")
        # "put" is a verb the examples answer with calls: not an unknown behaviour
        assert s.say("put the candie in the gift back").plan.text == "pickup('candy')\ngoto('gift_bag')\nrelease()\n"
        assert "unknown_behaviour" not in str(llm.calls[-1]["schema"])


def test_a_rewrite_that_does_something_else_is_not_taken_and_added_steps_are_named(fresh: TabletopEnv,
                                                                                   tmp_path) -> None:
    # asked again, the model answers other calls that reach their own goal but not the request's: not taken;
    # the found steps complete the model's own calls and the person is told what was added
    llm = ScriptedLLM([answer([("duck", "gripper")], ("pickup", {"obj": "duck"})),
                       answer([("duck", "tray")], ("goto", {"obj": "tray"})),
                       answer([("duck", "gripper")], ("goto", {"obj": "duck"}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("grab the duck")
        s.confirm()
        shown = s.say("move it over the tray")
        assert shown.plan.text == "goto('tray')\nrelease()\n" and "I added release()" in shown.say


def test_a_taught_behaviour_used_with_a_full_hand_gets_the_hand_emptied_first(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([{"unknown_behaviour": "bag", "objects": ["DUCK"]},
                       answer([("duck", "gift_bag")], ("pickup", {"obj": "duck"}), ("goto", {"obj": "gift_bag"}),
                              ("release", {})),
                       {"name": "bag", "params": ["item"], "doc": "Put the item in the gift bag."},
                       answer([("cube", "gripper")], ("pickup", {"obj": "cube"})),
                       {"goal": [], "calls": ["bag(BALL)"]}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("bag the duck")
        s.say("put the duck in the gift bag")
        s.confirm()
        s.say("that's it")
        s.say("hold the cube")
        s.confirm()
        shown = s.say("bag the ball")  # the cube is still in the hand: bag's pickup would fail
        assert shown.plan.calls[-1] == Call("bag", ("ball",)) and "release" in shown.plan.text
        assert shown.plan.goal == (Condition("inside", ("ball", "gift_bag")),)
        assert s.confirm().say == "Done." and s.check("'ball' in 'gift_bag'")
        # found by search, no rewrite asked (5 calls and five side questions: the action word, the verb and the
        # first step of "bag the duck", the first words, the action word of "hold the cube", a lone pickup)
        assert s.metrics().model_calls == 10


def test_a_rewrite_is_not_taken_for_reaching_a_goal_that_held_before_anything_ran(fresh: TabletopEnv,
                                                                                  tmp_path) -> None:
    # seen on the 0.5B: "take the cube" with the goal "the cube on the table" (true already); asked again it
    # answered pickup('candy'), which leaves the cube there: that is no answer to the request. (Here the request
    # names the table, so the goal is not dismissed as a guess: `_said_where`.)
    llm = ScriptedLLM([answer([("cube", "table")], ("pickup", {"obj": "cube"})),
                       answer([("cube", "table")], ("pickup", {"obj": "candy"}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        shown = s.say("take the cube from the table")
        assert shown.plan.text == "pickup('cube')\n" and shown.say.startswith("Careful")
    # without the table in the words, the goal is the model's guess: the calls stand, with what they do as goal
    llm = ScriptedLLM([answer([("cube", "table")], ("pickup", {"obj": "cube"}))])
    with SkillLibrary.open(tmp_path / "lib2.db") as lib, SandboxSession(fresh, llm, lib) as s:
        shown = s.say("take the cube")
        assert shown.plan.text == "pickup('cube')\n" and shown.plan.goal == (Condition("holds", ("cube",)),)
        assert s.confirm().say == "Done."

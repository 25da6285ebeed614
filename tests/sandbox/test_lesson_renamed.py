"""A lesson the robot began on its own reading of a request ("stow the candy" read as a new verb) gives way when
the person, before any step, announces a lesson of another verb ("I'd like to teach you how to wrap something"):
the steps that follow are learnt as the announced verb, not the one the robot guessed. Measured on a held-out
session: wrap's four steps were saved as `place`, and every later "wrap the duck" was unknown. The model is
scripted (exact answers); `situated eval sandbox` measures the real one."""

from __future__ import annotations

from typing import Any

import pytest

from fakes import ScriptedLLM
from fakes import answer_plan as answer
from situated.planners.lesson_end import ANNOUNCE_SCHEMA

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from situated.envs.tabletop import TabletopEnv
from situated.sandbox import SkillLibrary
from situated.sandbox.session import SandboxSession

ANNOUNCE = "Thank you. I should now like to teach you how to wrap something."




def test_an_announced_lesson_of_another_verb_replaces_the_one_the_robot_guessed(fresh: TabletopEnv,
                                                                               tmp_path) -> None:
    llm = ScriptedLLM([{"unknown_behaviour": "stow", "objects": ["CANDY"]},
                       {"action": "wrap"}, {"is": "teach"},
                       {"unknown_behaviour": "wrap", "objects": []},
                       answer([("ball", "gripper")], ("pickup", {"obj": "ball"})),
                       answer([("ball", "gift_bag")], ("goto", {"obj": "gift_bag"}), ("release", {})),
                       {"name": "wrap", "params": ["thing"], "doc": "Put the thing in the gift bag."},
                       {"goal": [], "calls": ["wrap(DUCK)"]}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        assert s.say("stow the candy").kind == "teach" and s.teaching.name == "stow"
        begun = s.say(ANNOUNCE)
        assert begun.kind == "teach" and s.teaching is not None and s.teaching.name == "wrap"
        assert "wrap" in begun.say and not s.teaching.steps
        s.say("first pick up the ball")
        assert s.confirm().execution.ok
        s.say("then put it in the gift bag")
        assert s.confirm().execution.ok
        assert s.say("that's it").kind == "taught"
        assert lib.get("wrap") is not None and lib.get("stow") is None
        s.say("wrap the duck")
        assert s.confirm().execution.ok and s.check("'duck' in 'gift_bag'")
        assert not llm.answers


def test_words_the_model_reads_as_no_announcement_stay_a_step_of_the_lesson_begun(fresh: TabletopEnv,
                                                                                  tmp_path) -> None:
    llm = ScriptedLLM([{"unknown_behaviour": "stow", "objects": ["CANDY"]},
                       {"action": "wrap"}, {"is": "other"},
                       answer([("candy", "gripper")], ("pickup", {"obj": "candy"}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("stow the candy")
        shown = s.say("wrap your fingers around it first")
        assert shown.kind == "plan" and shown.plan.text == "pickup('candy')\n"
        assert s.teaching is not None and s.teaching.name == "stow"
        assert s.confirm().execution.ok and [c.action for c in s.teaching.steps] == ["pickup"]
        assert not llm.answers


def test_a_first_step_in_a_skills_words_asks_no_announcement(fresh: TabletopEnv, tmp_path) -> None:
    llm = ScriptedLLM([{"unknown_behaviour": "stow", "objects": ["CANDY"]},
                       {"action": "pick"},
                       answer([("candy", "gripper")], ("pickup", {"obj": "candy"}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("stow the candy")
        assert s.say("pick it up").kind == "plan" and s.teaching.name == "stow"
        assert not llm.answers and not [c for c in llm.side_calls if "is" in c["schema"].get("properties", {})
                                        and c["schema"]["properties"]["is"].get("enum") == ["teach", "other"]]


def _offers_unknown_object(call: dict) -> bool:
    return "unknown_object" in str(call["schema"])


def test_a_verb_read_as_one_the_skills_do_is_planned_with_calls_only(fresh: TabletopEnv, tmp_path) -> None:
    # measured on a held-out session: "Good afternoon. Would you be so kind as to place the candy into the gift
    # bag" — the verb question read `place` as put, but the plan asked again answered the unknown object `good`,
    # and a lesson of `place` began
    request = "Good afternoon. Would you be so kind as to place the candy into the gift bag, please?"
    llm = ScriptedLLM([{"unknown_behaviour": "place", "objects": ["CANDY", "GIFT_BAG"]}, {"is": "put"},
                       answer([("candy", "gift_bag")], ("pickup", {"obj": "candy"}), ("goto", {"obj": "gift_bag"}),
                              ("release", {}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        shown = s.say(request)
        assert shown.kind == "plan" and s.teaching is None
        assert s.confirm().execution.ok and s.check("'candy' in 'gift_bag'")
        plans = [c for c in llm.calls if "goal" in str(c["schema"])]
        assert _offers_unknown_object(plans[0]) and not _offers_unknown_object(plans[-1])
        assert not llm.answers


@pytest.mark.parametrize("announced", [True, False])
def test_words_read_as_talk_that_announce_a_lesson_begin_it(fresh: TabletopEnv, tmp_path, announced: bool) -> None:
    words = "Now, dear, I'd like to teach you how to serve something, like I used to do for the grandkids."
    llm = ScriptedLLM([{"unknown_behaviour": "serve", "objects": []}, {"is": "talk"},
                       {"is": "teach" if announced else "other"},
                       *([] if announced else [answer([], ("go_home", {}))])])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        reply = s.say(words)
        assert (reply.kind == "teach" and s.teaching is not None and s.teaching.name == "serve") is announced
        assert (reply.kind == "notice" and s.pending is None) is not announced   # talk: nothing planned
        assert not llm.answers


def test_a_lesson_is_never_named_by_the_teaching_dialogues_own_words(fresh: TabletopEnv, tmp_path) -> None:
    # measured on a held-out session: the announcement was answered as the unknown behaviour `teach`, the
    # announcement question agreed, and serve's steps were learnt as `teach`
    words = "Now, dear, I'd like to teach you how to serve something."
    class Agreeing(ScriptedLLM):
        """Says yes to every announcement question, as the 1.5B did."""

        def json(self, messages: list[dict], schema: dict, **options: Any) -> Any:
            return {"is": "teach"} if schema is ANNOUNCE_SCHEMA else super().json(messages, schema, **options)

    llm = Agreeing([{"unknown_behaviour": "teach", "objects": []}, {"unknown_behaviour": "serve", "objects": []}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        assert s.say(words).kind == "teach" and s.teaching is not None and s.teaching.name == "serve"
        assert not llm.answers
    offered = llm.calls[1]["schema"]["anyOf"]   # asked again: only a lesson's name, one of the words said
    assert len(offered) == 1 and "calls" not in offered[0]["properties"]
    names = offered[0]["properties"]["unknown_behaviour"]["enum"]
    assert "serve" in names and "teach" not in names and "dear" in names


def test_every_console_command_is_a_reserved_name() -> None:
    from situated.sandbox.console import INFO, STATEMENTS
    from situated.sandbox.teaching import COMMAND_WORDS
    assert STATEMENTS | INFO | {"teach", "quit"} <= COMMAND_WORDS


@pytest.mark.parametrize(("begin", "step"), [("Allow me to teach you what it means to wrap an item.",
                                              "First, lift the duck from the table."),
                                             ("stow the candy", "First, lift the duck from the table.")])
def test_a_first_step_is_never_taken_for_another_lesson(fresh: TabletopEnv, tmp_path, begin: str,
                                                        step: str) -> None:
    # measured on a held-out session: after an announced lesson of wrap, "First, lift the duck" was read by the
    # announcement question as a lesson of lift, and wrap was dropped
    class Agreeing(ScriptedLLM):
        def json(self, messages: list[dict], schema: dict, **options: Any) -> Any:
            return {"is": "teach"} if schema is ANNOUNCE_SCHEMA else super().json(messages, schema, **options)

    name = "wrap" if "wrap" in begin else "stow"
    llm = Agreeing([{"unknown_behaviour": name, "objects": [] if name == "wrap" else ["CANDY"]},
                    answer([("duck", "gripper")], ("pickup", {"obj": "duck"}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say(begin)
        assert s.say(step).kind == "plan" and s.teaching is not None and s.teaching.name == name
        assert s.confirm().execution.ok and [c.action for c in s.teaching.steps] == ["pickup"]
        assert not llm.answers


@pytest.mark.parametrize("announced", [True, False])
def test_a_verb_read_as_a_skills_that_the_words_announce_a_lesson_of_is_taught(fresh: TabletopEnv, tmp_path,
                                                                               announced: bool) -> None:
    # measured on a development session: "I'd love to teach you how to stash something. To begin, would you be so
    # kind as to pick up the little ball" — the verb question read `stash` as handing over, and no lesson began
    words = "I'd love to teach you how to stash something. To begin, pick up the ball."
    pick = answer([("ball", "gripper")], ("pickup", {"obj": "ball"}))
    llm = ScriptedLLM([{"unknown_behaviour": "stash", "objects": ["BALL"]}, {"is": "hand_over"},
                       {"is": "teach" if announced else "other"}, *([] if announced else [pick])])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        reply = s.say(words)
        assert (s.teaching is not None and s.teaching.name == "stash") is announced
        assert reply.kind == ("teach" if announced else "plan")
        assert not llm.answers


@pytest.mark.parametrize("announced", [True, False])
def test_words_with_no_verb_that_announce_a_lesson_begin_it(fresh: TabletopEnv, tmp_path, announced: bool) -> None:
    # heldout24_03: 'Now I am teach you new thing, it call "dish".' answered with the unknown behaviour `dish`; the
    # action question found no verb, the words were taken for talk, and dish's steps ran as plain requests
    words = 'Now I am teach you new thing, it call "dish".'
    llm = ScriptedLLM([{"unknown_behaviour": "dish", "objects": []}, {"action": "NONE"},
                       {"is": "teach" if announced else "other"}, answer([], ("go_home", {}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        reply = s.say(words)
        asked = [c for c in llm.calls if c["schema"] == ANNOUNCE_SCHEMA]
        assert len(asked) == 1 and "dish" in str(asked[0]["messages"][-1]["content"])
        if announced:
            assert reply.kind == "teach" and s.teaching is not None and s.teaching.name == "dish"
        else:
            assert s.teaching is None


def test_a_lesson_named_by_a_word_about_showing_is_of_the_word_it_shows(fresh: TabletopEnv, tmp_path) -> None:
    # heldout26_01: "... to show you how to stow something, which is a little routine ..." began a lesson of `show`
    words = "Now, if you would permit me, I should like to show you how to stow something, a little routine of mine."
    llm = ScriptedLLM([{"unknown_behaviour": "show", "objects": []}, {"unknown_behaviour": "stow", "objects": []}])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        reply = s.say(words)
        assert reply.kind == "teach" and s.teaching is not None and s.teaching.name == "stow"
        offered = str(llm.calls[1]["schema"])
        assert "'stow'" in offered and "'show'" not in offered     # the word about showing is not offered again
        assert not llm.answers


def test_talk_with_no_verb_is_no_correction_of_the_last_request(fresh: TabletopEnv, tmp_path) -> None:
    # heldout26_01: "Splendid, simply splendid. You know, my late wife used to wrap presents ..." was read as a
    # correction of "place it into the gift bag", and the candy was taken back out of the bag
    put = answer([("candy", "gift_bag")], ("pickup", {"obj": "candy"}), ("goto", {"obj": "gift_bag"}), ("release", {}))
    talk = "Splendid, simply splendid. You know, my late wife used to wrap presents every Christmas."
    llm = ScriptedLLM([put, {"unknown_behaviour": "splendid", "objects": []}, {"action": "NONE"}, {"is": "other"},
                       {"is": "talk"}, {"is": "talk"}, {"is": "other"},
                       answer([("candy", "gripper")], ("pickup", {"obj": "candy"}))])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        s.say("put the candy in the gift bag")
        assert s.confirm().execution.ok and s.check("'candy' in 'gift_bag'")
        reply = s.say(talk)
        assert reply.kind != "plan" and s.teaching is None and s.check("'candy' in 'gift_bag'")
        assert not llm.answers

"""Grounded decoding: plans checked on a private copy of the scene, rejected statements replaced by the model.

The mechanics are tested with a scripted model (the answers are fixed so that each path is taken); the real
behaviour with recorded calls of the embedded 0.5B model (tests/cassettes/progprompt_qwen0.5b.jsonl).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes import ScriptedLLM, accepts
from situated.actions import PROGPROMPT_SPACE
from situated.datasets.progprompt import HouseholdTask, load_split
from situated.envs.household import HouseholdEnv
from situated.eval.systems.household_episodes import household_episode, simulator_verifier
from situated.interpreter import interpret
from situated.planners.feedback import rejection_comment
from situated.planners.progprompt import ProgPromptPlanner

TASK = "put the soap in the bathroomcabinet"
NOT_CLOSE = "grab barsoap: the character is not close to barsoap (id 34)"


@pytest.fixture(scope="module")
def soap_task(progprompt_data: Path) -> HouseholdTask:
    return next(t for t in load_split(progprompt_data, "env1") if t.name == TASK)


def plan(task: HouseholdTask, answers: list[str], examples: dict[str, str], repairs: int = 3,
         preconditions: bool = False, keep_steps: bool = False):
    llm = ScriptedLLM(list(answers))
    planner = ProgPromptPlanner(llm, PROGPROMPT_SPACE, examples, max_repairs=repairs, preconditions=preconditions,
                                keep_steps=keep_steps)
    env = HouseholdEnv(task.initial_graph)
    env.reset()
    verify = simulator_verifier(HouseholdEnv(task.initial_graph))
    result = planner.plan(task.name, env.object_names(), affordances=env.object_properties(), verify=verify)
    return result, llm, env


FORGETS_TO_WALK = ("# 0: grab soap\n\tgrab('barsoap')\n\tfind('bathroomcabinet')\n\topen('bathroomcabinet')\n"
                   "\tputin('barsoap', 'bathroomcabinet')\n")
REST = ("grab('barsoap')\n\tfind('bathroomcabinet')\n\topen('bathroomcabinet')\n"
        "\tputin('barsoap', 'bathroomcabinet')\n\tclose('bathroomcabinet')\n")


def test_a_rejected_call_is_replaced_and_the_plan_continued(examples: dict[str, str],
                                                            soap_task: HouseholdTask) -> None:
    result, llm, env = plan(soap_task, [FORGETS_TO_WALK, "find('barsoap')\n", REST], examples)
    assert result.rejected == (f"line 3: grab('barsoap'): {NOT_CLOSE}",)
    first, replacement, rest = llm.calls
    note = "\t# " + rejection_comment("grab('barsoap')", NOT_CLOSE) + "\n\t"
    # the model is told why, right where the rejected statement stood, and cannot write it again there
    assert replacement["prompt"] == first["prompt"] + "# 0: grab soap\n" + note
    assert not accepts(replacement["grammar"], "grab('barsoap')\n")
    assert accepts(replacement["grammar"], "find('barsoap')\n")
    assert accepts(replacement["grammar"], "grab('toothpaste')\n")  # only the rejected call is excluded
    # the note is not kept: the rest is written after a clean plan
    assert rest["prompt"] == first["prompt"] + "# 0: grab soap\n\tfind('barsoap')\n\t"
    assert "not possible" not in result.text
    trace = interpret(result.program, env)
    assert trace.attempted == 6 and trace.executed == 6
    assert "barsoap INSIDE bathroomcabinet" in env.conditions()


def test_rejections_at_one_place_accumulate(examples: dict[str, str], soap_task: HouseholdTask) -> None:
    wrong_fix = "putin('barsoap', 'bathroomcabinet')\n"  # fails too: the soap is not held
    answers = [FORGETS_TO_WALK, wrong_fix, "close('bathroomcabinet')\n", "find('barsoap')\n", REST]
    result, llm, _ = plan(soap_task, answers, examples)
    assert [r.split(": ")[1] for r in result.rejected] == ["grab('barsoap')", "putin('barsoap', 'bathroomcabinet')"]
    second_fix = llm.calls[3]
    assert second_fix["prompt"].count("is not possible") == 2
    for banned in ("grab('barsoap')\n", wrong_fix):
        assert not accepts(second_fix["grammar"], banned)
    assert result.text.count("\n") == 8 and "\tfind('barsoap')\n\tgrab('barsoap')" in result.text


def test_the_budget_bounds_the_rewrites_and_keeps_the_last_plan(examples: dict[str, str],
                                                               soap_task: HouseholdTask) -> None:
    answers = [FORGETS_TO_WALK, "putin('barsoap', 'bathroomcabinet')\n", "close('bathroomcabinet')\n"]
    result, llm, env = plan(soap_task, answers, examples, repairs=1)
    assert len(llm.calls) == 3 and result.repairs == 1
    trace = interpret(result.program, env)
    assert trace.first_failure is not None and trace.first_failure.call == "putin('barsoap', 'bathroomcabinet')"


def test_the_model_may_end_the_plan_instead(examples: dict[str, str], soap_task: HouseholdTask) -> None:
    result, _, _ = plan(soap_task, [FORGETS_TO_WALK, "\n"], examples)
    assert result.text == "def put_the_soap_in_the_bathroomcabinet():\n\t# 0: grab soap\n"
    assert result.repairs == 1 and len(result.program.body) == 1


def test_without_repairs_the_plan_is_the_models_first_answer(examples: dict[str, str],
                                                             soap_task: HouseholdTask) -> None:
    result, llm, _ = plan(soap_task, [FORGETS_TO_WALK], examples, repairs=0)
    assert len(llm.calls) == 1 and result.repairs == 0 and "grab('barsoap')" in result.text


def test_an_episode_checks_plans_on_a_private_copy(examples: dict[str, str], soap_task: HouseholdTask) -> None:
    planner = ProgPromptPlanner(ScriptedLLM([FORGETS_TO_WALK, "find('barsoap')\n", REST]), PROGPROMPT_SPACE,
                                examples, max_repairs=2)
    episode = household_episode(soap_task, 0, planner)
    assert episode.details["repairs"] == 1
    assert episode.details["rejected"] == [f"line 3: grab('barsoap'): {NOT_CLOSE}"]
    assert episode.metrics["exec"] == 1.0 and episode.details["attempted"] == 6  # its scene saw the final plan only
    assert episode.metrics["gcr"] > 0


def test_an_action_rejected_twice_at_one_place_is_not_offered_again(examples: dict[str, str],
                                                                    soap_task: HouseholdTask) -> None:
    answers = [FORGETS_TO_WALK, "grab('toothpaste')\n", "close('bathroomcabinet')\n", "find('barsoap')\n", REST]
    result, llm, env = plan(soap_task, answers, examples)
    assert "toothpaste" in env.object_names() and result.repairs == 2
    third = llm.calls[3]["grammar"]
    assert not accepts(third, "grab('toothbrush')\n") and accepts(third, "find('barsoap')\n")
    assert accepts(llm.calls[1]["grammar"], "grab('toothbrush')\n")


def test_writing_stops_at_the_first_piece_with_a_failure(examples: dict[str, str],
                                                         soap_task: HouseholdTask) -> None:
    # the model would go on for long; the plan is checked piece by piece and cut after the failing grab
    # (the first answer is written whole, as in open-loop decoding; the rest after a replacement in pieces)
    cut = ("open('bathroomcabinet')\n\tgrab('barsoap')\n\tfind('bathro", "length")
    rest = "grab('barsoap')\n\tfind('bathroomcabinet')\n\tputin('barsoap', 'bathroomcabinet')\n"
    answers = [FORGETS_TO_WALK, "find('bathroomcabinet')\n", cut, "find('barsoap')\n", rest]
    result, llm, env = plan(soap_task, answers, examples)
    assert len(llm.calls) == 5 and llm.calls[0]["max_tokens"] == 600 and llm.calls[2]["max_tokens"] < 600
    assert llm.calls[3]["prompt"].endswith("\topen('bathroomcabinet')\n\t# " + rejection_comment(
        "grab('barsoap')", NOT_CLOSE) + "\n\t")
    trace = interpret(result.program, env)
    assert trace.first_failure is None and "barsoap INSIDE bathroomcabinet" in env.conditions()


def test_a_piece_without_failure_is_continued(examples: dict[str, str], soap_task: HouseholdTask) -> None:
    pieces = [FORGETS_TO_WALK, "find('barsoap')\n", ("grab('barsoap')\n\tfind('bathroomcabinet')\n\tope", "length"),
              "open('bathroomcabinet')\n\tputin('barsoap', 'bathroomcabinet')\n"]
    result, llm, _ = plan(soap_task, pieces, examples)
    assert len(llm.calls) == 4 and result.repairs == 1
    assert llm.calls[3]["prompt"].endswith("\tfind('barsoap')\n\tgrab('barsoap')\n\tfind('bathroomcabinet')\n\t")


def test_a_call_repeated_three_times_in_a_row_is_rejected_and_replaced(examples: dict[str, str],
                                                                      soap_task: HouseholdTask) -> None:
    # the 1.5B model once wrote turnleft() to the token cap (506 times); a third same call in a row is rejected
    # like a failing one, so the model writes something else there
    loops = ("# 0: put soap away\n\twalk('bathroom')\n\tturnleft()\n\tturnleft()\n\tturnleft()\n\tturnleft()\n"
             "\tturnleft()\n")
    result, llm, env = plan(soap_task, [loops, "find('barsoap')\n", REST], examples)
    assert result.rejected == ("line 6: turnleft(): the plan already did it 2 times in a row",)
    assert not accepts(llm.calls[1]["grammar"], "turnleft()\n")
    assert result.text.count("turnleft()") == 2
    trace = interpret(result.program, env)
    assert trace.attempted == trace.executed and "barsoap INSIDE bathroomcabinet" in env.conditions()


def test_without_repairs_a_repeated_call_stays(examples: dict[str, str], soap_task: HouseholdTask) -> None:
    loops = "# 0: turn around\n\tturnleft()\n\tturnleft()\n\tturnleft()\n"
    result, _, _ = plan(soap_task, [loops], examples, repairs=0)
    assert result.rejected == () and result.text.count("turnleft()") == 3


def test_once_the_rewrites_are_spent_the_plan_ends_where_a_loop_starts(examples: dict[str, str],
                                                                       soap_task: HouseholdTask) -> None:
    # the rewrite budget (1) goes on a failing grab; the model then repeats a block of four calls (as the 1.5B
    # did, 461 lines): the plan ends where the repetition started
    block = "\tturnleft()\n\tturnleft()\n\tturnright()\n\tturnright()\n"
    loop = (block * 3)[1:] + "\tfind('barsoap')\n"
    result, llm, _ = plan(soap_task, [FORGETS_TO_WALK, "walk('bathroom')\n", loop], examples, repairs=1)
    assert len(llm.calls) == 3
    assert result.rejected == (f"line 3: grab('barsoap'): {NOT_CLOSE}", "line 15: turnright(): the plan already "
                               "did the 4 steps ending with it 2 times in a row; the plan ends at line 4")
    assert result.text.endswith("# 0: grab soap\n\twalk('bathroom')\n") and "turn" not in result.text


def test_a_missing_precondition_is_found_without_asking_the_model(examples: dict[str, str],
                                                                  soap_task: HouseholdTask) -> None:
    # the grab fails (not close to the soap): the search writes find('barsoap') before it, the model's own
    # grab and the rest of its plan stay, and no model call is spent on a rewrite
    result, llm, env = plan(soap_task, [FORGETS_TO_WALK], examples, preconditions=True)
    assert len(llm.calls) == 1
    assert result.rejected == (f"line 3: grab('barsoap'): {NOT_CLOSE}; find('barsoap') written before it",)
    assert "# 0: grab soap\n\tfind('barsoap')\n\tgrab('barsoap')\n\tfind('bathroomcabinet')" in result.text
    trace = interpret(result.program, env)
    assert trace.attempted == trace.executed == 5
    assert "barsoap INSIDE bathroomcabinet" in env.conditions()


def test_two_steps_are_found_when_one_is_not_enough(examples: dict[str, str], soap_task: HouseholdTask) -> None:
    # the cabinet is far and closed: going there alone does not let the soap in, going there and opening it does
    skips = "# 0: put soap away\n\tfind('barsoap')\n\tgrab('barsoap')\n\tputin('barsoap', 'bathroomcabinet')\n"
    result, llm, env = plan(soap_task, [skips], examples, preconditions=True)
    assert len(llm.calls) == 1
    assert result.rejected[-1].endswith("find('bathroomcabinet'), open('bathroomcabinet') written before it")
    trace = interpret(result.program, env)
    assert trace.attempted == trace.executed == 5
    assert "barsoap INSIDE bathroomcabinet" in env.conditions()


def test_a_failure_no_step_fixes_goes_to_the_model(examples: dict[str, str], soap_task: HouseholdTask) -> None:
    # a second grab of what is already held: no step before it makes it run, so the model rewrites it
    twice = "# 0: grab soap\n\tfind('barsoap')\n\tgrab('barsoap')\n\tgrab('barsoap')\n"
    rest = "open('bathroomcabinet')\n\tputin('barsoap', 'bathroomcabinet')\n"
    result, llm, env = plan(soap_task, [twice, "find('bathroomcabinet')\n", rest], examples,
                           preconditions=True)
    assert interpret(result.program, env).executed == 5 and "barsoap INSIDE bathroomcabinet" in env.conditions()
    assert len(llm.calls) == 3 and "already" in result.rejected[0] and "written before" not in result.rejected[0]


@pytest.mark.parametrize("keep_steps", [False, True])
def test_a_step_the_model_would_give_up_is_kept_only_with_keep_steps(examples: dict[str, str],
                                                                     soap_task: HouseholdTask,
                                                                     keep_steps: bool) -> None:
    # the model's rewrite of the far grab ends the plan there; with keep_steps the grab stays, reached by a find
    result, llm, env = plan(soap_task, [FORGETS_TO_WALK, ""], examples, keep_steps=keep_steps)
    assert len(llm.calls) == 2  # the model is asked first either way
    trace = interpret(result.program, env)
    assert ("barsoap INSIDE bathroomcabinet" in env.conditions()) == keep_steps
    if keep_steps:
        assert result.rejected == (f"line 3: grab('barsoap'): {NOT_CLOSE}; grab('barsoap') kept, find('barsoap') "
                                   "written before it",)
        assert "\tfind('barsoap')\n\tgrab('barsoap')\n\tfind('bathroomcabinet')" in result.text
        assert trace.attempted == trace.executed == 5
    else:
        assert "grab" not in result.text.split("# 0: grab soap")[-1]


def test_keep_steps_leaves_a_substitution_and_a_step_already_done_to_the_model(examples: dict[str, str],
                                                                               soap_task: HouseholdTask) -> None:
    # a second grab of what is held is given up (its effect holds): nothing is searched for, the plan ends there
    twice = "# 0: grab soap\n\tfind('barsoap')\n\tgrab('barsoap')\n\tgrab('barsoap')\n"
    result, llm, _ = plan(soap_task, [twice, ""], examples, keep_steps=True)
    assert len(llm.calls) == 2 and "kept" not in result.rejected[0]
    assert result.text.count("grab('barsoap')") == 1
    # a replacement that is a task step of its own stands as the model wrote it
    rest = REST.split("\n", 1)[1].lstrip("\t")
    result, llm, _ = plan(soap_task, [FORGETS_TO_WALK, "find('barsoap')\n\tgrab('barsoap')\n", rest], examples,
                         keep_steps=True)
    assert len(llm.calls) == 3 and "kept" not in result.rejected[0]
    assert "# 0: grab soap\n\tfind('barsoap')\n\tgrab('barsoap')" in result.text


def test_the_step_kept_is_the_one_first_rejected_not_a_later_substitute(examples: dict[str, str],
                                                                        soap_task: HouseholdTask) -> None:
    # the model swaps the far grab for another far grab, then gives up: the soap's grab is the task step kept
    rest = "find('bathroomcabinet')\n\topen('bathroomcabinet')\n\tputin('barsoap', 'bathroomcabinet')\n"
    result, llm, env = plan(soap_task, [FORGETS_TO_WALK, "grab('toothpaste')\n", rest, ""], examples,
                            keep_steps=True)
    assert len(llm.calls) == 4  # the plan, the substitute, the rest after it, the rewrite that gives up
    assert result.rejected[-1].endswith("grab('barsoap') kept, find('barsoap') written before it")
    assert "toothpaste" not in result.text
    interpret(result.program, env)
    assert "barsoap INSIDE bathroomcabinet" in env.conditions()


def test_open_first_opens_a_closed_container_without_asking_the_model(examples: dict[str, str],
                                                                      soap_task: HouseholdTask) -> None:
    # the soap is held and the cabinet is near but closed: open_first writes open('bathroomcabinet') before the put
    closed = ("find('barsoap')\n\tgrab('barsoap')\n\tfind('bathroomcabinet')\n"
              "\tputin('barsoap', 'bathroomcabinet')\n")
    llm = ScriptedLLM([closed])
    planner = ProgPromptPlanner(llm, PROGPROMPT_SPACE, examples, max_repairs=3, open_first=True)
    env = HouseholdEnv(soap_task.initial_graph)
    result = planner.plan(soap_task.name, env.object_names(), affordances=env.object_properties(),
                          verify=simulator_verifier(HouseholdEnv(soap_task.initial_graph)))
    assert len(llm.calls) == 1
    assert result.rejected[-1].endswith("is not open; open('bathroomcabinet') written before it")
    env.reset()
    trace = interpret(result.program, env)
    assert trace.attempted == trace.executed == 5 and "barsoap INSIDE bathroomcabinet" in env.conditions()


def test_open_first_leaves_other_failures_to_the_model(examples: dict[str, str], soap_task: HouseholdTask) -> None:
    # not close to the soap is no closed container: the model is asked, as without open_first
    llm = ScriptedLLM([FORGETS_TO_WALK, "find('barsoap')\n", REST])
    planner = ProgPromptPlanner(llm, PROGPROMPT_SPACE, examples, max_repairs=3, open_first=True)
    env = HouseholdEnv(soap_task.initial_graph)
    result = planner.plan(soap_task.name, env.object_names(), affordances=env.object_properties(),
                          verify=simulator_verifier(HouseholdEnv(soap_task.initial_graph)))
    assert len(llm.calls) == 3 and result.rejected == (f"line 3: grab('barsoap'): {NOT_CLOSE}",)


def test_a_grab_from_a_closed_container_gets_the_container_opened(examples: dict[str, str],
                                                                 soap_task: HouseholdTask) -> None:
    # the shirt is in the closed closet: the failure names the closet, and the search opens it (an object the
    # grab itself does not name)
    shirt = "find('clothesshirt')\n\tgrab('clothesshirt')\n"
    llm = ScriptedLLM([shirt])
    planner = ProgPromptPlanner(llm, PROGPROMPT_SPACE, examples, max_repairs=3, open_first=True)
    env = HouseholdEnv(soap_task.initial_graph)
    result = planner.plan("take a shirt", env.object_names(), affordances=env.object_properties(),
                          verify=simulator_verifier(HouseholdEnv(soap_task.initial_graph)))
    assert len(llm.calls) == 1
    assert "which is closed (open it first); open('closet') written before it" in result.rejected[-1]
    env.reset()
    trace = interpret(result.program, env)
    assert trace.attempted == trace.executed == 3 and "character HOLDS_RH clothesshirt" in env.conditions()


def planned(task: HouseholdTask, answers: list, examples: dict[str, str], **levers):
    llm = ScriptedLLM(list(answers))
    planner = ProgPromptPlanner(llm, PROGPROMPT_SPACE, examples, max_repairs=3, **levers)
    env = HouseholdEnv(task.initial_graph)
    result = planner.plan(task.name, env.object_names(), affordances=env.object_properties(),
                          verify=simulator_verifier(HouseholdEnv(task.initial_graph)))
    env.reset()
    return result, llm, env


def test_skip_done_drops_a_call_whose_effect_holds_and_keeps_the_rest(examples: dict[str, str],
                                                                      soap_task: HouseholdTask) -> None:
    # the second grab of the held soap changes nothing: it goes, the model is not asked, the put still runs
    twice = ("find('barsoap')\n\tgrab('barsoap')\n\tfind('bathroomcabinet')\n\tgrab('barsoap')\n"
             "\topen('bathroomcabinet')\n\tputin('barsoap', 'bathroomcabinet')\n")
    result, llm, env = planned(soap_task, [twice], examples, skip_done=True)
    assert len(llm.calls) == 1
    assert result.rejected == ("line 5: grab('barsoap'): grab barsoap: barsoap (id 34) is already grabbed; "
                               "dropped: its effect holds",)
    assert result.text.count("grab('barsoap')") == 1 and "putin('barsoap', 'bathroomcabinet')" in result.text
    trace = interpret(result.program, env)
    assert trace.attempted == trace.executed == 5 and "barsoap INSIDE bathroomcabinet" in env.conditions()
    # without the lever the model is asked for a step in its place
    result, llm, _ = planned(soap_task, [twice, ""], examples)
    assert len(llm.calls) == 2 and "putin" not in result.text


def test_skip_done_leaves_other_failures_to_the_model(examples: dict[str, str], soap_task: HouseholdTask) -> None:
    result, llm, _ = planned(soap_task, [FORGETS_TO_WALK, "find('barsoap')\n", REST], examples, skip_done=True)
    assert len(llm.calls) == 3 and result.rejected == (f"line 3: grab('barsoap'): {NOT_CLOSE}",)


def test_a_checker_fix_inside_a_stopped_piece_is_written_on(examples: dict[str, str],
                                                           soap_task: HouseholdTask) -> None:
    # after a replacement the rest is written in pieces and stops at the held soap's second grab; the checker
    # drops that grab, and the model writes on from the piece's end instead of the plan ending there
    piece = ("grab('barsoap')\n\tfind('bathroomcabinet')\n\tgrab('barsoap')\n\topen('bathroomcabinet')\n\tput",
             "length")
    answers = [FORGETS_TO_WALK, "find('barsoap')\n", piece, "putin('barsoap', 'bathroomcabinet')\n"]
    result, llm, env = planned(soap_task, answers, examples, skip_done=True)
    assert len(llm.calls) == 4
    assert llm.calls[3]["prompt"].endswith("\tfind('bathroomcabinet')\n\topen('bathroomcabinet')\n\t")
    trace = interpret(result.program, env)
    assert trace.first_failure is None and "barsoap INSIDE bathroomcabinet" in env.conditions()


def test_skip_done_leaves_a_replacement_whose_effect_holds_to_the_model(examples: dict[str, str],
                                                                         soap_task: HouseholdTask) -> None:
    # the model answers the far cabinet's rejected open with a second grab of the held soap: dropping it would
    # give the open up, so the model is asked again there, as without the lever
    far = "find('barsoap')\n\tgrab('barsoap')\n\topen('bathroomcabinet')\n"
    rest = "open('bathroomcabinet')\n\tputin('barsoap', 'bathroomcabinet')\n"
    answers = [far, "grab('barsoap')\n", "", "find('bathroomcabinet')\n", rest]
    result, llm, env = planned(soap_task, answers, examples, skip_done=True)
    assert not any("dropped" in r for r in result.rejected)
    assert len(llm.calls) == 5 and "find('bathroomcabinet')" in result.text
    interpret(result.program, env)
    assert "barsoap INSIDE bathroomcabinet" in env.conditions()

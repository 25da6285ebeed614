"""Honest Exec: grounded-decoding rewrites that made a plan executable by giving up a step of the task.

`abandoned` on hand-written plans and rewrites, then whole episodes with a scripted model on the small kitchen
scene of the test kit: the answers are chosen so that a rejected `switchon('tv')` is either given up (the model
walks to the tv and ends the plan) or done after the walk it lacked.
"""

from __future__ import annotations

import copy

import pytest

from fakes import ScriptedLLM, kitchen
from situated.actions import PROGPROMPT_SPACE
from situated.datasets.progprompt import HouseholdTask
from situated.eval.episode import Episode
from situated.eval.report.terminal import household_line, household_table
from situated.eval.systems.household import household_summary
from situated.eval.systems.household_episodes import household_episode
from situated.eval.systems.household_metrics import abandoned
from situated.planners.base import Rewrite
from situated.planners.progprompt import ProgPromptPlanner
from situated.program import Call, parse


def program(*lines: str):
    return parse("def task():\n" + "".join(f"\t{line}\n" for line in lines))


def rewrite(line: int, call: str, replacement: str, reason: str = "the character is not close to it") -> Rewrite:
    rejected = parse(f"def task():\n\t{call}\n").body[0]
    assert isinstance(rejected, Call)
    return Rewrite(line, Call(rejected.action, rejected.args, line), replacement, reason)


def test_a_task_step_swapped_for_a_move_is_abandoned() -> None:
    final = program("find('stove')", "turnto('stove')")
    assert abandoned([rewrite(3, "close('stove')", "turnto('stove')")], final) == 1


def test_a_plan_ended_where_the_task_step_stood_is_abandoned() -> None:
    final = program("find('tv')")
    assert abandoned([rewrite(3, "switchon('tv')", "")], final) == 1


def test_a_move_inserted_before_the_same_step_is_a_repair() -> None:
    final = program("find('soap')", "grab('soap')")
    assert abandoned([rewrite(2, "grab('soap')", "find('soap')")], final) == 0


def test_another_task_step_in_its_place_is_a_substitution_not_abandonment() -> None:
    final = program("find('mug')", "grab('cup')")
    assert abandoned([rewrite(3, "grab('mug')", "grab('cup')")], final) == 0


def test_a_step_whose_effect_already_holds_is_not_given_up() -> None:
    final = program("find('kitchencabinet')", "turnto('kitchencabinet')")
    already = rewrite(3, "open('kitchencabinet')", "turnto('kitchencabinet')",
                      "open kitchencabinet: kitchencabinet (id 208) is already open")
    assert abandoned([already], final) == 0


def test_a_rejected_move_is_no_task_step() -> None:
    final = program("find('kitchen')", "grab('mug')")
    assert abandoned([rewrite(2, "walk('fridge')", "find('kitchen')")], final) == 0


def test_several_rewrites_at_one_place_count_once_against_what_stands_there() -> None:
    final = program("find('tv')", "lookat('tv')")
    rewrites = [rewrite(3, "switchon('tv')", "grab('remote')"), rewrite(3, "grab('remote')", "lookat('tv')")]
    assert abandoned(rewrites, final) == 1
    final = program("find('tv')", "walk('tv')", "switchon('tv')")  # the step comes back later in the plan
    assert abandoned(rewrites, final) == 0


# --- whole episodes: the planner records its rewrites, the episode and the summary count them ----------------

TV_ON = "tv ON"


@pytest.fixture
def task() -> HouseholdTask:
    final = copy.deepcopy(kitchen())
    tv = next(n for n in final["nodes"] if n["class_name"] == "tv")
    tv["states"] = ["ON"]
    return HouseholdTask("turn on tv", "test", 0, (), (), kitchen(), final)


def episode(task: HouseholdTask, answers: list[str]) -> Episode:
    planner = ProgPromptPlanner(ScriptedLLM(answers), PROGPROMPT_SPACE, {}, n_examples=0, max_repairs=3)
    return household_episode(task, 0, planner)


def test_an_episode_counts_the_step_it_gave_up(task: HouseholdTask) -> None:
    # switchon is rejected on the copy (the character is not near the tv); the model walks there and stops
    gave_up = episode(task, ["switchon('tv')\n", "walk('tv')\n", ""])
    assert gave_up.details["repairs"] == 1 and gave_up.details["abandoned"] == 1
    assert gave_up.metrics["exec"] == 1.0 and gave_up.metrics["success"] == 0.0  # executable, task lost
    kept = episode(task, ["switchon('tv')\n", "walk('tv')\n", "switchon('tv')\n"])
    assert kept.details["repairs"] == 1 and kept.details["abandoned"] == 0
    assert kept.metrics["success"] == 1.0
    summary = household_summary([gave_up, kept])
    assert summary["abandoned"] == 1 and summary["repairs"] == 2
    assert "abandoned steps 1" in household_line([gave_up, kept])
    table = household_table([gave_up], "t")
    assert [c.header for c in table.columns][-1] == "abandoned" and list(table.columns[-1].cells) == ["1"]

"""Goal-aware grounded decoding: the model states the task's goals first; a plan whose every statement runs but
that leaves a stated goal unmet on the private copy of the scene gets a sub-goal for it, and the model writes
its steps. Scripted model answers take each path; the scene is the real env1 graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes import ScriptedLLM, accepts
from situated.actions import PROGPROMPT_SPACE
from situated.datasets.progprompt import HouseholdTask, load_split
from situated.envs.household import HouseholdEnv
from situated.eval.systems.household_episodes import simulator_verifier
from situated.interpreter import interpret
from situated.planners.progprompt import ProgPromptPlanner
from situated.program import parse
from situated.program.effects import net_effects, read_goals

TASK = "put the soap in the bathroomcabinet"
GOAL = " 'barsoap' in 'bathroomcabinet'\n"
# Runs without a failure, but leaves the soap where it was.
OPENS_ONLY = "# 0: open cabinet\n\tfind('bathroomcabinet')\n\topen('bathroomcabinet')\n\t# 1: Done\n"
PUTS_SOAP_IN = "find('barsoap')\n\tgrab('barsoap')\n\tfind('bathroomcabinet')\n\tputin('barsoap', 'bathroomcabinet')\n"
PUTS_SOAP = PUTS_SOAP_IN.replace("\tputin", "\topen('bathroomcabinet')\n\tputin")


@pytest.fixture(scope="module")
def soap_task(progprompt_data: Path) -> HouseholdTask:
    return next(t for t in load_split(progprompt_data, "env1") if t.name == TASK)


def plan(task: HouseholdTask, answers: list[str], examples: dict[str, str], **options: object):
    llm = ScriptedLLM(list(answers))
    planner = ProgPromptPlanner(llm, PROGPROMPT_SPACE, examples, state_goals=True, **{"max_repairs": 3, **options})
    env = HouseholdEnv(task.initial_graph)
    env.reset()
    verify = simulator_verifier(HouseholdEnv(task.initial_graph))
    result = planner.plan(task.name, env.object_names(), affordances=env.object_properties(), verify=verify)
    return result, llm, env


def test_examples_show_their_goals_and_the_model_states_the_tasks(soap_task: HouseholdTask,
                                                                 examples: dict[str, str]) -> None:
    result, llm, _ = plan(soap_task, [GOAL, PUTS_SOAP], examples)
    asking = llm.calls[0]
    assert asking["prompt"].endswith("\n# goals:") and "# goals: 'lime' in 'garbagecan'\ndef throw_away_the_lime" \
        in asking["prompt"]
    assert accepts(asking["grammar"], GOAL) and not accepts(asking["grammar"], " 'barsoap' in 'nowhere'\n")
    assert llm.calls[1]["prompt"].endswith(f"# goals:{GOAL}def put_the_soap_in_the_bathroomcabinet():\n\t")
    assert result.goals == ("'barsoap' in 'bathroomcabinet'",) and result.rejected == ()


def test_an_unmet_goal_gets_a_sub_goal_and_the_model_writes_its_steps(soap_task: HouseholdTask,
                                                                     examples: dict[str, str]) -> None:
    result, llm, env = plan(soap_task, [GOAL, OPENS_ONLY, PUTS_SOAP_IN], examples)
    # the closing "# 1: Done" goes; the sub-goal takes its number and the model continues from it
    assert llm.calls[2]["prompt"].endswith("\topen('bathroomcabinet')\n\t# 1: put barsoap in bathroomcabinet\n\t")
    assert result.rejected == ("goal 'barsoap' in 'bathroomcabinet': the goal 'barsoap' in 'bathroomcabinet' "
                               "does not hold yet",)
    trace = interpret(result.program, env)
    assert trace.first_failure is None and "barsoap INSIDE bathroomcabinet" in env.conditions()


def test_a_goal_is_pursued_once_and_the_token_budget_bounds_the_rewrites(soap_task: HouseholdTask,
                                                                        examples: dict[str, str]) -> None:
    result, llm, _ = plan(soap_task, [GOAL, OPENS_ONLY, "find('barsoap')\n"], examples)
    assert len(llm.calls) == 3 and len(result.rejected) == 1  # the goal still fails: no second sub-goal for it
    spent, llm, _ = plan(soap_task, [GOAL, OPENS_ONLY], examples, max_tokens=10, max_plan_tokens=10)
    assert spent.budget_spent and len(llm.calls) == 2 and spent.rejected == ()


def test_net_effects_of_example_plans(examples: dict[str, str]) -> None:
    assert net_effects(parse(examples["throw_away_the_lime"])) == read_goals("'lime' in 'garbagecan'")
    assert net_effects(parse(examples["turn_off_the_table_lamp"])) == read_goals("'tablelamp' is 'switchoff'")
    # opened, then closed again: no goal; what is still held at the end is no goal either
    opened_closed = parse("def f():\n\topen('fridge')\n\tgrab('salmon')\n\tclose('fridge')\n")
    assert net_effects(opened_closed) == ()

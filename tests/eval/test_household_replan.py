"""Replanning after a failed action and LLM-judged assertions.

The mechanics are tested with a scripted model; the real behaviour with calls of the embedded 0.5B model
recorded once in tests/cassettes/progprompt_qwen0.5b.jsonl and replayed here (deterministic, no weights needed).
Re-record with `SITUATED_CASSETTE_MODE=record pytest tests/eval/test_household_replan.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fakes import CASSETTES, ScriptedLLM
from situated.actions import PROGPROMPT_SPACE
from situated.datasets.progprompt import HouseholdTask, load_split
from situated.envs.household import HouseholdEnv
from situated.eval.systems.household_episodes import run_plan
from situated.interpreter import interpret
from situated.planners.assertion_check import LLMAssertionCheck, llm_check_prompt
from situated.planners.base import PlanResult
from situated.planners.feedback import failure_comment
from situated.planners.progprompt import ProgPromptPlanner
from situated.program import Condition, parse
from situated.trace import CheckEvent, StepEvent, StopEvent

CASSETTE = CASSETTES / "progprompt_qwen0.5b.jsonl"
MODEL = "llamacpp:qwen2.5-coder-0.5b"


@pytest.fixture(scope="module")
def soap_task(progprompt_data: Path) -> HouseholdTask:
    return next(t for t in load_split(progprompt_data, "env1") if t.name == "put the soap in the bathroomcabinet")


def fresh_env(task: HouseholdTask) -> HouseholdEnv:
    env = HouseholdEnv(task.initial_graph)
    env.reset()
    return env


# The first plan forgets to walk to the soap: grab fails (not close).
FIRST = "def put_the_soap_in_the_bathroomcabinet():\n\t# 0: grab soap\n\tgrab('barsoap')\n\t# 1: done\n"


def first_plan() -> PlanResult:
    return PlanResult(parse(FIRST), FIRST)


def test_failed_action_is_reported_and_the_remainder_replanned(examples: dict[str, str],
                                                               soap_task: HouseholdTask) -> None:
    remainder = ("find('barsoap')\n\tgrab('barsoap')\n\tfind('bathroomcabinet')\n\topen('bathroomcabinet')\n"
                 "\tputin('barsoap', 'bathroomcabinet')\n\tclose('bathroomcabinet')\n")
    llm = ScriptedLLM([remainder])
    planner = ProgPromptPlanner(llm, PROGPROMPT_SPACE, examples)
    env = fresh_env(soap_task)
    done = run_plan(first_plan(), env, planner=planner, task_name=soap_task.name, objects=env.object_names(),
                   replan=2)
    prompt = llm.prompts[0]
    failed = [e for e in done.trace if isinstance(e, StepEvent) and not e.ok]
    assert len(failed) == 1 and failed[0].call == "grab('barsoap')"
    comment = failure_comment(failed[0].call, failed[0].reason)
    assert prompt.endswith(f"\tgrab('barsoap')\n\t# {comment}\n\t")
    assert "# 1: done" not in prompt  # lines after the failure are not shown as done
    assert isinstance(done.trace.events[2], StopEvent)  # subgoal, failed grab, stop
    later = [e for e in done.trace if isinstance(e, StepEvent)][1:]
    assert [e.call for e in later][-1] == "close('bathroomcabinet')" and all(e.ok for e in later)
    assert all(e.line > failed[0].line + 1 for e in later)  # line numbers of the whole final plan
    assert done.replans == 1
    assert done.text.startswith(FIRST.split("\t# 1")[0]) and f"# {comment}" in done.text
    assert "barsoap INSIDE bathroomcabinet" in env.conditions()


def test_replanning_is_bounded(examples: dict[str, str], soap_task: HouseholdTask) -> None:
    llm = ScriptedLLM(["grab('barsoap')\n", "grab('barsoap')\n", "grab('barsoap')\n"])
    planner = ProgPromptPlanner(llm, PROGPROMPT_SPACE, examples)
    env = fresh_env(soap_task)
    done = run_plan(first_plan(), env, planner=planner, task_name=soap_task.name, objects=env.object_names(),
                   replan=2)
    assert len(llm.prompts) == 2 and done.replans == 2
    assert sum(isinstance(e, StopEvent) for e in done.trace) == 2
    assert done.trace.attempted == 3 and done.trace.executed == 0


def test_without_replanning_the_plan_runs_on(soap_task: HouseholdTask) -> None:
    env = fresh_env(soap_task)
    done = run_plan(first_plan(), env)
    assert done.replans == 0 and not any(isinstance(e, StopEvent) for e in done.trace)


# ----------------------------------------------------------------------------------------- recorded real calls


def recorded_llm():
    mode = os.environ.get("SITUATED_CASSETTE_MODE", "replay")
    if mode == "replay" and not CASSETTE.is_file():
        pytest.fail(f"cassette {CASSETTE} missing; record it with SITUATED_CASSETTE_MODE=record")
    if mode != "replay":
        pytest.importorskip("llama_cpp")
    from situated.llm.cassette import wrap

    return wrap(MODEL, CASSETTE, mode=mode)


def test_llm_judged_assertions_recorded(soap_task: HouseholdTask) -> None:
    llm = recorded_llm()
    check = LLMAssertionCheck(llm)
    env = fresh_env(soap_task)
    conditions = [Condition("close", ("barsoap",)), Condition("holds", ("barsoap",)),
                  Condition("state", ("bathroomcabinet", "closed")),
                  Condition("state", ("bathroomcabinet", "opened"))]
    before = [check(c, env) for c in conditions]
    program = parse("def f():\n\tfind('barsoap')\n\tgrab('barsoap')\n\tfind('bathroomcabinet')\n"
                    "\topen('bathroomcabinet')\n")
    assert all(e.ok for e in interpret(program, env).steps)
    after = [check(c, env) for c in conditions]
    assert check.calls == 8
    assert all(isinstance(v, bool) for v in before + after)
    truth_before = [False, False, True, False]  # the soap is elsewhere, the cabinet closed
    truth_after = [True, True, False, True]
    agree = sum(a == b for a, b in zip(before + after, truth_before + truth_after, strict=True))
    # The 0.5B judge is far from perfect; it must still agree with the state more often than not.
    assert agree >= 5, (before, after)
    assert "You see:" in llm_check_prompt(conditions[2], env)


def test_replanning_with_recorded_model(examples: dict[str, str], soap_task: HouseholdTask) -> None:
    llm = recorded_llm()
    planner = ProgPromptPlanner(llm, PROGPROMPT_SPACE, examples, max_tokens=200)
    env = fresh_env(soap_task)
    objects = env.object_names()
    done = run_plan(first_plan(), env, planner=planner, task_name=soap_task.name, objects=objects, replan=1)
    assert done.replans == 1
    replanned = done.plans[1]
    assert "# the action grab('barsoap') failed:" in replanned.text
    assert replanned.unknown == 0 and not replanned.raw_problems  # the grammar allows nothing else
    steps = done.trace.steps
    assert steps[0].call == "grab('barsoap')" and not steps[0].ok
    assert len(steps) > 1  # the model wrote a remainder and it ran
    assert any(isinstance(e, (StepEvent, CheckEvent)) and e.line > 3 for e in done.trace)

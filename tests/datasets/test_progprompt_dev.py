"""The ProgPrompt development set: released env1/env2 tasks, written tasks and re-grounded training plans."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from fakes import EXAMPLES
from situated.datasets.progprompt import load_example_plans, load_split
from situated.datasets.progprompt_dev import (
    TRAIN_PLANS,
    DevTask,
    load_dev_set,
    load_written,
    reground_plans,
)
from situated.envs.household import HouseholdEnv
from situated.errors import DataError
from situated.eval.systems.household_metrics import goal_conditions
from situated.interpreter import interpret
from situated.planners.progprompt_prompt import ProgPromptPrompt, function_name, same_task
from situated.planners.retrieval import make_retriever
from situated.trace import SkipEvent, StepEvent

WRITTEN = EXAMPLES / "progprompt_dev"


@pytest.fixture(scope="module")
def dev(progprompt_data: Path) -> list[DevTask]:
    return load_dev_set(progprompt_data)


@pytest.fixture(scope="module")
def env1_graph(progprompt_data: Path) -> dict:
    graph = load_split(progprompt_data, "env1")[0].initial_graph
    assert graph is not None
    return graph


def test_the_set_has_the_released_written_and_training_tasks(dev: list[DevTask]) -> None:
    parts = Counter(d.part for d in dev)
    assert parts["released"] == 20
    assert parts["written"] >= 40
    assert parts["train"] >= 20
    assert {d.environment for d in dev} == {"env1", "env2"}
    assert [d.task.index for d in dev] == list(range(len(dev)))
    assert len({d.task.task_id for d in dev}) == len(dev)
    for d in dev:
        assert d.task.initial_graph is not None and d.task.final_graph is not None
        assert d.task.split in (d.environment, f"written-{d.environment}", f"train-{d.environment}")


def test_no_task_appears_twice_in_an_environment(dev: list[DevTask]) -> None:
    for env in ("env1", "env2"):
        names = [d.task.name for d in dev if d.environment == env]
        assert not [(a, b) for i, a in enumerate(names) for b in names[i + 1:] if same_task(a, b)]
    released = {d.task.name for d in dev if d.part == "released" and d.environment == "env1"}
    assert "bring my book to the sofa" in released
    assert not [d for d in dev if d.part == "train" and d.environment == "env1"
                and d.task.name == "bring my book to the sofa"]


def test_every_reference_plan_reaches_its_goals_through_the_interpreter(dev: list[DevTask]) -> None:
    planned = [d for d in dev if d.plan is not None]
    assert len(planned) == len(dev) - 20
    for d in planned:
        env = HouseholdEnv(d.task.initial_graph, seed=0)
        env.reset()
        trace = interpret(d.plan, env)
        steps = [e for e in trace.events if isinstance(e, StepEvent)]
        assert steps and all(e.ok for e in steps), (d.task.name, [e.reason for e in steps if not e.ok])
        assert not [e for e in trace.events if isinstance(e, SkipEvent)], d.task.name
        assert all(env.holds(g) for g in d.goals), d.task.name
        assert env.conditions() == HouseholdEnv(d.task.final_graph).conditions(), d.task.name


def test_every_task_of_ours_has_goals_that_doing_nothing_misses(dev: list[DevTask]) -> None:
    for d in (d for d in dev if d.part != "released"):  # released env1 "make toast" changes only CLOSE facts
        start = HouseholdEnv(d.task.initial_graph).conditions()
        goal = goal_conditions(start, HouseholdEnv(d.task.final_graph).conditions())
        moved = [f for f in goal if " CLOSE " not in f and " FACING " not in f]
        assert moved, d.task.name
    written = [d for d in dev if d.part == "written"]
    assert all(d.goals for d in written)
    assert not [d.task.name for d in written
                if any(HouseholdEnv(d.task.initial_graph).holds(g) for g in d.goals)]


def test_no_prompt_shows_the_plan_of_the_task_being_planned(dev: list[DevTask], progprompt_data: Path) -> None:
    plans = load_example_plans(progprompt_data / TRAIN_PLANS)
    fixed = ProgPromptPrompt(examples=plans, n_examples=3)
    retrieved = ProgPromptPrompt(examples=plans, n_examples=5, retriever=make_retriever("bm25"))
    trained = [d for d in dev if d.part == "train"]
    assert any(function_name(d.task.name) == "wash_the_rug_in_washing_machine" for d in trained)
    for d in dev:
        for prompts in (fixed, retrieved):
            shown = prompts.examples_for(d.task.name)
            assert not [s for s in shown if same_task(s, d.task.name)], (d.task.name, shown)
            assert function_name(d.task.name) not in shown


def test_the_training_plans_that_fail_in_a_scene_are_left_out(progprompt_data: Path, env1_graph: dict) -> None:
    plans = load_example_plans(progprompt_data / TRAIN_PLANS)
    names = {d.task.name for d in reground_plans(plans, env1_graph, "env1")}
    assert "throw away the lime" in names            # env1 has a lime and a garbage can
    assert "wash mug" not in names                   # env1 has no washing sponge
    assert "put clothes in closet" not in names      # ten finds in one sub-goal: an episode would skip its steps
    assert "put book back in the bookshelf" not in names  # the book is on the shelf already: nothing to do


# ------------------------------------------------------------------------------------------------ bad input

def _written(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "env1.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


GOOD = {"task": "turn on the radio", "goals": ["'radio' is 'switchon'"],
        "plan": ["walk('bedroom')", "find('radio')", "switchon('radio')"]}


def test_a_written_task_is_replayed_into_its_final_graph(tmp_path: Path, env1_graph: dict) -> None:
    [d] = load_written(_written(tmp_path, GOOD), env1_graph, "env1")
    assert d.task.name == "turn on the radio" and d.task.split == "written-env1"
    assert d.task.script[-1].startswith("<char0> [switchon] <radio> (")
    assert "radio ON" in HouseholdEnv(d.task.final_graph).conditions()
    assert "radio ON" not in HouseholdEnv(env1_graph).conditions()


@pytest.mark.parametrize(("line", "message"), [
    ({**GOOD, "plan": ["walk('bedroom')", "switchon('radio')"]},
     "line 2: field plan: line 2: step fails: switchon radio: "),
    ({**GOOD, "goals": ["'radio' is 'switchon'", "'tv' is 'switchon'"]},
     "line 2: field goals: 'tv' is 'switchon' does not hold after the reference plan"),
    ({**GOOD, "goals": ["'tv' is 'switchoff'"]}, "line 2: field goals: 'tv' is 'switchoff' already holds"),
    ({**GOOD, "goals": ["radio is on"]}, "line 2: field goals: "),
    ({**GOOD, "plan": ["for x in ['radio']:", "\tswitchon(x)"]}, "line 2: field plan: "),
    ({"task": "turn on the radio", "plan": GOOD["plan"]}, "line 2: field goals: missing"),
    ({**GOOD, "steps": 3}, "line 2: field steps: unknown field"),
    ([1, 2], "line 2: expected an object with task, goals and plan"),
    ("{not json", "line 2"),
])
def test_a_bad_written_task_names_its_line_and_field(tmp_path: Path, env1_graph: dict, line: object,
                                                     message: str) -> None:
    with pytest.raises(DataError) as error:
        load_written(_written(tmp_path, GOOD, line), env1_graph, "env1")
    text = str(error.value)
    assert text.startswith(str(tmp_path / "env1.jsonl")) and message in text and "\n" not in text


def test_a_task_written_twice_is_refused(tmp_path: Path, progprompt_data: Path) -> None:
    for env in ("env1", "env2"):
        (tmp_path / f"{env}.jsonl").write_text((WRITTEN / f"{env}.jsonl").read_text(encoding="utf-8"),
                                               encoding="utf-8")
    with (tmp_path / "env1.jsonl").open("a", encoding="utf-8") as f:  # the training plan listen_to_radio's task
        f.write(json.dumps({**GOOD, "task": "listen to radio"}) + "\n")
    with pytest.raises(DataError, match="'listen to radio' is the same task as 'listen to radio'"):
        load_dev_set(progprompt_data, tmp_path)

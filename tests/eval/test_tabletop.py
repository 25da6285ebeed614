"""Tabletop episodes: SR (the simulated world), Exec (executed / attempted steps) and Plan SR (the symbolic
pick-and-place model) computed from what a scripted planner writes, including a right plan whose grasp slips.

Each simulated scene costs about a second to build and one per pick-and-place; the episodes of one case share
one environment (reset between them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes import EXAMPLES, ScriptedLLM
from situated.datasets.tabletop import load_tabletop_tasks, tasks_from_data
from situated.errors import DataError
from situated.eval.store import read_episodes
from situated.eval.systems.tabletop_episodes import (
    PickPlaceModel,
    TabletopCase,
    case_episode,
    evaluate_tabletop,
    make_env,
    plan_succeeds,
    tabletop_cases,
    tabletop_summary,
)
from situated.planners.progprompt_tabletop import TabletopPlanner
from situated.program import Call, Condition, parse

pytest.importorskip("pybullet")

TASKS = load_tabletop_tasks(EXAMPLES / "tabletop" / "tasks.json")
APPLE = TASKS[0]          # put the apple in the bowl; distractor: banana
SORTING = TASKS[3]        # fruits into the bowl, bottles and cans into the box
AFFORDANCES = {"apple": {"GRABBABLE"}, "banana": {"GRABBABLE"}, "bowl": {"CONTAINER"}, "box": {"CONTAINER"}}


def planner(*answers: str) -> TabletopPlanner:
    return TabletopPlanner(ScriptedLLM(list(answers)))


# --------------------------------------------------------------------------- the symbolic pick-and-place model

def test_pick_and_place_model_moves_items_into_containers_only() -> None:
    model = PickPlaceModel(AFFORDANCES)
    assert model.step(Call("grab_and_putin", ("apple", "bowl"))).ok
    assert model.holds(Condition("inside", ("apple", "bowl"))) and model.holds(Condition("on", ("apple", "bowl")))
    assert not model.holds(Condition("on", ("apple", "table"))) and model.holds(Condition("on", ("banana", "table")))
    assert model.step(Call("grab_and_putin", ("apple", "box"))).changes == ("+ apple INSIDE box", "- apple INSIDE bowl")
    for bad in (("bowl", "box"), ("apple", "banana"), ("pear", "bowl")):
        assert not model.step(Call("grab_and_putin", bad)).ok
    assert not model.step(Call("pickup", ("apple",))).ok
    assert model.holds(Condition("inside", ("apple", "bowl"), negated=True))
    model.reset()
    assert model.snapshot() == {"inside": {}}


def test_plan_success_is_judged_on_the_model_from_the_scene_facts() -> None:
    model = PickPlaceModel.of_scene(AFFORDANCES, {"banana INSIDE box", "apple ON table"})
    goal = [Condition("inside", ("apple", "bowl")), Condition("inside", ("banana", "box"))]
    assert plan_succeeds(parse("def f():\n\tgrab_and_putin('apple', 'bowl')"), model, goal)
    assert not plan_succeeds(parse("def f():\n\tgrab_and_putin('banana', 'bowl')"), model, goal)
    assert not plan_succeeds(parse("def f():\n\t# nothing"), model, goal)


def test_cases_are_each_task_without_then_with_distractors() -> None:
    cases = tabletop_cases(TASKS)
    assert [c.task_id for c in cases[:2]] == ["put_the_apple_in_the_bowl", "put_the_apple_in_the_bowl+distractors"]
    assert cases[1].names == ("apple", "bowl", "banana") and cases[0].names == ("apple", "bowl")
    (bare,) = tabletop_cases(tasks_from_data([{"task": "t", "objects": ["apple", "bowl"],
                                               "goal": ["'apple' in 'bowl'"]}]))
    assert not bare.distractors


# --------------------------------------------------------------------------- episodes in the simulated world

@pytest.fixture(scope="module")
def apple_env():
    env = make_env(TabletopCase(APPLE, True), layout_seed=0)
    yield env
    env.close()


def test_right_plan_scores_one_everywhere(apple_env) -> None:
    apple_env.reset()
    episode = case_episode(TabletopCase(APPLE, True), 0, planner("grab_and_putin('apple', 'bowl')\n"), apple_env)
    assert dict(episode.metrics) == {"success": 1.0, "exec": 1.0, "plan_success": 1.0}
    assert episode.task == "put_the_apple_in_the_bowl+distractors" and episode.details["distractors"] is True
    assert episode.details["seen"] == ["apple", "banana", "bowl"]  # what the camera saw is what the plan chose from
    assert episode.details["plan"].startswith("def put_the_apple_in_the_bowl():\n\tobjects = ['apple', 'banana'")
    assert episode.details["failures"] == [] and "apple INSIDE bowl" in episode.details["final"]


def test_plan_that_moves_the_distractor_fails_in_both_worlds(apple_env) -> None:
    apple_env.reset()
    episode = case_episode(TabletopCase(APPLE, True), 0, planner("grab_and_putin('banana', 'bowl')\n"), apple_env)
    assert dict(episode.metrics) == {"success": 0.0, "exec": 1.0, "plan_success": 0.0}
    assert episode.details["missing"] == ["'apple' in 'bowl'"]


def test_right_plan_whose_grasp_slips_has_plan_sr_but_no_sr(apple_env) -> None:
    apple_env.slip_probability = 1.0
    try:
        apple_env.reset()
        episode = case_episode(TabletopCase(APPLE, True), 0, planner("grab_and_putin('apple', 'bowl')\n"), apple_env)
    finally:
        apple_env.slip_probability = 0.0
    assert dict(episode.metrics) == {"success": 0.0, "exec": 0.0, "plan_success": 1.0}
    (failure,) = episode.details["failures"]
    assert "slipped" in failure and "grab_and_putin('apple', 'bowl')" in failure


def test_an_empty_plan_executes_nothing(apple_env) -> None:
    apple_env.reset()
    episode = case_episode(TabletopCase(APPLE, False), 0, planner("\n"), apple_env)
    assert dict(episode.metrics) == {"success": 0.0, "exec": 0.0, "plan_success": 0.0}


def test_sorting_several_items_into_two_containers_succeeds() -> None:
    case = TabletopCase(SORTING, False)
    steps = "".join(f"grab_and_putin('{g.args[0]}', '{g.args[1]}')\n\t" for g in SORTING.goal).rstrip("\t")
    env = make_env(case, layout_seed=1)
    try:
        env.reset()
        episode = case_episode(case, 0, planner("# 0: sort\n\t" + steps), env)
    finally:
        env.close()
    assert dict(episode.metrics) == {"success": 1.0, "exec": 1.0, "plan_success": 1.0}, episode.details["failures"]
    assert episode.details["attempted"] == len(SORTING.goal) == 5


# --------------------------------------------------------------------------- evaluation through the runner

def test_evaluation_runs_each_setting_stores_and_resumes(tmp_path: Path) -> None:
    llm = ScriptedLLM(["grab_and_putin('apple', 'bowl')\n", "grab_and_putin('banana', 'bowl')\n"])
    out = tmp_path / "run"
    config = {"model": "scripted"}
    episodes = evaluate_tabletop([APPLE], lambda: TabletopPlanner(llm), runs=1, out=out, config=config, seed=3)
    assert [e.task for e in episodes] == ["put_the_apple_in_the_bowl", "put_the_apple_in_the_bowl+distractors"]
    assert [e.details["layout_seed"] for e in episodes] == [3, 3]
    summary = tabletop_summary(episodes)
    assert list(summary)[:5] == ["sr", "exec", "plan_sr", "tasks", "runs"]
    assert summary["sr"] == 0.5 and summary["plan_sr"] == 0.5 and summary["exec"] == 1.0
    assert summary["tasks"] == 1 and summary["runs"] == 1
    assert summary["sr_no_distractors"] == 1.0 and summary["sr_distractors"] == 0.0
    assert summary["plan_sr_distractors"] == 0.0 and summary["exec_distractors"] == 1.0
    run, stored = read_episodes(out)
    assert run["system"] == "tabletop" and run["config"]["seed"] == 3 and len(stored) == 2
    # resuming plans nothing again (the scripted model has no answers left)
    again = evaluate_tabletop([APPLE], lambda: TabletopPlanner(ScriptedLLM()), runs=1, out=out, config=config,
                              seed=3)
    assert [dict(e.metrics) for e in again] == [dict(e.metrics) for e in episodes]


def test_objects_that_cannot_be_placed_fail_before_any_episode(tmp_path: Path) -> None:
    crowded = tasks_from_data([{"task": "everything", "objects": ["apple", "bowl"],
                                "distractors": ["box", "tray", "gift_bag", "plate", "banana", "bottle", "mug",
                                                "toy_car", "pear", "ball", "duck", "candy", "soup_can",
                                                "red_cube", "blue_cube", "green_cube", "strawberry"],
                                "goal": ["'apple' in 'bowl'"]}], "crowded.json")
    with pytest.raises(DataError, match=r"crowded.json: task 0: field 'distractors'.*cannot place"):
        evaluate_tabletop(crowded, lambda: TabletopPlanner(ScriptedLLM()), out=None, config={})

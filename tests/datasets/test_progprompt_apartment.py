"""Environment 0's test tasks in the project's apartment (`--split apartment`, reporting only): the paper's ten
test_unseen tasks, each scored against the replay of its reference plan, which reaches the task's goals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fakes import EXAMPLES, ROOT
from situated.cli import main
from situated.datasets.progprompt_apartment import TEST_UNSEEN, load_apartment_tasks
from situated.envs.household import HouseholdEnv
from situated.errors import DataError


def test_the_papers_ten_unseen_tasks_reach_their_goals_in_the_apartment() -> None:
    tasks = load_apartment_tasks()
    assert [t.name for t in tasks] == list(TEST_UNSEEN)
    assert len({t.task_id for t in tasks}) == 10
    goals = {row["task"]: row["goal"] for row in json.loads((EXAMPLES / "tasks" / "apartment_tasks.json").read_text())}
    for task in tasks:
        before = HouseholdEnv(task.initial_graph).conditions()
        after = HouseholdEnv(task.final_graph).conditions()
        assert set(goals[task.name]) <= after, task.name
        assert not set(goals[task.name]) <= before, task.name


def test_a_reference_plan_that_misses_a_goal_is_named(tmp_path: Path) -> None:
    copy = tmp_path / "examples"
    for part in ("scenes", "tasks", "plans"):
        shutil.copytree(EXAMPLES / part, copy / part)
    plan = copy / "plans" / "turn_off_light.py"
    plan.write_text("def turn_off_light():\n\t# 0: walk to the kitchen\n\twalk('kitchen')\n")
    with pytest.raises(DataError, match=r"item 1: goal 'lightswitch OFF' does not hold after turn_off_light\.py"):
        load_apartment_tasks(copy)


def test_apartment_split_refuses_another_graph_in_one_line(progprompt_data: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    assert main(["eval", "progprompt", "--data", str(progprompt_data), "--split", "apartment",
                 "--initial-graph", str(ROOT / "examples" / "scenes" / "apartment.json"),
                 "--cassette", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: --split apartment has its own scene; --initial-graph does not apply"

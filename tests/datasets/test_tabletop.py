"""Tabletop task files: the shipped tasks, and bad files refused with one line naming the file, task and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes import EXAMPLES
from situated.datasets.tabletop import load_tabletop_tasks, parse_goal, tasks_from_data
from situated.envs.tabletop.catalogue import CATALOGUE
from situated.errors import DataError
from situated.program import Condition

TASKS = EXAMPLES / "tabletop" / "tasks.json"
GOOD = {"task": "put the apple in the bowl", "objects": ["apple", "bowl"], "distractors": ["banana", "mug"],
        "goal": ["'apple' in 'bowl'"]}


def test_shipped_tasks_rise_in_difficulty_and_each_has_distractors() -> None:
    tasks = load_tabletop_tasks(TASKS)
    assert len(tasks) == 4
    moved = [len(t.goal) for t in tasks]
    assert moved == sorted(moved) and moved[0] == 1 and moved[-1] > moved[-2]
    for task in tasks:
        assert 1 <= len(task.distractors) <= 3 and not set(task.distractors) & set(task.objects)
        assert all(name in CATALOGUE for name in task.objects + task.distractors)
        assert all(g.kind in ("inside", "on") and not g.negated for g in task.goal)
    sorting = tasks[-1]
    containers = {str(g.args[1]) for g in sorting.goal}
    assert len(containers) == 2  # sorting into containers by kind
    kinds = {CATALOGUE[str(g.args[0])].kind for g in sorting.goal}
    assert len(kinds) >= 2
    assert tasks[0].task_id == "put_the_apple_in_the_bowl" and tasks[0].goal_text == ("'apple' in 'bowl'",)
    assert tasks[2].index == 2 and tasks[2].source == str(TASKS)


def test_goals_use_the_assertion_syntax() -> None:
    assert parse_goal("'apple' in 'bowl'", "x") == Condition("inside", ("apple", "bowl"))
    assert parse_goal("'apple' on 'plate'", "x") == Condition("on", ("apple", "plate"))
    assert parse_goal("not 'mug' in 'box'", "x") == Condition("inside", ("mug", "box"), negated=True)


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(("data", "message"), [
    ({"task": "x"}, "tasks.json: expected a non-empty JSON list of tasks"),
    ([], "expected a non-empty JSON list"),
    ([GOOD, {**GOOD, "task": "b", "objects": ["apel", "bowl"]}], "task 1: field 'objects': unknown object 'apel'"),
    ([{**GOOD, "objects": ["apple", "bowl", "apple"]}], "task 0: field 'objects': 'apple' appears twice"),
    ([{**GOOD, "distractors": ["apple"]}], "task 0: field 'distractors': 'apple' is already among the task's"),
    ([{**GOOD, "distractors": "mug"}], "task 0: field 'distractors': expected a list"),
    ([{**GOOD, "objects": []}], "task 0: field 'objects': expected at least one object"),
    ([{**GOOD, "goal": ["'apple' in"]}], "task 0: field 'goal': goal 0: \"'apple' in\" is not a condition"),
    ([{**GOOD, "goal": ["'apple' in 'bowl')\nimport os"]}], "task 0: field 'goal': goal 0: a goal is one line"),
    ([{**GOOD, "goal": ["'apple' in 'box'"]}], "names 'box', which is not among the task's objects"),
    ([{**GOOD, "goal": ["'mug' in 'bowl'"]}], "names 'mug', which is not among the task's objects"),
    ([{**GOOD, "goal": ["'bowl' in 'apple'"]}], "'bowl' is a container, not an item"),
    ([{**GOOD, "goal": ["'close' to 'apple'"]}], "a goal says where an item ends"),
    ([{**GOOD, "goal": []}], "task 0: field 'goal': expected a non-empty list"),
    ([{**GOOD, "colour": "red"}], "task 0: field 'colour': unknown field"),
    ([{k: v for k, v in GOOD.items() if k != "objects"}], "task 0: field 'objects': missing"),
    ([GOOD, {**GOOD, "task": "Put the apple in the bowl!"}], "task 1: field 'task': same task as task 0"),
    ([{**GOOD, "task": 3}], "task 0: field 'task': expected the instruction as text"),
])
def test_bad_task_files_are_one_line_errors_naming_task_and_field(tmp_path: Path, data: object,
                                                                  message: str) -> None:
    with pytest.raises(DataError) as err:
        load_tabletop_tasks(_write(tmp_path, data))
    text = str(err.value)
    assert text.startswith(str(tmp_path / "tasks.json")) and message in text and "\n" not in text


@pytest.mark.parametrize(("raw", "message"), [
    (b"[{\"task\": ", "tasks.json: line 1, column 11: invalid JSON"),
    (b"\xff\xfe", "not UTF-8"),
    (b'[{"task": "a", "objects": ["apple"], "goal": [], "x": NaN}]', "NaN is not a JSON number"),
])
def test_unreadable_files(tmp_path: Path, raw: bytes, message: str) -> None:
    path = tmp_path / "tasks.json"
    path.write_bytes(raw)
    with pytest.raises(DataError, match=message):
        load_tabletop_tasks(path)
    with pytest.raises(DataError, match="no such tasks file"):
        load_tabletop_tasks(tmp_path / "missing.json")


def test_tasks_without_distractors_are_allowed() -> None:
    (task,) = tasks_from_data([{k: v for k, v in GOOD.items() if k != "distractors"}], "mem")
    assert task.distractors == () and task.objects == ("apple", "bowl")

"""Tabletop task files: pick-and-place tasks with goal conditions, run with and without distractor objects.

A task file is UTF-8 JSON, a list of tasks::

    [{"task": "put the apple in the bowl", "objects": ["apple", "bowl"], "distractors": ["banana", "mug"],
      "goal": ["'apple' in 'bowl'"]}]

`objects` are the scene's necessary objects, `distractors` the objects added for the run with distractors (may
be empty); every name is a catalogue object (`situated.envs.tabletop.catalogue`), none twice. `goal` lists
conditions in the plan language's assertion syntax, `'<item>' in '<container>'` or `'<item>' on '<container>'`
(`not` allowed), each naming the task's objects: an item, then a container. Anything else is a DataError of
one line naming the file, the task and the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import files
from ..envs.tabletop.catalogue import CATALOGUE
from ..envs.tabletop.scene import MAX_OBJECTS
from ..errors import DataError, ParseError
from ..program import Assert, Condition, condition_text, parse

MAX_FILE_BYTES = 1_000_000
FIELDS = ("task", "objects", "distractors", "goal")
GOAL_KINDS = ("inside", "on")


@dataclass(frozen=True)
class TabletopTask:
    """One task of a tabletop task file (see the module docstring); `index` is its place in the file."""

    index: int
    instruction: str
    objects: tuple[str, ...]
    distractors: tuple[str, ...]
    goal: tuple[Condition, ...]
    source: str = ""

    @property
    def task_id(self) -> str:
        """The instruction as an identifier: `put_the_apple_in_the_bowl`."""
        return task_slug(self.instruction)

    @property
    def goal_text(self) -> tuple[str, ...]:
        """The goal conditions in canonical text: `'apple' in 'bowl'`."""
        return tuple(condition_text(c) for c in self.goal)


def task_slug(instruction: str) -> str:
    """`"Put the apple in the bowl"` -> `put_the_apple_in_the_bowl`."""
    return re.sub(r"[^0-9a-z]+", "_", instruction.strip().lower()).strip("_")


def parse_goal(text: str, where: str) -> Condition:
    """One goal condition (assertion syntax, without `assert(...)`); DataError naming `where` if it is not one."""
    if "\n" in text or "\r" in text:
        raise DataError(f"{where}: a goal is one line")
    try:
        program = parse(f"assert({text})")
    except ParseError as err:
        raise DataError(f"{where}: {text!r} is not a condition ({err.message})") from None
    if len(program.body) != 1 or not isinstance(program.body[0], Assert) or program.body[0].recovery:
        raise DataError(f"{where}: {text!r} is not a single condition")
    return program.body[0].condition


def load_tabletop_tasks(path: str | Path) -> list[TabletopTask]:
    """The tasks of a task file; DataError (`FILE: task N: field 'F': ...`) when it is malformed."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise DataError(f"{path}: no such tasks file")
    return tasks_from_data(files.read_json(path, what="tasks file", limit=MAX_FILE_BYTES), str(path))


def tasks_from_data(data: Any, source: str = "<tasks>") -> list[TabletopTask]:
    """Validate task data (the file's JSON) into tasks; DataError naming `source`, the task and the field."""
    if not isinstance(data, list) or not data:
        raise DataError(f"{source}: expected a non-empty JSON list of tasks like "
                        "{\"task\": ..., \"objects\": [...], \"distractors\": [...], \"goal\": [...]}")
    tasks: list[TabletopTask] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(data):
        task = _task(entry, index, source)
        if task.task_id in seen:
            raise DataError(f"{source}: task {index}: field 'task': same task as task {seen[task.task_id]}")
        seen[task.task_id] = index
        tasks.append(task)
    return tasks


def _task(entry: Any, index: int, source: str) -> TabletopTask:
    where = f"{source}: task {index}"
    if not isinstance(entry, dict):
        raise DataError(f"{where}: expected an object with the fields {', '.join(FIELDS)}")
    extra = sorted(set(entry) - set(FIELDS))
    if extra:
        raise DataError(f"{where}: field {extra[0]!r}: unknown field (expected {', '.join(FIELDS)})")
    for name in ("task", "objects", "goal"):
        if name not in entry:
            raise DataError(f"{where}: field {name!r}: missing")
    instruction = entry["task"]
    if not isinstance(instruction, str) or not task_slug(instruction):
        raise DataError(f"{where}: field 'task': expected the instruction as text, got {instruction!r}"[:300])
    objects = _names(entry["objects"], f"{where}: field 'objects'", ())
    if not objects:
        raise DataError(f"{where}: field 'objects': expected at least one object")
    distractors = _names(entry.get("distractors", []), f"{where}: field 'distractors'", objects)
    if len(objects) + len(distractors) > MAX_OBJECTS:
        raise DataError(f"{where}: field 'distractors': {len(objects) + len(distractors)} objects, at most "
                        f"{MAX_OBJECTS} fit on the table")
    goals = entry["goal"]
    if not isinstance(goals, list) or not goals or not all(isinstance(g, str) for g in goals):
        raise DataError(f"{where}: field 'goal': expected a non-empty list of conditions like \"'apple' in 'bowl'\"")
    conditions = tuple(_goal(text, f"{where}: field 'goal': goal {k}", objects) for k, text in enumerate(goals))
    return TabletopTask(index, instruction.strip(), objects, distractors, conditions, source)


def _names(value: Any, where: str, taken: tuple[str, ...]) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise DataError(f"{where}: expected a list of object names, got {type(value).__name__}")
    names: list[str] = []
    for name in value:
        if not isinstance(name, str):
            raise DataError(f"{where}: expected object names, got {name!r}"[:300])
        if name not in CATALOGUE:
            raise DataError(f"{where}: unknown object {name!r} (known: {', '.join(CATALOGUE)})"[:600])
        if name in names:
            raise DataError(f"{where}: {name!r} appears twice")
        if name in taken:
            raise DataError(f"{where}: {name!r} is already among the task's objects")
        names.append(name)
    return tuple(names)


def _goal(text: str, where: str, objects: tuple[str, ...]) -> Condition:
    condition = parse_goal(text, where)
    if condition.kind not in GOAL_KINDS or len(condition.args) != 2:
        raise DataError(f"{where}: {text!r}: a goal says where an item ends: \"'item' in 'container'\" or "
                        "\"'item' on 'container'\"")
    item, container = (str(a) for a in condition.args)
    for name in (item, container):
        if name not in objects:
            raise DataError(f"{where}: {text!r} names {name!r}, which is not among the task's objects")
    if CATALOGUE[item].is_container:
        raise DataError(f"{where}: {text!r}: {item!r} is a container, not an item")
    if not CATALOGUE[container].is_container:
        raise DataError(f"{where}: {text!r}: {container!r} is not a container")
    return condition

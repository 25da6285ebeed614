"""Fuzzing the tabletop readers: scene files and task files give a scene or tasks, or a one-line DataError naming
the file, never another exception, never a hang."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fakes import EXAMPLES, outcome
from situated.datasets.tabletop import load_tabletop_tasks
from situated.envs.tabletop.catalogue import CATALOGUE
from situated.envs.tabletop.scene import FORMAT, Scene, load_scene
from situated.errors import DataError, SituatedError

Guard = Callable[[float], AbstractContextManager[None]]
SCENE = {"format": FORMAT, "objects": [{"name": "apple", "x": 0.5, "y": 0.1, "yaw": 0.0}, {"name": "bowl"},
                                       {"name": "banana", "x": 0.45, "y": -0.2}]}
TASKS = json.loads((EXAMPLES / "tabletop" / "tasks.json").read_text())
NUMBERS = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([0.0, 0.5, -0.5, 1e308, 10**30])
NAMES = st.sampled_from([*sorted(CATALOGUE), "", "Apple", "unicorn", "\n"])





@st.composite
def scenes(draw: st.DrawFn, fuzz: SimpleNamespace) -> Any:
    scene = copy.deepcopy(SCENE)
    objects = scene["objects"]
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["name", "number", "add", "drop", "any"]))
        k = draw(st.integers(0, len(objects) - 1)) if objects else 0
        if kind == "add" or not objects:
            objects.append({"name": draw(NAMES), **draw(st.dictionaries(st.sampled_from(["x", "y", "yaw"]), NUMBERS))})
        elif kind == "name" and isinstance(objects[k], dict):
            objects[k]["name"] = draw(NAMES)
        elif kind == "number" and isinstance(objects[k], dict):
            objects[k][draw(st.sampled_from(["x", "y", "yaw"]))] = draw(NUMBERS)
        elif kind == "drop":
            del objects[k]
        elif kind == "any":
            target = draw(st.sampled_from(["format", "objects", "extra", "object"]))
            if target == "object":
                objects[k] = draw(fuzz.json_values(max_leaves=4))
            else:
                scene[target] = draw(fuzz.json_values(max_leaves=4))
    return scene


@given(data=st.data())
def test_scene_files(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard, scratch: Path) -> None:
    path = scratch / "scene.json"
    raw = fuzz.dumps(data.draw(scenes(fuzz)))
    path.write_bytes(data.draw(fuzz.mutated(st.just(raw))) if data.draw(st.integers(0, 3)) == 0 else raw)
    with no_hang(10):
        scene = outcome(lambda: load_scene(path, seed=data.draw(st.integers(0, 2**32))))
    if isinstance(scene, Scene):
        assert all(math.isfinite(v) for p in scene.placements for v in (p.x, p.y, p.yaw))
    else:
        assert isinstance(scene, DataError) and str(scene).startswith(f"{path}: ")


@st.composite
def task_lists(draw: st.DrawFn, fuzz: SimpleNamespace) -> Any:
    tasks = copy.deepcopy(TASKS[: draw(st.integers(0, len(TASKS)))])
    for _ in range(draw(st.integers(0, 3))):
        if not tasks:
            break
        task = tasks[draw(st.integers(0, len(tasks) - 1))]
        name = draw(st.sampled_from(["task", "objects", "distractors", "goal", "extra"]))
        kind = draw(st.sampled_from(["name", "goal", "any", "drop"]))
        if kind == "drop" and name in task:
            del task[name]
        elif kind == "name" and isinstance(task.get(name), list):
            task[name].append(draw(NAMES))
        elif kind == "goal":
            task["goal"] = [draw(st.sampled_from(["'apple' in 'bowl'", "'bowl' in 'apple'", "not 'apple' on 'box'",
                                                  "'apple' in 'bowl' and 'x'", "assert(", "'a' in 'b'\n"]))]
        else:
            task[name] = draw(fuzz.json_values(max_leaves=4))
    return tasks


@given(data=st.data())
def test_task_files(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard, scratch: Path) -> None:
    path = scratch / "tasks.json"
    raw = fuzz.dumps(data.draw(task_lists(fuzz)))
    path.write_bytes(data.draw(fuzz.mutated(st.just(raw))) if data.draw(st.integers(0, 3)) == 0 else raw)
    with no_hang(10):
        tasks = outcome(lambda: load_tabletop_tasks(path))
    if isinstance(tasks, SituatedError):
        assert str(tasks).startswith(f"{path}: ")
    else:
        assert tasks and all(t.goal for t in tasks)

"""Fuzzing the household readers: scene graphs (dict and file), plan programs (strict and tolerant), ProgPrompt
task files and graphs, goal files. Any input gives a value or a one-line SituatedError, never another exception,
never a hang; a scene that loads can be used (reset, described, its conditions listed, a step taken)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fakes import APARTMENT, EXAMPLES, kitchen, outcome
from situated.actions import PROGPROMPT_SPACE
from situated.datasets.progprompt import load_example_plans, load_split
from situated.datasets.task_goals import goals_for
from situated.envs.household import HouseholdEnv
from situated.envs.household.graph import SceneGraph
from situated.errors import SituatedError
from situated.program import Call, parse
from situated.program.reading import read_plan

Guard = Callable[[float], AbstractContextManager[None]]





def _containers(value: Any, path: tuple = ()) -> Iterator[tuple]:
    if isinstance(value, dict | list):
        yield path
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            yield from _containers(item, (*path, key))


def _like(value: Any) -> st.SearchStrategy[Any]:
    """Another value of the same JSON type (odd but well-typed: empty or strange text, huge or negative ids)."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.integers(-(10**30), 10**30) | st.sampled_from([0, -1, value + 1])
    if isinstance(value, float):
        return st.floats(allow_nan=False, allow_infinity=False)
    if isinstance(value, str):
        return st.text(max_size=10) | st.sampled_from(["", " ", "CHARACTER", "character", "\n", value.upper()])
    if isinstance(value, list):
        return st.permutations(value) | st.just(value + value) | st.just([])
    return st.just(value)


@st.composite
def tweaked(draw: st.DrawFn, value: Any, fuzz: SimpleNamespace, changes: int = 3) -> Any:
    """`value` with 1 to `changes` changes at random places: a part replaced by another of its type or by any JSON
    value (NaN, 120-digit integers, nesting), a key or item dropped, an item repeated, a key added."""
    value = copy.deepcopy(value)
    for _ in range(draw(st.integers(1, changes))):
        paths = list(_containers(value))
        if not paths:
            return draw(fuzz.json_values(max_leaves=6))
        path = draw(st.sampled_from(paths))
        node = value
        for key in path:
            node = node[key]
        keys = list(node.keys()) if isinstance(node, dict) else list(range(len(node)))
        kind = draw(st.sampled_from(["same type", "same type", "replace", "drop", "repeat", "add"]))
        if kind == "add" or not keys:
            if isinstance(node, dict):
                node[draw(st.text(max_size=8))] = draw(fuzz.json_values(max_leaves=4))
            else:
                node.append(draw(fuzz.json_values(max_leaves=4)))
            continue
        key = draw(st.sampled_from(keys))
        if kind == "same type":
            node[key] = draw(_like(node[key]))
        elif kind == "replace":
            node[key] = draw(fuzz.json_values(max_leaves=6))
        elif kind == "drop":
            del node[key]
        elif isinstance(node, list):
            node.append(copy.deepcopy(node[key]))
        else:
            node[draw(st.text(max_size=8))] = copy.deepcopy(node[key])
    return value


def use(env: HouseholdEnv) -> None:
    """What a command does with a scene once it is loaded."""
    env.reset()
    env.describe()
    env.conditions()
    names = env.object_names()
    for name in list(names)[:3]:
        env.step(Call("walk", (name,)))
        env.step(Call("grab", (name,)))


@given(data=st.data())
def test_scene_graph_from_any_tweaked_dict(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard) -> None:
    graph = data.draw(tweaked(kitchen(), fuzz))
    with no_hang(10):
        loaded = outcome(lambda: SceneGraph.from_dict(graph, "g.json"))
        if isinstance(loaded, SceneGraph):
            assert len(loaded.to_dict()["nodes"]) == len(loaded) == len(graph["nodes"])  # ids are unique
            env = outcome(lambda: HouseholdEnv(graph))
            if isinstance(env, HouseholdEnv):
                outcome(lambda: use(env))
        else:
            assert str(loaded).startswith("g.json: ")


APARTMENT_BYTES = APARTMENT.read_bytes()
APARTMENT_GRAPH = json.loads(APARTMENT_BYTES)


@given(data=st.data())
def test_scene_file_from_any_bytes(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard,
                                   scratch: Path) -> None:
    path = scratch / "scene.json"
    tweaked_file = st.builds(fuzz.dumps, tweaked(APARTMENT_GRAPH, fuzz, changes=2))
    path.write_bytes(data.draw(tweaked_file | fuzz.mutated(st.just(APARTMENT_BYTES)) | fuzz.hostile_json))
    with no_hang(10):
        env = outcome(lambda: HouseholdEnv.from_file(path))
        if isinstance(env, HouseholdEnv):
            outcome(lambda: use(env))
        else:
            assert str(env).startswith(f"{path}: ") or str(env).startswith(f"{path!r}")


PLAN_BYTES = [p.read_bytes() for p in sorted((EXAMPLES / "plans").glob("*.py"))]
PLAN_PIECES = st.sampled_from([
    "\n\t", "\n\t\t", "\n", "(", ")", "'", '"', ",", ":", "if ", "else:", "for ", " in ", "assert(", "walk(",
    "grab('salmon')", "'salmon' in 'microwave'", "not ", "and ", "__class__", "import os", "def f():", "#",
    "\\", "\x00", "\ud800", "é", "lambda", "[", "]", "0" * 5000, "1e999", "    ", "\r\n",
])


@st.composite
def plan_texts(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(PLAN_PIECES | st.text(max_size=6), max_size=40))
    return draw(st.sampled_from(["def t():\n\t", ""])) + "".join(pieces)


@given(data=st.data())
def test_plans_parse_to_a_program_or_an_error(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard) -> None:
    source: str | bytes = data.draw(plan_texts() | fuzz.mutated(st.sampled_from(PLAN_BYTES)))
    with no_hang(10):
        outcome(lambda: parse(source, source="p.py"))


OBJECTS = ("salmon", "microwave", "fridge", "kitchen", "plate")


@given(data=st.data())
def test_model_text_is_read_tolerantly(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard) -> None:
    raw = data.draw(plan_texts() | fuzz.mutated(st.sampled_from(PLAN_BYTES)).map(
        lambda b: b.decode("utf-8", "replace")))
    text = raw.split("\n", 1)[-1] if raw.startswith("def ") else raw  # a model writes the body
    with no_hang(10):
        result = outcome(lambda: read_plan(text, PROGPROMPT_SPACE, OBJECTS))
    if not isinstance(result, SituatedError):
        assert all(isinstance(p, str) and "\n" not in p for p in result.problems)


TASK_LINE = {"watch tv": {"0: walk to living room": ["<char0> [walk] <livingroom> (2)"],
                          "1: switch on tv": ["<char0> [find] <tv> (41)", "<char0> [switchon] <tv> (41)"],
                          "2: Done": []}}


@given(data=st.data())
def test_progprompt_task_files(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard, scratch: Path) -> None:
    lines = data.draw(st.lists(tweaked(TASK_LINE, fuzz, changes=2) | st.just(TASK_LINE), min_size=1, max_size=3))
    raw = b"\n".join(fuzz.dumps(line) for line in lines)
    if data.draw(st.booleans()):
        raw = data.draw(fuzz.mutated(st.just(raw)))
    (scratch / "new_env").mkdir(exist_ok=True)
    (scratch / "new_env" / "env1_annotated.json").write_bytes(raw)
    graph = scratch / "graph.json"
    graph.write_bytes(fuzz.dumps(data.draw(tweaked(kitchen(), fuzz) | st.just(kitchen()))))
    with no_hang(10):
        outcome(lambda: load_split(scratch, "env1", initial_graph=graph))


@given(data=st.data())
def test_example_plan_sets(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard, scratch: Path) -> None:
    plans = {"watch_tv": "def watch_tv():\n\twalk('livingroom')\n", "eat": "def eat():\n\tgrab('apple')\n"}
    path = scratch / "plans.json"
    path.write_bytes(data.draw(fuzz.mutated(st.builds(fuzz.dumps, tweaked(plans, fuzz) | st.just(plans)))))
    with no_hang(10):
        result = outcome(lambda: load_example_plans(path))
    assert isinstance(result, SituatedError) or all(isinstance(t, str) for t in result.values())


GOALS = json.loads((EXAMPLES / "tasks" / "apartment_tasks.json").read_text())


@given(data=st.data())
def test_goal_files(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard, scratch: Path) -> None:
    path = scratch / "tasks.json"
    path.write_bytes(data.draw(fuzz.mutated(st.builds(fuzz.dumps, tweaked(GOALS[:3], fuzz)))))
    with no_hang(10):
        result = outcome(lambda: goals_for(path, "watch tv"))
    assert result is None or isinstance(result, SituatedError) or all(isinstance(g, str) for g in result)

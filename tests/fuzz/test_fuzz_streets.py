"""Fuzzing the navigation readers: street graph files (`nodes.txt`, `links.txt`) and instance files (JSON lines)
give a dataset or a one-line DataError naming the file, never another exception, never a hang; a dataset that
loads can be navigated (gold and forward agents, metrics)."""

from __future__ import annotations

import copy
import json
import math
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakes import STREET_LINKS, STREET_NODES, outcome
from situated.datasets.map2seq import NavDataset, load_split
from situated.envs.streets.env import StreetEnv
from situated.envs.streets.visibility import NoVisibility
from situated.errors import DataError
from situated.eval.systems.navigation_episodes import navigation_episode
from situated.planners.nav_baselines import make_agent

Guard = Callable[[float], AbstractContextManager[None]]
INSTANCE = {"id": 1, "route_panoids": ["A", "B", "C", "D"], "navigation_text": "Go north.", "start_heading": 0}


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="situated-fuzz-") as folder:
        root = Path(folder) / "map2seq_unseen"
        (root / "graph").mkdir(parents=True)
        (root / "data").mkdir()
        yield root




FIELD = st.sampled_from([
    "", " ", "A", "B", "Z", "0", "-1", "90", "359.9", "360", "1e308", "1e999", "nan", "NaN", "inf", "-inf",
    "9" * 5000, "0x10", "1_000", "é", "\x00", '"', "A,B", "40.0001", "-74.0",
]) | st.text(max_size=6)


@st.composite
def graph_text(draw: st.DrawFn, base: str, fuzz: SimpleNamespace) -> bytes:
    """`base` with some lines edited field by field (odd numbers, ids, separators), or mutated as bytes."""
    lines = base.splitlines()
    for _ in range(draw(st.integers(0, 3))):
        k = draw(st.integers(0, len(lines)))
        kind = draw(st.sampled_from(["field", "field", "drop", "repeat", "new"]))
        if kind == "new" or k == len(lines):
            lines.insert(k, ",".join(draw(st.lists(FIELD, max_size=6))))
        elif kind == "drop":
            del lines[k]
        elif kind == "repeat":
            lines.insert(k, lines[k])
        else:
            parts = lines[k].split(",")
            parts[draw(st.integers(0, len(parts) - 1))] = draw(FIELD)
            lines[k] = ",".join(parts)
    raw = "\n".join(lines).encode("utf-8", "surrogatepass") + b"\n"
    return draw(fuzz.mutated(st.just(raw))) if draw(st.integers(0, 3)) == 0 else raw


@st.composite
def instance_lines(draw: st.DrawFn, fuzz: SimpleNamespace) -> bytes:
    records: list[Any] = []
    for number in range(draw(st.integers(0, 3))):
        record: Any = {**copy.deepcopy(INSTANCE), "id": number + 1}
        if draw(st.booleans()):
            name = draw(st.sampled_from([*record, "route_id"]))
            if draw(st.booleans()) and name in record:
                del record[name]
            else:
                record[name] = draw(fuzz.json_values(max_leaves=4) | FIELD)
        if draw(st.integers(0, 5)) == 0:
            record = draw(fuzz.json_values(max_leaves=4))
        records.append(record)
    raw = b"\n".join(fuzz.dumps(r) for r in records) + b"\n"
    return draw(fuzz.mutated(st.just(raw))) if draw(st.integers(0, 3)) == 0 else raw


def navigate(loaded: NavDataset) -> None:
    """What `situated navigate` and `navigate show` do with a dataset once it is loaded."""
    for agent in ("gold", "forward"):
        env = StreetEnv(loaded.graph, NoVisibility(), max_steps=None if agent == "gold" else 20)
        for instance in loaded.instances:
            episode = navigation_episode(env, make_agent(agent, graph=loaded.graph, seed=0), instance)
            assert all(math.isfinite(v) for v in episode.metrics.values())


@given(data=st.data())
def test_street_graph_files(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard, scratch: Path) -> None:
    (scratch / "graph" / "nodes.txt").write_bytes(data.draw(graph_text(STREET_NODES, fuzz)))
    (scratch / "graph" / "links.txt").write_bytes(data.draw(graph_text(STREET_LINKS, fuzz)))
    (scratch / "data" / "dev.json").write_text(json.dumps(INSTANCE) + "\n")
    with no_hang(10):
        loaded = outcome(lambda: load_split(scratch, "dev"))
        if isinstance(loaded, NavDataset):
            outcome(lambda: navigate(loaded))
        else:
            assert isinstance(loaded, DataError) and str(scratch) in str(loaded)


@given(data=st.data())
def test_instance_files(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard, scratch: Path) -> None:
    (scratch / "graph" / "nodes.txt").write_text(STREET_NODES)
    (scratch / "graph" / "links.txt").write_text(STREET_LINKS)
    (scratch / "data" / "dev.json").write_bytes(data.draw(instance_lines(fuzz)))
    with no_hang(10):
        loaded = outcome(lambda: load_split(scratch, "dev"))
        if isinstance(loaded, NavDataset):
            assert loaded.instances and all(math.isfinite(i.start_heading) for i in loaded.instances)
            outcome(lambda: navigate(loaded))
        else:
            assert isinstance(loaded, DataError) and "dev.json" in str(loaded)


ROUTE_WORDS = st.sampled_from(["left", "right", "turn_around", "stop", "at", "intersection", "the", "turn", "start",
                               "steps", "step", "after", "0", "1", "7", "59", "60", "999999999999", "-1", "\n",
                               "import os", "__import__('os')", "é", "\x00"])


@given(data=st.data())
def test_any_route_text_is_read_into_bounded_legs_or_one_line_error(no_hang: Guard, data: st.DataObject) -> None:
    """Model-written route text: the tolerant reader never fails and keeps counts within MAX_COUNT with at most
    one stop, last; the strict reader gives the same legs or a DataError naming the line."""
    from situated.planners.velma_route import MAX_COUNT, parse_route

    line = st.builds("{} {}".format, st.sampled_from(["left", "right", "turn_around", "stop", "Stop", "go"]),
                     st.sampled_from(["at intersection 2", "at the start", "3 steps after the turn", "1 step after "
                                      "intersection 99999", "0 steps after the start", "at intersection", "now"]))
    lines = st.lists(line | st.lists(ROUTE_WORDS, max_size=8).map(" ".join), max_size=12).map("\n".join)
    text = data.draw(lines | st.text(max_size=200))
    with no_hang(5.0):
        legs = parse_route(text, strict=False)
        strict = outcome(lambda: parse_route(text))
    assert all(0 <= leg.intersections <= MAX_COUNT and 0 <= leg.steps <= MAX_COUNT for leg in legs)
    assert [leg.action for leg in legs].count("stop") <= 1 and all(leg.action != "stop" for leg in legs[:-1])
    if isinstance(strict, DataError):
        assert str(strict).startswith("route line ") and "\n" not in str(strict)
    else:
        assert strict == legs

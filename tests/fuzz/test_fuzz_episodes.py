"""Fuzzing episode records and the results store: a tweaked record gives an Episode or a one-line DataError; a
mutated `episodes.jsonl` opens (only a cut-off last line repaired) or is refused without being changed."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fakes import outcome
from situated.errors import DataError, SituatedError
from situated.eval.episode import Cost, Episode
from situated.eval.store import EPISODES_FILE, ResultsStore, read_episodes
from situated.trace import StepEvent, SubgoalEvent, Trace

Guard = Callable[[float], AbstractContextManager[None]]


def episode(task: str, run: int = 0) -> Episode:
    trace = Trace([SubgoalEvent(0, "put salmon in microwave", 2),
                   StepEvent("grab('salmon')", True, "", ("character HOLDS_RH salmon",), 3, 0)])
    return Episode(task, f"task {task}", run, {"success": 1.0, "exec": 0.5}, trace, Cost(10, 100, 1, 0.1, 0.2),
                   {"plan": "def t():\n\tgrab('salmon')\n"})


RECORD = episode("1").to_dict()





@st.composite
def tweaked_record(draw: st.DrawFn, fuzz: SimpleNamespace) -> Any:
    """The record with one or two fields (at any depth) replaced by any JSON value or dropped."""
    record = copy.deepcopy(RECORD)
    for _ in range(draw(st.integers(1, 2))):
        node = record
        path = draw(st.sampled_from([(), ("metrics",), ("cost",), ("details",), ("events",), ("events", 0),
                                     ("events", 1), ("events", 1, "changes")]))
        try:
            for key in path:
                node = node[key]
        except (KeyError, IndexError, TypeError):
            continue
        if isinstance(node, dict):
            key = draw(st.sampled_from([*node, "extra"]))
            if draw(st.booleans()) and key in node:
                del node[key]
            else:
                node[key] = draw(fuzz.json_values(max_leaves=5))
        elif isinstance(node, list) and node:
            node[draw(st.integers(0, len(node) - 1))] = draw(fuzz.json_values(max_leaves=5))
    return record


@given(data=st.data())
def test_episode_from_any_record(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard) -> None:
    record = data.draw(tweaked_record(fuzz) | fuzz.json_values())
    with no_hang(10):
        result = outcome(lambda: Episode.from_dict(record, "e.jsonl: line 1"))
    if isinstance(result, Episode):
        assert json.loads(json.dumps(result.to_dict()))["task"] == result.task  # writes back
    else:
        assert isinstance(result, DataError) and str(result).startswith("e.jsonl: line 1: ")


def _lines(fuzz: SimpleNamespace, draw: st.DrawFn) -> bytes:
    records = [episode(str(k)).to_dict() for k in range(3)]
    lines = [json.dumps(r).encode() for r in records]
    if draw(st.booleans()):
        lines[draw(st.integers(0, 2))] = fuzz.dumps(draw(tweaked_record(fuzz)))
    raw = b"\n".join(lines) + draw(st.sampled_from([b"\n", b"", b"\n\n", b" "]))
    return draw(fuzz.mutated(st.just(raw))) if draw(st.booleans()) else raw


@given(data=st.data())
def test_store_opens_or_refuses_a_mutated_results_file(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard,
                                                      scratch: Path) -> None:
    folder = scratch / "store"
    if folder.exists():
        shutil.rmtree(folder)
    with ResultsStore(folder, {"model": "m"}, system="household"):
        pass  # writes run.json
    path = folder / EPISODES_FILE
    raw = _lines(fuzz, data.draw)
    path.write_bytes(raw)
    with no_hang(10):
        read = outcome(lambda: read_episodes(folder))
        store = ResultsStore(folder, {"model": "m"}, system="household")
        opened = outcome(store.open)
    store.close()
    after = path.read_bytes()
    assert isinstance(read, SituatedError) == isinstance(opened, SituatedError)  # reports read what resumes
    if isinstance(opened, SituatedError):
        assert after == raw, "a refused results file was changed"
        return
    # Opened: at most the cut-off last line was repaired (dropped, or completed with its newline).
    complete = raw.rpartition(b"\n")[0]
    assert after in (raw, raw + b"\n", complete + b"\n" if complete or raw.startswith(b"\n") else b"")
    assert after == b"" or after.endswith(b"\n")
    assert len(store.episodes) == len({e.key for e in store.episodes})
    assert [e.key for e in read[1]] == [e.key for e in store.episodes][: len(read[1])]

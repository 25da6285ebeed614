"""The one results store: resumable, idempotent by episode key, one writer, and nothing lost or doubled when a
process dies at any moment — tested with real processes killed by SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fakes import ROOT, write_street_dataset
from situated.errors import DataError
from situated.eval.episode import Cost, Episode
from situated.eval.store import EPISODES_FILE, ResultsStore, read_episodes
from situated.trace import StepEvent, Trace


def episode(task: str, run: int = 0, tc: float = 1.0) -> Episode:
    trace = Trace([StepEvent("forward()", True, "", ("at B facing 0",), 1, 0)])
    return Episode(task, f"go to {task}", run, {"tc": tc}, trace, Cost(tokens=3, calls=1), {"path": ["A", "B"]})


def test_episodes_round_trip_and_resume(tmp_path: Path) -> None:
    with ResultsStore(tmp_path, {"agent": "forward"}, system="navigation") as store:
        store.add(episode("1"))
        store.add(episode("2", tc=0.0))
    with ResultsStore(tmp_path, {"agent": "forward"}, system="navigation") as store:
        assert ("1", 0) in store and ("2", 0) in store and len(store) == 2
        back = store.select([("2", 0), ("1", 0), ("9", 0)])
    assert [e.task for e in back] == ["2", "1"]
    assert back[1] == episode("1")  # every field survives, the trace and cost included
    run, stored = read_episodes(tmp_path)
    assert run["system"] == "navigation" and run["config"] == {"agent": "forward"} and len(stored) == 2


def test_a_key_is_written_once(tmp_path: Path) -> None:
    with ResultsStore(tmp_path, {}, system="navigation") as store:
        store.add(episode("1"))
        with pytest.raises(DataError, match="already recorded"):
            store.add(episode("1"))
    assert len((tmp_path / EPISODES_FILE).read_text().splitlines()) == 1


def test_another_configuration_is_refused_naming_what_differs(tmp_path: Path) -> None:
    with ResultsStore(tmp_path, {"model": "a", "split": "env1"}, system="household") as store:
        store.add(episode("1"))
    with pytest.raises(DataError, match=r"another configuration \(model: 'a' there, 'b' now\)"):
        ResultsStore(tmp_path, {"model": "b", "split": "env1"}, system="household").open()
    with pytest.raises(DataError, match="holds household episodes, not navigation"):
        ResultsStore(tmp_path, {"model": "a", "split": "env1"}, system="navigation").open()


def test_a_cut_off_last_line_is_dropped_and_a_whole_one_completed(tmp_path: Path) -> None:
    with ResultsStore(tmp_path, {}, system="navigation") as store:
        store.add(episode("1"))
    path = tmp_path / EPISODES_FILE
    whole = json.dumps(episode("2").to_dict())
    with path.open("a") as handle:
        handle.write(whole)  # the newline never made it to disk
    with ResultsStore(tmp_path, {}, system="navigation") as store:
        assert len(store) == 2
        store.add(episode("3"))
    assert [json.loads(line)["task"] for line in path.read_text().splitlines()] == ["1", "2", "3"]
    with path.open("a") as handle:
        handle.write(whole[: len(whole) // 2])  # half a line: an interrupted write
    with ResultsStore(tmp_path, {}, system="navigation") as store:
        assert len(store) == 3
    assert path.read_text().endswith("\n") and len(path.read_text().splitlines()) == 3


def test_a_bad_complete_line_is_an_error_that_changes_nothing(tmp_path: Path) -> None:
    with ResultsStore(tmp_path, {}, system="navigation") as store:
        store.add(episode("1"))
        store.add(episode("2"))
    path = tmp_path / EPISODES_FILE
    lines = path.read_text().splitlines()
    damaged = "\n".join([lines[0], "garbage", lines[1]]) + "\n"
    path.write_text(damaged)
    with pytest.raises(DataError, match=r"episodes.jsonl: line 2: not a JSON episode record"):
        ResultsStore(tmp_path, {}, system="navigation").open()
    assert path.read_text() == damaged
    path.write_text(damaged.replace("garbage\n", ""))
    path.write_text(path.read_text() + lines[0] + "\n")
    with pytest.raises(DataError, match="line 3: episode '1' run 0 is already on line 1"):
        ResultsStore(tmp_path, {}, system="navigation").open()
    record = json.loads(lines[0])
    record["metrics"]["tc"] = "yes"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(DataError, match=r"line 1: field 'metrics.tc': expected a finite number"):
        ResultsStore(tmp_path, {}, system="navigation").open()


def test_results_of_an_older_version_are_refused(tmp_path: Path) -> None:
    (tmp_path / EPISODES_FILE).write_text('{"task": "watch tv", "task_index": 0, "run": 0}\n')
    with pytest.raises(DataError, match=r"without a run\.json"):
        ResultsStore(tmp_path, {}, system="household").open()


def test_one_writer_per_directory_across_processes(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, time
            from situated.eval.store import ResultsStore
            with ResultsStore({str(tmp_path)!r}, {{}}, system="navigation"):
                print("locked", flush=True)
                time.sleep(30)
        """)], stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(DataError, match="being written by another evaluation"):
            ResultsStore(tmp_path, {}, system="navigation").open()
    finally:
        holder.kill()
        holder.wait()
    with ResultsStore(tmp_path, {}, system="navigation") as store:  # the dead holder's lock went with it
        store.add(episode("1"))


def test_memory_store_keeps_episodes_without_files(tmp_path: Path) -> None:
    with ResultsStore(None, {}, system="navigation") as store:
        store.add(episode("1"))
        assert store.episodes == [episode("1")]
    assert list(tmp_path.iterdir()) == []


# A child that runs `situated navigate` and, while appending its second episode, writes half the line, says
# so and waits: the parent kills it with SIGKILL right there, in the middle of the write.
CHILD = """
import sys, time
from situated.eval import store

real_append = store._append
count = 0

def half_then_hang(path, data):
    global count
    if path.name == "episodes.jsonl":
        count += 1
        if count == 2:
            real_append(path, data[: len(data) // 2])
            print("half written", flush=True)
            time.sleep(60)
    real_append(path, data)

store._append = half_then_hang
from situated.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_sigkill_in_the_middle_of_a_write_loses_nothing_and_doubles_nothing(tmp_path: Path) -> None:
    data = write_street_dataset(tmp_path)
    args = ["navigate", "--data", str(data), "--agent", "random", "--json", "--out", str(tmp_path / "out")]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    child = subprocess.Popen([sys.executable, "-c", CHILD, *args], stdout=subprocess.PIPE, text=True, env=env)
    assert child.stdout is not None and child.stdout.readline().strip() == "half written"
    os.kill(child.pid, signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL
    path = tmp_path / "out" / "map2seq_dev_random-seed0" / EPISODES_FILE
    assert not path.read_bytes().endswith(b"\n")  # killed mid-line
    resumed = subprocess.run([sys.executable, "-m", "situated", *args], capture_output=True, text=True, env=env,
                             check=True)
    clean = subprocess.run([sys.executable, "-m", "situated", *args[:-1], str(tmp_path / "clean")],
                           capture_output=True, text=True, env=env, check=True)
    lines = path.read_text().splitlines()
    assert sorted(json.loads(line)["task"] for line in lines) == ["1", "2", "3"]
    assert resumed.stdout.splitlines()[-1] == clean.stdout.splitlines()[-1]

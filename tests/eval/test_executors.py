"""Executors: the same evaluation in this process, in worker processes and on Ray gives the same episodes; a
worker that dies mid-run costs a rerun, never a lost or doubled episode; the command-line choice of executor.

Household episodes replay recorded calls of the 0.5B model (tests/cassettes/progprompt_qwen0.5b.jsonl), so no
weights are loaded; navigation uses the gold and forward agents on the small street dataset of `fakes`.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from fakes import CASSETTES, write_street_dataset
from situated.cli import main
from situated.datasets.map2seq import load_split
from situated.datasets.progprompt import load_split as load_household
from situated.errors import SituatedError
from situated.eval.executors import (
    ModelSpec,
    ProcessExecutor,
    RayExecutor,
    SequentialExecutor,
    ThreadExecutor,
    choose_executor,
)
from situated.eval.store import EPISODES_FILE, read_episodes
from situated.eval.summary import summarize
from situated.eval.systems.household_episodes import HouseholdJob, evaluate_household_job
from situated.eval.systems.household_metrics import HOUSEHOLD_METRICS
from situated.eval.systems.navigation_episodes import NavigationJob, evaluate_navigation_job, navigation_summary
from situated.planners.feedback import DEFAULT_REPAIRS

CASSETTE = CASSETTES / "progprompt_qwen0.5b.jsonl"
MODEL = "llamacpp:qwen2.5-coder-0.5b"


def household_job(progprompt_data: Path) -> HouseholdJob:
    plans = json.loads((progprompt_data / "pythonic_plans" / "train_complete_plan_set.json").read_text())
    spec = ModelSpec(MODEL, cassette=str(CASSETTE), cassette_mode="replay")
    return HouseholdJob(spec, tuple(plans.items()), repairs=DEFAULT_REPAIRS)


def stored_keys(out: Path) -> list[tuple[str, int]]:
    return [e.key for e in read_episodes(out)[1]]


def test_process_pool_gives_the_sequential_navigation_results(tmp_path: Path) -> None:
    data = write_street_dataset(tmp_path)
    dev = load_split(data, "dev")
    results = {}
    for agent in ("gold", "forward"):
        job = NavigationJob(agent, str(data), max_steps=None if agent == "gold" else 55)
        one = evaluate_navigation_job(job, dev.instances, SequentialExecutor(), out=None, config={})
        many = evaluate_navigation_job(job, dev.instances, ProcessExecutor(2), out=tmp_path / agent, config={})
        assert [(e.key, e.metrics, e.details["actions"]) for e in many] == \
               [(e.key, e.metrics, e.details["actions"]) for e in one]
        assert sorted(stored_keys(tmp_path / agent)) == sorted(e.key for e in one)
        results[agent] = navigation_summary(many)
    assert results["gold"]["tc"] == 100.0 and results["forward"]["tc"] < 100.0


def test_process_pool_reruns_the_episodes_of_a_killed_worker(progprompt_data: Path, tmp_path: Path) -> None:
    tasks = load_household(progprompt_data, "env1")[:2]
    job = household_job(progprompt_data)
    sequential = evaluate_household_job(tasks, job, SequentialExecutor(), out=None, config={})
    pool = ProcessExecutor(2)
    killed: list[int] = []

    def kill_one_worker() -> None:
        deadline = time.monotonic() + 60
        while not killed and time.monotonic() < deadline:
            for child in multiprocessing.active_children():
                if child.pid:
                    os.kill(child.pid, signal.SIGKILL)
                    killed.append(child.pid)
                    return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_one_worker, daemon=True)
    killer.start()
    episodes = evaluate_household_job(tasks, job, pool, out=tmp_path / "out", config={})
    killer.join()
    assert killed and pool.restarts == 1
    keys = stored_keys(tmp_path / "out")
    assert len(keys) == len(set(keys)) == len(tasks)
    assert [(e.key, e.metrics, e.details["program"]) for e in episodes] == \
           [(e.key, e.metrics, e.details["program"]) for e in sequential]


def eval_args(progprompt_data: Path, out: Path, *extra: str) -> list[str]:
    return ["eval", "progprompt", "--data", str(progprompt_data), "--split", "env1", "--limit", "2",
            "--model", MODEL, "--cassette", str(CASSETTE), "--cassette-mode", "replay", "--out", str(out), "--json",
            *extra]


def last_json(capsys: pytest.CaptureFixture[str]) -> dict:
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    summary.pop("out")
    return summary


def test_cli_jobs_give_the_summary_of_one_job(progprompt_data: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(eval_args(progprompt_data, tmp_path / "one")) == 0
    one = last_json(capsys)
    assert main(eval_args(progprompt_data, tmp_path / "two", "--jobs", "2")) == 0  # replayed: 2 processes
    assert last_json(capsys) == one
    assert sorted(stored_keys(tmp_path / "two")) == sorted(stored_keys(tmp_path / "one"))


def test_choice_of_executor() -> None:
    replayed = ModelSpec(MODEL, cassette="c.jsonl", cassette_mode="replay")
    recording = ModelSpec(MODEL, cassette="c.jsonl", cassette_mode="record")
    assert isinstance(choose_executor("local", 1, replayed)[0], SequentialExecutor)
    assert isinstance(choose_executor("local", 2, replayed)[0], ProcessExecutor)
    executor, spec = choose_executor("local", 2, ModelSpec(MODEL), cpus=4)  # 2 processes, 2 llama threads each
    assert isinstance(executor, ProcessExecutor) and spec is not None and spec.threads == 2
    executor, spec = choose_executor("batched", 3, ModelSpec(MODEL))  # 3 sequences of one context
    assert isinstance(executor, ThreadExecutor) and spec is not None and spec.sequences == 3
    with pytest.raises(SituatedError, match="batched needs an embedded model"):
        choose_executor("batched", 2, replayed)
    assert isinstance(choose_executor("local", 4, ModelSpec("openai:m"))[0], ThreadExecutor)
    executor, spec = choose_executor("ray", 2, ModelSpec(MODEL), ray_address="10.0.0.1:6379")
    assert isinstance(executor, RayExecutor) and executor.address == "10.0.0.1:6379" and executor.cpus == 1
    assert isinstance(choose_executor("batched", 2, recording)[0], ThreadExecutor)  # one process may record
    with pytest.raises(SituatedError, match="--jobs must be 1 to record a cassette"):
        choose_executor("local", 2, recording)
    with pytest.raises(SituatedError, match="--executor ray cannot be used to record"):
        choose_executor("ray", 1, recording)
    with pytest.raises(SituatedError, match="--executor must be one of"):
        choose_executor("slurm", 2)


def test_bad_executor_option_is_one_line(progprompt_data: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(eval_args(progprompt_data, tmp_path / "out", "--executor", "slurm")) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "--executor" in err and "\n" not in err


# ---------------------------------------------------------------------------------------------- Ray
@pytest.fixture(scope="module")
def ray_instance(tmp_path_factory: pytest.TempPathFactory):
    """A local Ray instance with 2 CPUs for this module (temporary directory under pytest's), shut down after."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'situated[ray]'); "
                                            "the Ray executor tests need it")
    import situated

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_USAGE_STATS_ENABLED", "0")
        patch.setenv("RAY_AUTH_MODE", "disabled")  # no token file in ~/.ray for a throwaway instance
        # the workers import the `situated` under test, wherever this run found it
        patch.setenv("PYTHONPATH", os.pathsep.join([str(Path(situated.__file__).parents[1]),
                                                    os.environ.get("PYTHONPATH", "")]))
        ray.init(num_cpus=2, include_dashboard=False, _temp_dir=str(tmp_path_factory.mktemp("ray")),
                 log_to_driver=False, logging_level="WARNING")
        try:
            yield ray
        finally:
            ray.shutdown()


def running_episode_pids() -> list[int]:
    """Ray worker processes running an episode task (Ray titles them `ray::situated-episode`)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                title = (entry / "cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if title.startswith(b"ray::situated-episode"):
                pids.append(int(entry.name))
    return pids


def test_ray_run_survives_a_killed_worker(ray_instance: object, progprompt_data: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(eval_args(progprompt_data, tmp_path / "local")) == 0
    local = last_json(capsys)
    killed: list[int] = []

    def kill_one_worker() -> None:
        deadline = time.monotonic() + 60
        while not killed and time.monotonic() < deadline:
            for pid in running_episode_pids():
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.01)

    killer = threading.Thread(target=kill_one_worker, daemon=True)
    killer.start()
    assert main(eval_args(progprompt_data, tmp_path / "ray", "--executor", "ray")) == 0
    killer.join()
    assert killed, "no Ray worker was running an episode to kill"
    assert last_json(capsys) == local
    lines = (tmp_path / "ray" / EPISODES_FILE).read_text().splitlines()
    keys = [(json.loads(line)["task"], json.loads(line)["run"]) for line in lines]
    assert len(keys) == len(set(keys)) == 2  # every episode exactly once
    assert sorted(keys) == sorted(stored_keys(tmp_path / "local"))
    episodes = read_episodes(tmp_path / "ray")[1]
    assert summarize(episodes, HOUSEHOLD_METRICS).tasks == 2

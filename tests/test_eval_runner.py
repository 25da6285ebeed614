"""Evaluation runner: real env1 tasks with a scripted planner; scoring, the episodes file and resuming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from situated.datasets.progprompt import HouseholdTask, load_split
from situated.errors import DataError
from situated.eval.runner import EPISODES_FILE, evaluate, read_episodes
from situated.llm.base import Completion
from situated.planners.progprompt import PlanResult
from situated.program import parse

# Ground-truth-like plans for the first three env1 tasks, written for this test.
PLANS = {
    "watch tv": "find('tv')\n\tswitchon('tv')\n",
    "turn off tablelamp": "find('tablelamp')\n\tswitchoff('tablelamp')\n",
    "put the soap in the bathroomcabinet": "find('barsoap')\n\tgrab('barsoap')\n\tfind('bathroomcabinet')\n"
                                           "\topen('bathroomcabinet')\n\tputin('barsoap', 'bathroomcabinet')\n"
                                           "\tclose('bathroomcabinet')\n",
}


class FixedPlanner:
    """Returns the plan above for known tasks and an unknown-object plan otherwise."""

    def __init__(self) -> None:
        self.llm = None
        self.calls: list[str] = []

    def plan(self, task_name: str, objects: list[str], *, affordances: object = None) -> PlanResult:
        self.calls.append(task_name)
        body = PLANS.get(task_name, "find('tv')\n")
        text = f"def task():\n\t{body}"
        return PlanResult(parse(text), text, (Completion(body, "stop", 100, 10),), 10, 100)


@pytest.fixture(scope="module")
def tasks(progprompt_data: Path) -> list[HouseholdTask]:
    return load_split(progprompt_data, "env1")[:4]


def test_scores_and_episode_records(tasks: list[HouseholdTask], tmp_path: Path) -> None:
    summary = evaluate(tasks, FixedPlanner, runs=2, out_dir=tmp_path, settings={"model": "fixed"})
    records = read_episodes(tmp_path / EPISODES_FILE)
    assert len(records) == 8 and summary.tasks == 4 and summary.runs == 2
    by_task = {r["task"]: r for r in records if r["run"] == 0}
    # The three correct plans reach their goals with every step executed; the fourth does not.
    for name in PLANS:
        assert by_task[name]["success"] and by_task[name]["exec"] == 1.0, name
    assert not by_task[tasks[3].name]["success"]
    assert summary.sr.mean == pytest.approx(0.75) and summary.sr.std == 0.0
    first = records[0]
    assert first["settings"]["model"] == "fixed" and first["program"].startswith("def task():")
    assert [e["kind"] for e in first["events"]] == ["step", "step"]


def test_resume_skips_finished_episodes(tasks: list[HouseholdTask], tmp_path: Path) -> None:
    full = evaluate(tasks, FixedPlanner, runs=2, out_dir=tmp_path / "full")

    class Killed(Exception):
        pass

    def kill_after_three(done: int, total: int, record: dict) -> None:
        if done == 3:
            raise Killed

    with pytest.raises(Killed):
        evaluate(tasks, FixedPlanner, runs=2, out_dir=tmp_path / "resumed", on_progress=kill_after_three)
    path = tmp_path / "resumed" / EPISODES_FILE
    assert len(read_episodes(path)) == 3
    with path.open("a") as f:  # an interrupted write leaves half a line
        f.write('{"task": "watch tv", "task_ind')
    planners: list[FixedPlanner] = []

    def factory() -> FixedPlanner:
        planners.append(FixedPlanner())
        return planners[-1]

    resumed = evaluate(tasks, factory, runs=2, out_dir=tmp_path / "resumed")
    assert sum(len(p.calls) for p in planners) == 5  # only the 8 - 3 missing episodes were planned
    records = read_episodes(path)
    keys = [(r["task_index"], r["run"]) for r in records]
    assert len(keys) == len(set(keys)) == 8
    assert all(json.loads(line) for line in path.read_text().splitlines())  # the half line is gone
    assert resumed == full


def test_resume_with_other_settings_is_refused(tasks: list[HouseholdTask], tmp_path: Path) -> None:
    evaluate(tasks[:1], FixedPlanner, out_dir=tmp_path, settings={"model": "a"})
    with pytest.raises(DataError, match="other settings"):
        evaluate(tasks[:1], FixedPlanner, out_dir=tmp_path, settings={"model": "b"})


def test_threads_give_the_same_summary(tasks: list[HouseholdTask], tmp_path: Path) -> None:
    one = evaluate(tasks, FixedPlanner, runs=2, out_dir=tmp_path / "one")
    many = evaluate(tasks, FixedPlanner, runs=2, out_dir=tmp_path / "many", jobs=3)
    assert one == many
    assert len(read_episodes(tmp_path / "many" / EPISODES_FILE)) == 8


def test_task_without_graph_is_a_data_error(tasks: list[HouseholdTask], tmp_path: Path) -> None:
    bare = HouseholdTask("x", "test", 0, (), ())
    with pytest.raises(DataError, match="initial graph"):
        evaluate([bare], FixedPlanner, out_dir=tmp_path)

"""Runs a navigation agent over instances, writing one JSON line per finished episode so runs resume."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..envs.streets.env import NavInstance, StreetEnv
from ..errors import DataError, SituatedError
from ..planners.nav_baselines import NavAgent
from .nav_metrics import EpisodeMetrics, NavSummary, episode_metrics, summarize

#: Safety net for environments without a step limit (gold replays): no real route needs this many actions.
HARD_ACTION_CAP = 10_000

Progress = Callable[[int, int], None]


def run_episode(env: StreetEnv, agent: NavAgent, instance: NavInstance) -> dict[str, Any]:
    """One episode of `agent` on `instance`; returns its JSON-serializable record with metrics."""
    agent.reset(instance)
    observation = env.reset(instance)
    while not env.done:
        if len(env.trajectory.actions) >= HARD_ACTION_CAP:
            raise SituatedError(
                f"instance {instance.id}: the agent did not stop within {HARD_ACTION_CAP} actions"
            )
        observation = env.step(agent.act(observation)).observation
    trajectory = env.trajectory
    metrics = episode_metrics(env.graph, instance.route, trajectory.pano_path)
    return {
        "id": instance.id,
        "dataset": instance.dataset,
        "actions": list(trajectory.actions),
        "pano_path": list(trajectory.pano_path),
        "states": [[s.panoid, s.heading] for s in trajectory.states],
        "observations": list(trajectory.observations),
        "gold_path": list(instance.route),
        "tc": metrics.tc,
        "spd": metrics.spd,
        "kpa": metrics.kpa,
        "kpa_corrected": metrics.kpa_corrected,
    }


def _parse_record(raw: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return record if isinstance(record, dict) and "id" in record else None


def read_results(path: Path) -> list[dict[str, Any]]:
    """Finished episodes in a results file.

    Every newline-terminated line must be a record (else DataError naming the line). An unterminated last line
    is what an interrupted write leaves: it is cut off the file, or terminated if it happens to be complete.
    """
    if not path.exists():
        return []
    data = path.read_bytes()
    *complete, tail = data.split(b"\n")
    records: list[dict[str, Any]] = []
    for number, raw in enumerate(complete, start=1):
        if not raw.strip():
            continue
        record = _parse_record(raw)
        if record is None:
            raise DataError(
                f"{path}:{number}: malformed episode record; delete the line or the file to rerun it"
            )
        records.append(record)
    if tail.strip():
        record = _parse_record(tail)
        if record is not None:
            records.append(record)
            with path.open("ab") as handle:
                handle.write(b"\n")
        else:
            with path.open("r+b") as handle:
                handle.truncate(len(data) - len(tail))
    return records


def run_agent(
    env: StreetEnv,
    agent: NavAgent,
    instances: Sequence[NavInstance],
    out_file: Path | None = None,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Run `agent` on every instance; with `out_file`, skip episodes recorded there and append new ones.

    `progress(done, total)` is called after each episode (and once at the start). Returns the records of all
    `instances`, in their order.
    """
    finished: dict[str, dict[str, Any]] = {}
    if out_file is not None:
        out_file.parent.mkdir(parents=True, exist_ok=True)
        finished = {str(r["id"]): r for r in read_results(out_file)}
    total = len(instances)
    done = sum(1 for i in instances if i.id in finished)
    if progress is not None:
        progress(done, total)
    records: dict[str, dict[str, Any]] = {}
    for instance in instances:
        if instance.id in finished:
            records[instance.id] = finished[instance.id]
            continue
        record = run_episode(env, agent, instance)
        if out_file is not None:
            with out_file.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")
        records[instance.id] = record
        done += 1
        if progress is not None:
            progress(done, total)
    return [records[i.id] for i in instances]


def summarize_records(records: Sequence[dict[str, Any]]) -> NavSummary:
    """Mean metrics over episode records (as written by run_episode)."""
    try:
        return summarize(
            [
                EpisodeMetrics(bool(r["tc"]), int(r["spd"]), float(r["kpa"]), float(r["kpa_corrected"]))
                for r in records
            ]
        )
    except (KeyError, TypeError, ValueError) as err:
        raise DataError(f"episode record without valid metrics: {err}") from None

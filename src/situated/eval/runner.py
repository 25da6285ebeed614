"""Evaluation of a planner on household tasks: plan, run, score; one JSON line per episode, resumable.

For each task × run: the environment starts from the task's initial graph, the planner writes a plan over that
scene's objects, the interpreter runs it (optionally replanning after failed actions) and the episode is
scored against the ground-truth final graph with `situated.eval.metrics.score_episode`. Each finished episode
is appended to `out_dir/episodes.jsonl`; a restarted evaluation skips the (task, run) pairs already there.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from situated.datasets.progprompt import HouseholdTask
from situated.envs.household import HouseholdEnv
from situated.errors import DataError, SituatedError
from situated.eval.metrics import EpisodeScore, Summary, score_episode, summarize
from situated.interpreter import ConditionCheck, Limits
from situated.planners.assertion_check import assertion_check
from situated.planners.grounded import simulator_verifier
from situated.planners.progprompt import Planner
from situated.planners.replan import execute

DEFAULT_LIMITS = Limits()

EPISODES_FILE = "episodes.jsonl"

ProgressCallback = Callable[[int, int, dict[str, Any]], None]
"""Called as `on_progress(done, total, episode_record)` after each episode (resumed ones are not reported)."""


@dataclass(frozen=True)
class EpisodeKey:
    task: str
    index: int
    run: int


def _key(record: Mapping[str, Any]) -> EpisodeKey:
    return EpisodeKey(record["task"], record["task_index"], record["run"])


def read_episodes(path: Path, *, repair: bool = False) -> list[dict[str, Any]]:
    """The episode records of a JSON-lines file; a truncated last line (an interrupted write) is ignored, and
    with `repair=True` cut from the file so that appending continues cleanly. DataError for damage
    elsewhere."""
    if not path.is_file():
        return []
    raw = path.read_bytes()
    records: list[dict[str, Any]] = []
    offset = 0
    lines = raw.split(b"\n")
    for number, line in enumerate(lines, start=1):
        last = number == len(lines) or (number == len(lines) - 1 and not lines[-1])
        if line.strip():
            try:
                record = json.loads(line)
                if not isinstance(record, dict) or not {"task", "task_index", "run"} <= record.keys():
                    raise ValueError("not an episode record")
            except ValueError as exc:
                if not last:
                    raise DataError(f"{path} line {number}: not an episode record ({exc})") from None
                if repair:
                    with path.open("r+b") as f:
                        f.truncate(offset)
                break
            records.append(record)
        offset += len(line) + 1
    return records


def score_of(record: Mapping[str, Any]) -> EpisodeScore:
    """The EpisodeScore stored in an episode record."""
    return EpisodeScore(record["task"], record["run"], record["gcr"], record["exec"], record["precision"],
                        record["attempted"])


def _check_task(task: HouseholdTask) -> None:
    if task.initial_graph is None:
        raise DataError(f"task {task.name!r} ({task.source or task.split}) has no initial graph; "
                        "give one with --initial-graph")
    if task.final_graph is None:
        raise DataError(f"task {task.name!r} ({task.source or task.split}) has no ground-truth final graph")


def run_episode(task: HouseholdTask, run: int, planner: Planner, *, check: ConditionCheck, replan: int = 0,
                seed: int = 0, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """Plan, run and score one episode; the JSON-ready record."""
    _check_task(task)
    env = HouseholdEnv(task.initial_graph, seed=seed + run)
    env.reset()
    objects = env.object_names()
    initial = env.conditions()
    final_gt = HouseholdEnv(task.final_graph, seed=seed).conditions()
    affordances = env.object_properties()
    verify = None
    if getattr(planner, "repairs", 0) > 0:  # grounded decoding: plans are checked on a private copy
        verify = simulator_verifier(HouseholdEnv(task.initial_graph, seed=seed + run), limits=limits)
        first = planner.plan(task.name, objects, affordances=affordances, verify=verify)
    else:
        first = planner.plan(task.name, objects, affordances=affordances)
    replanner = planner if hasattr(planner, "replan") else None
    if replan > 0 and replanner is None:
        raise SituatedError(f"{type(planner).__name__} cannot replan")
    done = execute(first, env, planner=replanner, task_name=task.name, objects=objects, replan=replan,
                   check=check, limits=limits, affordances=affordances, verify=verify)
    trace = done.trace
    attempted = trace.attempted + done.dropped  # dropped invalid calls count as failed attempts
    score = score_episode(task.name, run, initial, final_gt, env.conditions(), trace.executed, attempted)
    return {
        "task": task.name, "task_index": task.index, "split": task.split, "run": run,
        "success": score.success, "gcr": score.gcr, "exec": score.exec_rate, "precision": score.precision,
        "attempted": attempted, "executed": trace.executed, "dropped": done.dropped,
        "unknown": sum(p.unknown for p in done.plans),
        "problems": [q for p in done.plans for q in p.raw_problems],
        "replans": done.replans,
        "repairs": done.repairs,
        "rejected": [r for p in done.plans for r in p.rejected],
        "tokens": sum(p.tokens for p in done.plans),
        "prompt_tokens": sum(p.prompt_tokens for p in done.plans),
        "seconds": round(sum(p.seconds for p in done.plans), 3),
        "program": done.text, "plans": [p.text for p in done.plans],
        "events": [e.to_dict() for e in trace],
    }


def evaluate(tasks: Sequence[HouseholdTask], planner_factory: Callable[[], Planner], *, runs: int = 1,
             out_dir: Path, jobs: int = 1, assert_check: str | ConditionCheck = "symbolic", replan: int = 0,
             seed: int = 0, on_progress: ProgressCallback | None = None,
             settings: Mapping[str, Any] | None = None, limits: Limits = DEFAULT_LIMITS) -> Summary:
    """Evaluate the planners made by `planner_factory` (one per worker thread) on `tasks` × `runs`.

    Episodes are appended to `out_dir/episodes.jsonl` as they finish, each with `settings` (model, ablation,
    ...); a restart with the same settings skips the episodes already there; other settings are refused
    (DataError). `jobs > 1` runs episodes in threads (for servers; an embedded model takes one job).
    """
    if runs < 1 or jobs < 1 or replan < 0:
        raise SituatedError(f"runs and jobs must be >= 1 and replan >= 0 (got {runs}, {jobs}, {replan})")
    for task in tasks:
        _check_task(task)
    check_name = assert_check if isinstance(assert_check, str) else "custom"
    settings = {**(settings or {}), "assert_check": check_name, "replan": replan, "seed": seed}
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / EPISODES_FILE
    existing = read_episodes(path, repair=True)
    for record in existing:
        if record.get("settings") != settings:
            raise DataError(f"{path}: written with other settings ({record.get('settings')}); "
                            f"use another output directory")
    done_keys = {_key(r) for r in existing}
    todo = [(task, run) for run in range(runs) for task in tasks
            if EpisodeKey(task.name, task.index, run) not in done_keys]
    wanted = {EpisodeKey(t.name, t.index, r) for r in range(runs) for t in tasks}
    records = [r for r in existing if _key(r) in wanted]
    total = len(wanted)
    lock = threading.Lock()
    local = threading.local()

    def worker(item: tuple[HouseholdTask, int]) -> None:
        if not hasattr(local, "planner"):
            local.planner = planner_factory()
            local.check = (assertion_check(assert_check, local.planner.llm) if isinstance(assert_check, str)
                           else assert_check)
        task, run = item
        record = run_episode(task, run, local.planner, check=local.check, replan=replan, seed=seed,
                             limits=limits)
        record["settings"] = settings
        with lock:
            with path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")
            records.append(record)
            if on_progress is not None:
                on_progress(len(records), total, record)

    if jobs == 1:
        for item in todo:
            worker(item)
    else:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for _ in pool.map(worker, todo):
                pass
    return summarize(score_of(r) for r in records)


def episodes_by_task(records: Sequence[Mapping[str, Any]]) -> Iterator[tuple[str, list[Mapping[str, Any]]]]:
    """Records grouped per task (in task order), for per-task tables."""
    groups: dict[tuple[int, str], list[Mapping[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["task_index"], r["task"]), []).append(r)
    for (_, name), rows in sorted(groups.items()):
        yield name, sorted(rows, key=lambda r: r["run"])

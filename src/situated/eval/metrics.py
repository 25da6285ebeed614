"""ProgPrompt's household metrics (PROTOCOLS.md §1): SR, GCR, Exec, plus precision; per task and over runs.

Conditions are class-level facts such as "salmon INSIDE microwave" or "tv ON". The goal of a task is every
condition the ground-truth run changed (true in its final state, not in the initial one).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Set
from dataclasses import dataclass


def goal_conditions(initial: Set[str], final_gt: Set[str]) -> frozenset[str]:
    """Conditions the ground-truth run made true."""
    return frozenset(final_gt) - frozenset(initial)


def gcr(goal: Set[str], initial: Set[str], agent_final: Set[str]) -> float:
    """Goal-condition recall: 1 − |goal conditions the agent did not newly make true| / |goal| (1.0 for no goal)."""
    if not goal:
        return 1.0
    newly = frozenset(agent_final) - frozenset(initial)
    return 1.0 - len(frozenset(goal) - newly) / len(goal)


def precision(initial: Set[str], final_gt: Set[str], agent_final: Set[str]) -> float:
    """Of the conditions the ground truth left unchanged, the fraction the agent also left in place."""
    keep = frozenset(initial) & frozenset(final_gt)
    if not keep:
        return 1.0
    return len(keep & frozenset(agent_final)) / len(keep)


@dataclass(frozen=True)
class EpisodeScore:
    """The score of one task in one run."""

    task: str
    run: int
    gcr: float
    exec_rate: float
    precision: float
    attempted: int = 0
    missing: tuple[str, ...] = ()  # goal conditions the agent did not newly make true

    @property
    def success(self) -> bool:
        return self.gcr >= 1.0 - 1e-9


def score_episode(task: str, run: int, initial: Set[str], final_gt: Set[str], agent_final: Set[str],
                  executed: int, attempted: int) -> EpisodeScore:
    """Score one episode from its three condition sets and its step counts."""
    goal = goal_conditions(initial, final_gt)
    missing = tuple(sorted(goal - (frozenset(agent_final) - frozenset(initial))))
    return EpisodeScore(task, run, gcr(goal, initial, agent_final), executed / attempted if attempted else 0.0,
                        precision(initial, final_gt, agent_final), attempted, missing)


@dataclass(frozen=True)
class Stat:
    """Mean and (population) standard deviation over runs."""

    mean: float
    std: float

    def __str__(self) -> str:
        return f"{self.mean:.2f}±{self.std:.2f}"


@dataclass(frozen=True)
class Summary:
    """SR / GCR / Exec / precision: each the per-run mean over tasks, then mean ± std over runs."""

    sr: Stat
    gcr: Stat
    exec: Stat
    precision: Stat
    tasks: int
    runs: int

    def to_dict(self) -> dict[str, float | int]:
        return {"sr": round(self.sr.mean, 4), "sr_std": round(self.sr.std, 4),
                "gcr": round(self.gcr.mean, 4), "gcr_std": round(self.gcr.std, 4),
                "exec": round(self.exec.mean, 4), "exec_std": round(self.exec.std, 4),
                "precision": round(self.precision.mean, 4), "tasks": self.tasks, "runs": self.runs}


def _stat(values: list[float]) -> Stat:
    mean = sum(values) / len(values)
    return Stat(mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)))


def summarize(scores: Iterable[EpisodeScore]) -> Summary:
    """Aggregate episodes: average over the tasks of each run, then mean ± std across runs."""
    by_run: dict[int, list[EpisodeScore]] = defaultdict(list)
    for s in scores:
        by_run[s.run].append(s)
    if not by_run:
        raise ValueError("no episodes to summarize")
    per_run = [(sum(s.success for s in r) / len(r), sum(s.gcr for s in r) / len(r),
                sum(s.exec_rate for s in r) / len(r), sum(s.precision for s in r) / len(r))
               for r in by_run.values()]
    tasks = len({s.task for r in by_run.values() for s in r})
    return Summary(*(_stat([row[i] for row in per_run]) for i in range(4)), tasks=tasks, runs=len(by_run))

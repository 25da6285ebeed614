"""ProgPrompt's household metrics (PROTOCOLS.md §1): SR, GCR, Exec, plus precision, per episode.

Conditions are class-level facts such as "salmon INSIDE microwave" or "tv ON". The goal of a task is every
condition the ground-truth run changed (true in its final state, not in the initial one).
"""

from __future__ import annotations

from collections.abc import Set
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


def as_metrics(score: EpisodeScore) -> dict[str, float]:
    """An episode's score as the metrics an Episode records (summarized over tasks and runs)."""
    return {"success": float(score.success), "gcr": score.gcr, "exec": score.exec_rate,
            "precision": score.precision}

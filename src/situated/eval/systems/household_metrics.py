"""ProgPrompt's household metrics (PROTOCOLS.md §1): SR, GCR, Exec, plus precision, per episode.

Conditions are class-level facts such as "salmon INSIDE microwave" or "tv ON". The goal of a task is every
condition the ground-truth run changed (true in its final state, not in the initial one).

Honest Exec: `abandoned` counts grounded-decoding rewrites that made a plan executable by giving up a step of
the task — a rejected statement with a task action (grab, putin, switchon, open, ...) whose replacement only
moves or looks (`NAVIGATION_ACTIONS`) or ends the plan, and whose task call the final plan never makes later.
Such a rewrite raises Exec while the task loses a step. A step rejected because its effect already holds
("the fridge is already open") loses nothing and is not counted.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence, Set
from dataclasses import dataclass

from ...actions import ALREADY, NAVIGATION_ACTIONS
from ...planners.base import Rewrite
from ...program import Assert, Call, For, If, Program, Statement
from .base import Metric, keys

METRICS = (Metric("success", "SR"), Metric("gcr", "GCR"), Metric("exec", "Exec"), Metric("precision", "precision"))
"""The household metrics of an episode, as reports show them."""
HOUSEHOLD_METRICS: tuple[str, ...] = keys(METRICS)



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


def _calls(stmt: Statement) -> Iterator[Call]:
    """Every call a statement holds: recovery calls and block bodies included."""
    if isinstance(stmt, Call):
        yield stmt
    elif isinstance(stmt, Assert):
        yield from stmt.recovery
    elif isinstance(stmt, If):
        for inner in (*stmt.then, *stmt.otherwise):
            yield from _calls(inner)
    elif isinstance(stmt, For):
        for inner in stmt.body:
            yield from _calls(inner)


def abandoned(rewrites: Sequence[Rewrite], program: Program) -> int:
    """How many rewritten places of `program` (the final plan) gave up a task step (see the module docstring).

    Rewrites at one line count once: the statement first rejected there against what finally stands there."""
    first: dict[int, Statement | None] = {}
    for rewrite in rewrites:
        done_already = ALREADY in rewrite.reason  # the step's effect holds: nothing to give up
        first.setdefault(rewrite.line, None if done_already else rewrite.rejected)
    calls = [(call, stmt.line) for stmt in program.body for call in _calls(stmt)]
    count = 0
    for line, rejected in first.items():
        task = [c for c in _calls(rejected) if c.action not in NAVIGATION_ACTIONS] if rejected is not None else []
        if not task:
            continue
        standing = [c for c, at in calls if at == line]
        if any(c.action not in NAVIGATION_ACTIONS for c in standing):
            continue  # another task step stands there (a substitution, not a dropped step)
        later = {(c.action, c.args) for c, at in calls if at > line}
        count += any((c.action, c.args) not in later for c in task)
    return count

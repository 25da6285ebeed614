"""Bootstrap confidence intervals for the summaries of a run: tasks resampled within runs, seeded.

The statistic is the one every summary reports (`summary.summarize`): a metric averaged over the episodes
(tasks) of each run, then averaged over runs. One bootstrap replicate draws, independently for every run, as
many of that run's episodes as it has, with replacement, and recomputes the statistic; the interval is the
percentile interval of the replicates (linear interpolation between order statistics). Runs are kept, not
resampled: with the 1-5 runs of an evaluation there are too few to resample, and the question a reader asks is
"how much would this number move on other tasks like these".

A difference between two evaluations (B - A) is paired when both ran the same tasks in every run: each replicate
draws one list of task positions per run index and uses it for run i of A and run i of B, so task difficulty
cancels out. Otherwise both sides are resampled independently (`paired` False).

Every replicate set comes from `random.Random(seed)`: the same episodes and seed give the same interval.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from .episode import Episode

DEFAULT_RESAMPLES = 2000
DEFAULT_LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    """A point estimate (mean over runs of the per-run mean) with its bootstrap confidence interval."""

    mean: float
    low: float
    high: float
    level: float = DEFAULT_LEVEL

    def contains(self, value: float) -> bool:
        return self.low - 1e-12 <= value <= self.high + 1e-12

    def to_dict(self, digits: int = 4) -> dict[str, float]:
        return {"mean": round(self.mean, digits), "low": round(self.low, digits), "high": round(self.high, digits)}


@dataclass(frozen=True)
class Difference:
    """B minus A: the difference of the two point estimates and its bootstrap interval."""

    mean: float
    low: float
    high: float
    paired: bool
    level: float = DEFAULT_LEVEL

    @property
    def excludes_zero(self) -> bool:
        """Whether the interval lies wholly above or below 0 (the difference is unlikely to be noise alone)."""
        return self.low > 0 or self.high < 0

    def to_dict(self, digits: int = 4) -> dict[str, float | bool]:
        return {"mean": round(self.mean, digits), "low": round(self.low, digits), "high": round(self.high, digits),
                "paired": self.paired}


def _runs(episodes: Sequence[Episode]) -> list[list[Episode]]:
    """Episodes grouped by run (runs in increasing order, episodes in task-id order)."""
    groups: dict[int, list[Episode]] = {}
    for episode in episodes:
        groups.setdefault(episode.run, []).append(episode)
    if not groups:
        raise ValueError("no episodes to resample")
    return [sorted(groups[run], key=lambda e: e.task) for run in sorted(groups)]


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    position = q * (len(sorted_values) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(sorted_values) - 1)
    return sorted_values[lower] + (sorted_values[upper] - sorted_values[lower]) * (position - lower)


def _interval(replicates: list[float], level: float) -> tuple[float, float]:
    replicates.sort()
    tail = (1.0 - level) / 2
    return _percentile(replicates, tail), _percentile(replicates, 1.0 - tail)


def _check(resamples: int, level: float) -> None:
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")


def _values(runs: list[list[Episode]], metric: str) -> list[list[float]]:
    return [[e.metrics.get(metric, 0.0) for e in run] for run in runs]


def _mean_over_runs(values: list[list[float]], draws: Sequence[Sequence[int]] | None = None) -> float:
    if draws is None:
        return sum(sum(v) / len(v) for v in values) / len(values)
    return sum(sum(map(v.__getitem__, d)) / len(d) for v, d in zip(values, draws, strict=True)) / len(values)


def bootstrap(episodes: Sequence[Episode], metrics: Sequence[str], *, resamples: int = DEFAULT_RESAMPLES,
              seed: int = 0, level: float = DEFAULT_LEVEL) -> dict[str, Interval]:
    """Per metric: the mean over runs of the per-run mean, with its percentile bootstrap interval (module
    docstring). All metrics are computed on the same replicates. ValueError when there are no episodes."""
    _check(resamples, level)
    runs = _runs(episodes)
    values = {m: _values(runs, m) for m in metrics}
    rng = random.Random(seed)
    replicates: dict[str, list[float]] = {m: [] for m in metrics}
    for _ in range(resamples):
        draws = [rng.choices(range(len(run)), k=len(run)) for run in runs]
        for metric in metrics:
            replicates[metric].append(_mean_over_runs(values[metric], draws))
    result = {}
    for metric in metrics:
        low, high = _interval(replicates[metric], level)
        result[metric] = Interval(_mean_over_runs(values[metric]), low, high, level)
    return result


def same_tasks(a: Sequence[Episode], b: Sequence[Episode]) -> bool:
    """Whether every run of `a` and of `b` holds exactly the same tasks (so a difference can be paired)."""
    task_sets = {frozenset(e.task for e in run) for run in (*_runs(a), *_runs(b))}
    return len(task_sets) == 1


def bootstrap_difference(a: Sequence[Episode], b: Sequence[Episode], metric: str, *,
                         resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                         level: float = DEFAULT_LEVEL) -> Difference:
    """`metric` of B minus that of A with a bootstrap interval, paired by task when both ran the same tasks."""
    _check(resamples, level)
    runs_a, runs_b = _runs(a), _runs(b)
    values_a, values_b = _values(runs_a, metric), _values(runs_b, metric)
    paired = same_tasks(a, b)
    rng = random.Random(seed)
    replicates = []
    for _ in range(resamples):
        if paired:
            n = len(runs_a[0])
            shared = [rng.choices(range(n), k=n) for _ in range(max(len(runs_a), len(runs_b)))]
            draws_a, draws_b = shared[: len(runs_a)], shared[: len(runs_b)]
        else:
            draws_a = [rng.choices(range(len(run)), k=len(run)) for run in runs_a]
            draws_b = [rng.choices(range(len(run)), k=len(run)) for run in runs_b]
        replicates.append(_mean_over_runs(values_b, draws_b) - _mean_over_runs(values_a, draws_a))
    low, high = _interval(replicates, level)
    return Difference(_mean_over_runs(values_b) - _mean_over_runs(values_a), low, high, paired, level)

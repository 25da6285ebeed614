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

Replicates are drawn with numpy's `default_rng(seed)` (PCG64), in blocks that bound memory: the same
episodes and seed give the same interval. numpy comes with matplotlib (the `plot` extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import SituatedError
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


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:
        raise SituatedError("bootstrap intervals need numpy: pip install 'situated[plot]'") from None
    return numpy


def _check(resamples: int, level: float) -> None:
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")


def _values(runs: list[list[Episode]], metric: str) -> list[list[float]]:
    return [[e.metrics.get(metric, 0.0) for e in run] for run in runs]


def _mean_over_runs(values: list[list[float]]) -> float:
    """The point estimate, summed in the same order as `summary.summarize`."""
    return sum(sum(v) / len(v) for v in values) / len(values)


def _chunks(resamples: int, tasks: int) -> list[int]:
    """Replicates per block, so that a block's draws stay within about 8 M positions."""
    size = max(1, (8 << 20) // max(1, tasks))
    return [min(size, resamples - start) for start in range(0, resamples, size)]


def _interval(np: Any, replicates: Any, level: float) -> tuple[float, float]:
    tail = 100 * (1.0 - level) / 2
    low, high = np.percentile(replicates, [tail, 100 - tail])  # linear interpolation between order statistics
    return float(low), float(high)


def bootstrap(episodes: Sequence[Episode], metrics: Sequence[str], *, resamples: int = DEFAULT_RESAMPLES,
              seed: int = 0, level: float = DEFAULT_LEVEL) -> dict[str, Interval]:
    """Per metric: the mean over runs of the per-run mean, with its percentile bootstrap interval (module
    docstring). All metrics are computed on the same replicates. ValueError when there are no episodes."""
    _check(resamples, level)
    np = _numpy()
    runs = _runs(episodes)
    values = {m: _values(runs, m) for m in metrics}
    arrays = {m: [np.asarray(v, dtype=float) for v in values[m]] for m in metrics}
    rng = np.random.default_rng(seed)
    blocks: dict[str, list[Any]] = {m: [] for m in metrics}
    for block in _chunks(resamples, max(len(run) for run in runs)):
        draws = [rng.integers(0, len(run), size=(block, len(run))) for run in runs]
        for metric in metrics:
            per_run = [array[draw].mean(axis=1) for array, draw in zip(arrays[metric], draws, strict=True)]
            blocks[metric].append(np.mean(per_run, axis=0))
    result = {}
    for metric in metrics:
        low, high = _interval(np, np.concatenate(blocks[metric]), level)
        result[metric] = Interval(_mean_over_runs(values[metric]), low, high, level)
    return result


def same_tasks(a: Sequence[Episode], b: Sequence[Episode]) -> bool:
    """Whether every run of `a` and of `b` holds exactly the same tasks (so a difference can be paired)."""
    task_sets = {frozenset(e.task for e in run) for run in (*_runs(a), *_runs(b))}
    return len(task_sets) == 1


def bootstrap_differences(a: Sequence[Episode], b: Sequence[Episode], metrics: Sequence[str], *,
                          resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                          level: float = DEFAULT_LEVEL) -> dict[str, Difference]:
    """Per metric: B minus A with a bootstrap interval, paired by task when both ran the same tasks; all metrics
    on the same replicates."""
    _check(resamples, level)
    np = _numpy()
    runs_a, runs_b = _runs(a), _runs(b)
    paired = same_tasks(a, b)
    values = {m: (_values(runs_a, m), _values(runs_b, m)) for m in metrics}
    arrays = {m: ([np.asarray(v, dtype=float) for v in va], [np.asarray(v, dtype=float) for v in vb])
              for m, (va, vb) in values.items()}
    rng = np.random.default_rng(seed)
    blocks: dict[str, list[Any]] = {m: [] for m in metrics}
    for block in _chunks(resamples, max(len(run) for run in (*runs_a, *runs_b))):
        if paired:
            n = len(runs_a[0])
            shared = [rng.integers(0, n, size=(block, n)) for _ in range(max(len(runs_a), len(runs_b)))]
            draws_a, draws_b = shared[: len(runs_a)], shared[: len(runs_b)]
        else:
            draws_a = [rng.integers(0, len(run), size=(block, len(run))) for run in runs_a]
            draws_b = [rng.integers(0, len(run), size=(block, len(run))) for run in runs_b]
        for metric in metrics:
            side_a, side_b = arrays[metric]
            mean_a = np.mean([x[d].mean(axis=1) for x, d in zip(side_a, draws_a, strict=True)], axis=0)
            mean_b = np.mean([x[d].mean(axis=1) for x, d in zip(side_b, draws_b, strict=True)], axis=0)
            blocks[metric].append(mean_b - mean_a)
    result = {}
    for metric in metrics:
        low, high = _interval(np, np.concatenate(blocks[metric]), level)
        va, vb = values[metric]
        result[metric] = Difference(_mean_over_runs(vb) - _mean_over_runs(va), low, high, paired, level)
    return result


def bootstrap_difference(a: Sequence[Episode], b: Sequence[Episode], metric: str, *,
                         resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                         level: float = DEFAULT_LEVEL) -> Difference:
    """`metric` of B minus that of A (see `bootstrap_differences`)."""
    return bootstrap_differences(a, b, [metric], resamples=resamples, seed=seed, level=level)[metric]

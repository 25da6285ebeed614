"""Summaries of episodes: each metric averaged over the tasks of a run, then mean ± std over runs."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from .episode import Episode


@dataclass(frozen=True)
class Stat:
    """Mean and (population) standard deviation over runs."""

    mean: float
    std: float

    def __str__(self) -> str:
        return f"{self.mean:.2f}±{self.std:.2f}"


def stat(values: Sequence[float]) -> Stat:
    """Mean ± population std of `values` (ValueError when empty)."""
    if not values:
        raise ValueError("no values")
    mean = sum(values) / len(values)
    return Stat(mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)))


@dataclass(frozen=True)
class Summary:
    """Per metric: the mean over each run's episodes, then mean ± std across runs."""

    stats: Mapping[str, Stat]
    tasks: int
    runs: int
    episodes: int

    def __getitem__(self, metric: str) -> Stat:
        return self.stats[metric]


def summarize(episodes: Iterable[Episode], metrics: Sequence[str] | None = None) -> Summary:
    """Aggregate episodes (ValueError when there are none); `metrics` defaults to those of the first episode."""
    by_run: dict[int, list[Episode]] = defaultdict(list)
    for episode in episodes:
        by_run[episode.run].append(episode)
    if not by_run:
        raise ValueError("no episodes to summarize")
    names = list(metrics) if metrics is not None else list(next(iter(by_run.values()))[0].metrics)
    per_run = {name: [sum(e.metrics.get(name, 0.0) for e in run) / len(run) for run in by_run.values()]
               for name in names}
    tasks = len({e.task for run in by_run.values() for e in run})
    count = sum(len(run) for run in by_run.values())
    return Summary({name: stat(values) for name, values in per_run.items()}, tasks, len(by_run), count)


def by_task(episodes: Iterable[Episode]) -> Iterator[tuple[str, list[Episode]]]:
    """Episodes grouped per task (in the order tasks first appear), each group sorted by run."""
    groups: dict[str, list[Episode]] = {}
    for episode in episodes:
        groups.setdefault(episode.task, []).append(episode)
    for task, group in groups.items():
        yield task, sorted(group, key=lambda e: e.run)

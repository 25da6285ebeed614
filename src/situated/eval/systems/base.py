"""What a system is to the evaluation and its reports: one `System` value per system (`household`, `navigation`,
`tabletop`, `eai`), so that reports, the papers' numbers and summaries ask the system instead of comparing names.

A `System` holds its metrics (episode key, label, display scale), the papers' published rows with how a run is
matched to them, the sections its report shows beyond the common ones, how its failures are counted and grouped,
and the functions that make its results store (`config`: the resume key) and its one-line JSON summary.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..bootstrap import Interval
from ..episode import Episode
from ..summary import Stat
from .papers import PaperResult


@dataclass(frozen=True)
class Metric:
    """How one metric is shown: its episode key, column label, display scale and number format."""

    key: str
    label: str
    scale: float = 1.0
    digits: int = 2
    higher_is_better: bool = True

    def show(self, value: float) -> str:
        return f"{value * self.scale:.{self.digits}f}"

    def show_stat(self, value: Stat) -> str:
        return f"{self.show(value.mean)} ± {self.show(value.std)}"

    def show_interval(self, value: Interval) -> str:
        return f"[{self.show(value.low)}, {self.show(value.high)}]"


def keys(metrics: Sequence[Metric]) -> tuple[str, ...]:
    """The episode keys of `metrics`, in order."""
    return tuple(m.key for m in metrics)


@dataclass(frozen=True)
class Part:
    """Episodes of a run reported apart as well as together: those whose `details[detail]` is `value`."""

    name: str
    detail: str
    value: bool

    def of(self, run: Any) -> Any | None:
        """The run (any dataclass with `episodes`) restricted to this part (None when it has no such episode)."""
        episodes = tuple(e for e in run.episodes if bool(e.details.get(self.detail)) == self.value)
        return replace(run, episodes=episodes) if episodes else None


Count = Callable[[Sequence[Episode]], int]
"""A failure count over a run's episodes."""


def detail_total(key: str) -> Count:
    """The sum of `details[key]` over episodes."""
    return lambda episodes: sum(int(e.details.get(key, 0) or 0) for e in episodes)


def episodes_where(test: Callable[[Episode], bool]) -> Count:
    """How many episodes pass `test`."""
    return lambda episodes: sum(1 for e in episodes if test(e))


@dataclass(frozen=True)
class FailureTable:
    """One grouped failure table of a report: its caption, what is grouped, the example column, and which
    extractor of `eval.report.failures` reads the items (`failed`, `unmet`, `rejected`, `raw` or `errors`)."""

    caption: str
    what: str
    example: str
    source: str


FAILED = FailureTable("Failed steps, grouped by reason", "reason", "example", "failed")
UNMET = FailureTable("Goal conditions left unmet", "condition", "e.g. in task", "unmet")
REJECTED = FailureTable("Drafts rejected by grounded decoding (rewritten before running)", "reason", "example",
                        "rejected")
RAW = FailureTable("Problems in the model's raw answers (dropped or repaired)", "problem", "example", "raw")


@dataclass(frozen=True)
class System:
    """One system as evaluations and reports see it (see the module docstring).

    `sections` names the report sections beyond the common ones, in order: `tasks` (per-task metrics and cost),
    `cost`, `failures`, `errors` (a breakdown of `details["error_type"]`), and the navigation ones `lengths`,
    `maps`, `stops`, `episodes`.
    """

    name: str  # the `system` of a results store's run.json
    title: str
    command: str
    metrics: tuple[Metric, ...]
    definitions: str
    sections: tuple[str, ...]
    paper_metrics: tuple[str, ...] = ()
    papers: tuple[PaperResult, ...] = ()
    papers_scaled: bool = True  # False: the published rows are already in display units (VELMA's % and hops)
    paper_notes: tuple[str, ...] = ()  # caveats shown under the published rows (when there are any)
    fallback_split: str = ""  # published rows to show for a split the papers did not report
    split_of: Callable[[Mapping[str, Any]], str] = lambda config: str(config.get("split") or "")
    setting_of: Callable[[Mapping[str, Any]], str] = lambda config: str(config.get("agent") or "")
    cases: str = ""  # how episodes relate to tasks, when not one to one
    parts: tuple[Part, ...] = ()
    task_panels: tuple[str, ...] = ()  # metrics drawn by task, a panel each
    failure_counts: tuple[tuple[str, Count], ...] = ()
    failure_tables: tuple[FailureTable, ...] = ()
    failure_note: str = ""
    config: Callable[..., dict[str, Any]] | None = None  # (tasks, **settings) -> the store's resume key
    job: type | None = None  # the picklable episode job executors run
    summary: Callable[[Sequence[Episode]], dict[str, Any]] | None = None  # the last JSON line of a command

    @property
    def metric_keys(self) -> tuple[str, ...]:
        return keys(self.metrics)

    def metric(self, key: str) -> Metric:
        return next(m for m in self.metrics if m.key == key)

    def comparable(self, split: str) -> tuple[PaperResult, ...]:
        """Published rows for a run on `split`; for a split the papers did not report, the `fallback_split`'s."""
        rows = tuple(r for r in self.papers if r.split == split)
        if rows or not self.fallback_split:
            return rows
        return tuple(r for r in self.papers if r.split == self.fallback_split)

"""The tables and summary lines commands print in the terminal (rich), one per system's evaluation: household
(SR / GCR / Exec per task), replay, navigation (TC / SPD / KPA), tabletop (SR / Exec / Plan SR), EAI (SR, ESR
and the error breakdown) and landmark extraction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.markup import escape
from rich.table import Table

from ..episode import Episode
from ..summary import by_task, stat, summarize
from ..systems.eai import BREAKDOWN
from ..systems.household import total
from ..systems.household_metrics import HOUSEHOLD_METRICS
from ..systems.tabletop_episodes import TABLETOP_METRICS


def _stat_text(values: Sequence[float]) -> str:
    """Mean ± std over runs; one run's value alone (its std says nothing and costs the task column its width)."""
    return f"{values[0]:.2f}" if len(values) == 1 else str(stat(values))


def household_table(episodes: Sequence[Episode], title: str) -> Table:
    """Per task: SR, GCR, Exec (mean ± std over runs), mean attempted steps, unknown names, dropped calls and
    abandoned steps (rewrites that made the plan executable by giving up a task step)."""
    table = Table(title=title)
    for column in ("#", "task", "SR", "GCR", "Exec", "steps", "unknown", "dropped", "abandoned"):
        table.add_column(column)
    for _, rows in by_task(episodes):
        table.add_row(str(rows[0].details.get("task_index", "")), rows[0].instruction,
                      _stat_text([r.metrics["success"] for r in rows]), _stat_text([r.metrics["gcr"] for r in rows]),
                      _stat_text([r.metrics["exec"] for r in rows]),
                      str(round(sum(r.details.get("attempted", 0) for r in rows) / len(rows), 1)),
                      str(sum(r.details.get("unknown", 0) for r in rows)),
                      str(sum(r.details.get("dropped", 0) for r in rows)),
                      str(sum(r.details.get("abandoned", 0) for r in rows)))
    return table


def household_line(episodes: Sequence[Episode]) -> str:
    """The one-line text summary under the household table."""
    s = summarize(episodes, HOUSEHOLD_METRICS)
    return (f"SR {s['success']}  GCR {s['gcr']}  Exec {s['exec']}  "
            f"unknown actions/objects {total(episodes, 'unknown')}  dropped calls {total(episodes, 'dropped')}  "
            f"abandoned steps {total(episodes, 'abandoned')}")


def replay_table(episodes: Sequence[Episode], title: str) -> Table:
    """One row per replayed task: steps, Exec, GCR, success."""
    table = Table(title=title)
    for column in ("#", "task", "steps", "Exec", "GCR", "success"):
        table.add_column(column)
    for i, e in enumerate(episodes):
        table.add_row(str(i), e.instruction, str(e.details.get("attempted", "")), f"{e.metrics['exec']:.2f}",
                      f"{e.metrics['gcr']:.3f}", "[green]yes[/green]" if e.success else "[red]no[/red]")
    return table


def navigation_table(summary: dict[str, float | int], title: str) -> Table:
    table = Table(title=title)
    for column in ("TC %", "SPD", "KPA %", "KPA corrected %"):
        table.add_column(column, justify="right")
    table.add_row(f"{summary['tc']:.1f}", f"{summary['spd']:.1f}", f"{summary['kpa']:.1f}",
                  f"{summary['kpa_corrected']:.1f}")
    return table


def replay_line(episodes: Sequence[Episode]) -> str:
    """The line under the replay table: SR, GCR and Exec over the split."""
    s = summarize(episodes, HOUSEHOLD_METRICS)
    return f"SR {s['success'].mean:.3f}  GCR {s['gcr'].mean:.3f}  Exec {s['exec'].mean:.3f}"


def tabletop_table(episodes: Sequence[Episode], title: str) -> Table:
    """Per task and setting: SR, Exec, Plan SR (mean ± std over runs), steps, and the first failed step (or
    else the first goal condition left unmet)."""
    table = Table(title=title)
    for column in ("#", "task", "distractors", "SR", "Exec", "Plan SR", "steps", "what went wrong"):
        table.add_column(column)
    for _, rows in by_task(episodes):
        first = rows[0]
        added = first.details.get("distractor_objects", [])
        failures = [f for r in rows for f in r.details.get("failures", [])] or [
            f"not {m}" for r in rows for m in r.details.get("missing", [])]
        table.add_row(str(first.details.get("task_index", "")), first.instruction,
                      ", ".join(added) if first.details.get("distractors") else "none",
                      *(_stat_text([r.metrics[m] for r in rows]) for m in TABLETOP_METRICS),
                      str(round(sum(r.details.get("attempted", 0) for r in rows) / len(rows), 1)),
                      escape(failures[0][:70]) + (f" (+{len(failures) - 1})" if len(failures) > 1 else "")
                      if failures else "")
    return table


def tabletop_line(summary: Mapping[str, Any]) -> str:
    return f"SR {summary['sr']:.2f}  Exec {summary['exec']:.2f}  Plan SR {summary['plan_sr']:.2f}"


def eai_table(rows: Sequence[tuple[str, Mapping[str, Any]]], title: str) -> Table:
    """EAI's metrics (percent) per evaluator: SR, ESR and the error breakdown; `rows` are (evaluator, metrics)."""
    table = Table(title=title)
    for column in ("evaluator", "SR %", "ESR %", *(name.replace("_", " ") + " %" for name in BREAKDOWN)):
        table.add_column(column, justify="right")
    for name, metrics in rows:
        table.add_row(name, *(("-" if metrics.get(k) is None else f"{metrics[k]:.1f}")
                              for k in ("sr", "esr", *BREAKDOWN)))
    return table


def landmark_table(score: Any, title: str) -> Table:
    """Precision, recall and F1 of extracted landmarks against a reference (`planners.landmarks` scores)."""
    table = Table(title=title)
    for column in ("precision %", "recall %", "F1 %", "predicted", "reference"):
        table.add_column(column, justify="right")
    table.add_row(f"{score.precision:.1f}", f"{score.recall:.1f}", f"{score.f1:.1f}", str(score.predicted),
                  str(score.reference))
    return table


def training_table(record: Mapping[str, Any]) -> Table:
    """A `navigate train` record (`situated-lora/1`): each evaluation of the held-out routes, the chosen one marked."""
    data = record["data"]
    table = Table(title=f"{record['method']} on {data['trained_routes']} training-area routes, "
                        f"{len(data['held_out_ids'])} held out")
    for column in ("epoch", "next-action accuracy %", "TC %"):
        table.add_column(column, justify="right")
    for evaluation in record["evaluations"]:
        mark = " (selected)" if evaluation["epoch"] == record["selected_epoch"] else ""
        table.add_row(f"{evaluation['epoch']}{mark}", f"{evaluation['accuracy']:.1f}", f"{evaluation['tc']:.1f}")
    return table

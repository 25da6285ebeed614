"""Household sections of a report: per-task SR / GCR / Exec and cost, SR by task, and why episodes failed."""

from __future__ import annotations

from collections.abc import Sequence

from ..trace import SkipEvent
from .report_document import Block, Section, Table, Text
from .report_failures import Group, failed_steps, group, raw_problems, rejected_drafts, unmet_goals
from .report_figures import task_bars
from .report_runs import RunResults
from .report_sections import HOUSEHOLD
from .summary import by_task, stat

GROUPS = 15
"""The most frequent reasons shown per failure table."""


def _mean(values: Sequence[float], digits: int) -> str:
    return f"{sum(values) / len(values):,.{digits}f}"


def _task_name(rows: Sequence) -> str:
    index = rows[0].details.get("task_index", "")
    return f"{index}. {rows[0].instruction}" if index != "" else rows[0].instruction


def _task_order(runs: Sequence[RunResults]) -> list[tuple[str, str]]:
    """(task id, display name) of every task of any run, by task index then first appearance."""
    seen: dict[str, tuple[object, int, str]] = {}
    for run in runs:
        for task, rows in by_task(run.episodes):
            if task not in seen:
                index = rows[0].details.get("task_index")
                seen[task] = (index if isinstance(index, int) else 1 << 30, len(seen), _task_name(rows))
    return [(task, name) for task, (_, _, name) in sorted(seen.items(), key=lambda item: item[1][:2])]


def per_task(runs: Sequence[RunResults]) -> Section:
    """SR by task for all runs side by side (figure and table), then each run's per-task table with cost."""
    order = _task_order(runs)
    groups = [dict(by_task(run.episodes)) for run in runs]
    blocks: list[Block] = []
    panels = {title: {run.label: [stat([e.metrics[key] for e in g[t]]).mean if t in g else 0.0 for t, _ in order]
                      for run, g in zip(runs, groups, strict=True)}
              for key, title in (("success", "SR"), ("gcr", "GCR"))}
    blocks.append(task_bars("sr_by_task", "Success rate (SR) and goal-condition recall (GCR) by task, one bar per "
                            "run (mean over its runs)", [name for _, name in order], panels))
    if len(runs) > 1:
        rows = tuple((name, *(str(stat([e.metrics["success"] for e in g[t]])) if t in g else "–" for g in groups))
                     for t, name in order)
        blocks.append(Table("SR by task (mean ± std over runs)", ("task", *(r.label for r in runs)), rows,
                            frozenset(range(1, len(runs) + 1))))
    header = ("task", *(m.label for m in HOUSEHOLD[:3]), "steps", "unmet goals", "tokens", "prompt tokens",
              "calls", "model seconds", "wall seconds")
    for run, g in zip(runs, groups, strict=True):
        rows = []
        for task, name in order:
            if task not in g:
                continue
            eps = g[task]
            rows.append((name, *(str(stat([e.metrics[m.key] for e in eps])) for m in HOUSEHOLD[:3]),
                         _mean([e.details.get("attempted", 0) for e in eps], 1),
                         _mean([len(e.details.get("missing", []) or []) for e in eps], 1),
                         _mean([e.cost.tokens for e in eps], 0), _mean([e.cost.prompt_tokens for e in eps], 0),
                         _mean([e.cost.calls for e in eps], 1), _mean([e.cost.model_seconds for e in eps], 1),
                         _mean([e.cost.seconds for e in eps], 2)))
        blocks.append(Table(f"Per task — {run.label} ({run.runs} run{'s' if run.runs > 1 else ''}; metrics mean ± "
                            "std over runs, the rest mean per episode)", header, tuple(rows),
                            frozenset(range(1, len(header)))))
    return Section("Per task", "tasks", tuple(blocks))


def _group_table(caption: str, groups: list[Group], runs: Sequence[RunResults], what: str, example: str) -> Table:
    rows = tuple((g.reason, *(str(c) for c in g.counts), g.example) for g in groups)
    return Table(caption, (what, *(r.label for r in runs), example), rows, frozenset(range(1, len(runs) + 1)))


def failures(runs: Sequence[RunResults]) -> Section:
    """Why household episodes failed: grouped step failures, unmet goals, rejected drafts, raw answer problems."""
    blocks: list[Block] = [Text(
        "Reasons are grouped after normalizing them: the call's object names become <obj>, scene ids and numbers "
        "are dropped, so the same failure on different objects counts once. Counts are over all episodes of a run.")]
    counts = []
    for run in runs:
        eps = run.episodes
        failed = sum(1 for e in eps for s in e.trace.steps if not s.ok)
        skipped = sum(1 for e in eps for ev in e.trace if isinstance(ev, SkipEvent))
        counts.append((run.label, str(len(eps)), str(sum(not e.success for e in eps)), str(failed), str(skipped),
                       *(str(sum(int(e.details.get(k, 0) or 0) for e in eps))
                         for k in ("dropped", "unknown", "replans", "repairs"))))
    blocks.append(Table("Failure counts", ("run", "episodes", "failed episodes", "failed steps", "skipped steps",
                                           "dropped calls", "unknown names", "replans", "rejected drafts"),
                        tuple(counts), frozenset(range(1, 9))))
    sources = (
        ("Failed steps, grouped by reason", "reason", "example", failed_steps),
        ("Goal conditions left unmet", "condition", "e.g. in task", unmet_goals),
        ("Drafts rejected by grounded decoding (rewritten before running)", "reason", "example", rejected_drafts),
        ("Problems in the model's raw answers (dropped or repaired)", "problem", "example", raw_problems),
    )
    for caption, what, example, extract in sources:
        grouped = group([extract(run.episodes) for run in runs], limit=GROUPS)
        if grouped:
            blocks.append(_group_table(caption, grouped, runs, what, example))
        else:
            blocks.append(Text(f"{caption}: none.", muted=True))
    return Section("Failures", "failures", tuple(blocks))

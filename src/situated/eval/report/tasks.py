"""Sections of a report for the systems that plan and run (household, tabletop): per-task metrics and cost, SR
by task, and why episodes failed. What differs between the systems is data: which metrics are drawn, which
counts and which groups of failure reasons are shown."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ...trace import SkipEvent
from ..episode import Episode
from ..summary import by_task, stat
from .document import Block, Section, Table, Text
from .failures import Group, failed_steps, group, raw_problems, rejected_drafts, unmet_goals
from .figures import task_bars
from .runs import RunResults

Extract = Callable[[Iterable[Episode]], list[tuple[str, str]]]
GROUPS = 15
"""The most frequent reasons shown per failure table."""

EXTRACTORS: dict[str, Extract] = {"failed": failed_steps, "unmet": unmet_goals, "rejected": rejected_drafts,
                                  "raw": raw_problems}
"""What reads the items of each kind of failure table a system names (`FailureTable.source`)."""


def _mean(values: Sequence[float], digits: int) -> str:
    return f"{sum(values) / len(values):,.{digits}f}"


def _task_name(rows: Sequence[Episode]) -> str:
    """"3. put the apple in the bowl"; a tabletop task with its distractors: "3. with banana: put the apple ..."."""
    details = rows[0].details
    index = details.get("task_index", "")
    name = rows[0].instruction
    if details.get("distractors"):
        name = f"with {', '.join(map(str, details.get('distractor_objects') or ['distractors']))}: {name}"
    return f"{index}. {name}" if index != "" else name


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
    system = runs[0].system
    metrics = system.metrics[:3]
    labels = {m.key: m.label for m in system.metrics}
    order = _task_order(runs)
    groups = [dict(by_task(run.episodes)) for run in runs]
    blocks: list[Block] = []
    panels = {labels[key]: {run.label: [stat([e.metrics[key] for e in g[t]]).mean if t in g else 0.0
                                        for t, _ in order]
                            for run, g in zip(runs, groups, strict=True)}
              for key in system.task_panels}
    blocks.append(task_bars("sr_by_task", f"{' and '.join(panels)} by task, one bar per run (mean over its runs)",
                            [name for _, name in order], panels))
    if len(runs) > 1:
        rows = tuple((name, *(str(stat([e.metrics["success"] for e in g[t]])) if t in g else "–" for g in groups))
                     for t, name in order)
        blocks.append(Table("SR by task (mean ± std over runs)", ("task", *(r.label for r in runs)), rows,
                            frozenset(range(1, len(runs) + 1))))
    header = ("task", *(m.label for m in metrics), "steps", "unmet goals", "tokens", "prompt tokens",
              "calls", "model seconds", "wall seconds")
    for run, g in zip(runs, groups, strict=True):
        rows = []
        for task, name in order:
            if task not in g:
                continue
            eps = g[task]
            rows.append((name, *(str(stat([e.metrics[m.key] for e in eps])) for m in metrics),
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
    """Why episodes failed: counts, then grouped step failures, unmet goals, (household) drafts rejected by
    grounded decoding and problems in the raw answers."""
    system = runs[0].system
    blocks: list[Block] = [Text(
        "Reasons are grouped after normalizing them: the call's object names become <obj>, scene ids and numbers "
        "are dropped, so the same failure on different objects counts once. Counts are over all episodes of a run.")]
    if system.failure_note:
        blocks.append(Text(system.failure_note))
    counts = []
    for run in runs:
        eps = run.episodes
        failed = sum(1 for e in eps for s in e.trace.steps if not s.ok)
        skipped = sum(1 for e in eps for ev in e.trace if isinstance(ev, SkipEvent))
        counts.append((run.label, str(len(eps)), str(sum(not e.success for e in eps)), str(failed), str(skipped),
                       *(str(count(eps)) for _, count in system.failure_counts)))
    header = ("run", "episodes", "failed episodes", "failed steps", "skipped steps",
              *(c for c, _ in system.failure_counts))
    blocks.append(Table("Failure counts", header, tuple(counts), frozenset(range(1, len(header)))))
    for kind in system.failure_tables:
        grouped = group([EXTRACTORS[kind.source](run.episodes) for run in runs], limit=GROUPS)
        if grouped:
            blocks.append(_group_table(kind.caption, grouped, runs, kind.what, kind.example))
        else:
            blocks.append(Text(f"{kind.caption}: none.", muted=True))
    return Section("Failures", "failures", tuple(blocks))

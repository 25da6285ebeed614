"""The error breakdown of a report: how many of each run's episodes ended in each kind of error, as the
evaluator that judged them named it (`details["error_type"]`; EAI: missing step, wrong order, affordance ...)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from .document import Section, Table, Text
from .runs import RunResults

NO_ERROR = "none (executed)"


def _kind(value: object) -> str:
    return NO_ERROR if value in (None, "") else str(value).replace("_", " ")


def error_breakdown(runs: Sequence[RunResults]) -> Section:
    """Per error kind: episodes of each run (and their percent), most frequent first, episodes without error last."""
    counts = [Counter(_kind(e.details.get("error_type")) for e in run.episodes) for run in runs]
    total = sum(counts, Counter())
    kinds = sorted((k for k in total if k != NO_ERROR), key=lambda k: (-total[k], k))
    kinds += [NO_ERROR] if NO_ERROR in total else []
    rows = tuple((kind, *(f"{c[kind]} ({100 * c[kind] / len(run.episodes):.1f} %)"
                          for c, run in zip(counts, runs, strict=True))) for kind in kinds)
    return Section("Errors", "errors", (
        Text("What the evaluator found wrong with each answer, one kind per task (its first error): the shares "
             "of a run's tasks. An executed answer may still miss a goal (SR below ESR)."),
        Table("Error breakdown (tasks, % of the run's tasks)", ("error", *(r.label for r in runs)), rows,
              frozenset(range(1, len(runs) + 1))),
    ))

"""The sandbox study's own report section: the measures per bag under each condition, the paper's per-bag
panels, and the relative change teaching brings against the no-teaching baseline."""

from __future__ import annotations

from collections.abc import Sequence

from ...sandbox.study import trial_rows
from ...sandbox.study_figure import study_png
from ..systems.sandbox_study import PAPER_NOTE
from .document import Block, Figure, Section, Table, Text
from .runs import RunResults

COLUMNS = (("person_supervision_minutes", "supervision min (person)"), ("supervision_minutes", "supervision min "
           "(events)"), ("person_teaching_minutes", "teaching min (person)"), ("utterances_per_task",
           "utterances / task"), ("skills_per_behaviour", "skills / behaviour call"), ("skills_per_command",
           "skills / command"), ("mean_depth", "call depth"), ("skill_failures", "skill failures"))
CHANGES = (("person_supervision_minutes", "supervision (person model)", "-22.1% (active supervision)"),
           ("supervision_minutes", "supervision (events)", "-22.1% (active supervision)"),
           ("skills_per_command", "seed skills per command", "+19.7% (complexity of autonomous behaviour)"),
           ("skill_failures", "skill failures", "-67.1%"))
"""Measures compared across conditions, with the paper's change against its baselines (its abstract)."""


def _change(base: float, value: float) -> str:
    return "–" if base == 0 else f"{(value - base) / base:+.1%}"


def study_bags(runs: Sequence[RunResults]) -> Section:
    """Per condition and bag: the means over participants, the per-bag figure, and teaching against the
    baseline over all bags."""
    rows = [dict(e.details) for run in runs for e in run.episodes]
    trials = trial_rows(rows)
    blocks: list[Block] = [
        Text("Each bag is one scripted session per participant; the numbers are means over participants. "
             "Supervision in minutes comes from a person-time model (speaking, reading plans, deciding, "
             "pointing, demonstrating: see docs/sandbox.md), and from the events' timestamps (each plan shown to "
             "its decision, plus each lesson), which is the robot's own time here."),
        Figure("study_per_bag", "Per bag: supervision, skills per behaviour call, seed skills per command and "
               "skill failures, teaching against no-teaching", study_png(trials), "image/png",
               "bar charts per bag for each condition"),
        Table("Per condition and bag (means over participants)",
              ("condition", "bag", "sessions", *(label for _, label in COLUMNS), "met"),
              tuple((t["condition"], str(t["trial"]), str(t["sessions"]), *(f"{t[k]:.2f}" for k, _ in COLUMNS),
                     f"{t['met']:.1f} / {t['expectations']:.1f}") for t in trials),
              frozenset(range(1, len(COLUMNS) + 4))),
    ]
    totals = {c: {k: sum(float(r.get(k, 0) or 0) for r in rows if r["condition"] == c)
                  / max(1, sum(r["condition"] == c for r in rows)) for k, _, _ in CHANGES}
              for c in ("no-teaching", "teaching")}
    if all(sum(r["condition"] == c for r in rows) for c in totals):
        blocks.append(Table("Teaching against the no-teaching baseline (mean per session over all bags)",
                            ("measure", "no-teaching", "teaching", "change", "paper: change vs baselines"),
                            tuple((label, f"{totals['no-teaching'][k]:.2f}", f"{totals['teaching'][k]:.2f}",
                                   _change(totals["no-teaching"][k], totals["teaching"][k]), paper)
                                  for k, label, paper in CHANGES),
                            frozenset({1, 2, 3})))
    blocks.append(Text(PAPER_NOTE, muted=True))
    return Section("Per bag", "bags", tuple(blocks))

"""The EAI system (the Embodied Agent Interface's VirtualHome action sequencing, scored by EAI's own evaluator):
`situated eval eai`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import System
from .eai_episodes import METRICS, EaiJob, eai_config, mode
from .papers import EAI_SPLIT, PAPER_RESULTS

BREAKDOWN = ("parsing", "hallucination", "predicate_argument_number", "wrong_order", "missing_step", "affordance",
             "additional_step")
"""EAI's error breakdown (percent of tasks), in its own order."""


def _setting(config: Mapping[str, Any]) -> str:
    """"open loop" (the benchmark's own setting) or "grounded"."""
    return mode(int(config.get("repairs") or 0))


EAI = System(
    name="eai", title="EAI action sequencing", command="situated eval eai", metrics=METRICS,
    definitions="SR (EAI's evaluator finds every goal met) and ESR (EAI's evaluator executes the whole answer), "
                "EAI's per-task verdicts in percent,",
    sections=("errors", "cost"),
    paper_metrics=("success",),
    papers=tuple(r for r in PAPER_RESULTS if r.system == "eai"), papers_scaled=False,
    paper_notes=("The published rows were scored by eai-eval 1.0.4 on names-only answers; a run under --protocol "
                 "1.0.5 (name+id answers) is scored by that version's evaluator, so the rows are a reference.",),
    split_of=lambda config: EAI_SPLIT,
    setting_of=_setting,
    config=eai_config, job=EaiJob,
)

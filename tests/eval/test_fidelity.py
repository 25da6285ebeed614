"""Our engine against VirtualHome's own evolving-graph executor on a subset of the real programs."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("virtualhome_eval")

from situated.eval.systems.household_fidelity import compare, load_cases


def test_fidelity_on_40_programs(progprompt_data: Path) -> None:
    cases = load_cases(progprompt_data, limit=40)
    assert len(cases) == 40
    assert any(c.name.startswith("progprompt/") for c in cases) and any(c.name.startswith("eai/") for c in cases)
    report = compare(cases)
    disagreements = [r.name for r in report.results if not (r.agree_exec and r.agree_final)]
    assert report.agree_exec >= 0.95 * report.programs, disagreements
    assert report.agree_final >= 0.95 * report.programs, disagreements
    assert sum(len(r.vh_ok) for r in report.results) > 200   # the programs really ran, step by step

"""Replaying ProgPrompt's env1/env2 ground-truth programs must reproduce the released final states.

The reference (shared/README.md): VirtualHome's executor gives SR 0.90 / 1.00, GCR 0.992 / 1.000, Exec 1.0;
the one env1 miss is "chicken HEATED", which only ProgPrompt's extra state rules add, so with our derived states
env1 reaches SR 1.0 too. Conditions are class-level and include CLOSE/FACING facts (docs/fidelity.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from situated.datasets.progprompt import load_split
from situated.eval.summary import summarize
from situated.eval.systems.household_metrics import HOUSEHOLD_METRICS
from situated.eval.systems.household_replay import replay_split


def replay(data: Path, env_id: int, derived: bool) -> tuple[float, float, float, list[str]]:
    episodes = replay_split(load_split(data, f"env{env_id}"), derived_states=derived)
    assert len(episodes) == 10
    summary = summarize(episodes, HOUSEHOLD_METRICS)
    missed = [f"{e.instruction}: {fact}" for e in episodes for fact in e.details["missing"]]
    return summary["success"].mean, summary["gcr"].mean, summary["exec"].mean, missed


@pytest.mark.parametrize("env_id", [1, 2])
def test_ground_truth_replay_with_derived_states(progprompt_data: Path, env_id: int) -> None:
    sr, gcr, exec_rate, missed = replay(progprompt_data, env_id, derived=True)
    assert exec_rate == 1.0
    assert sr >= 0.9 and gcr >= 0.99, missed
    assert missed == []


def test_without_derived_states_env1_misses_exactly_the_heated_chicken(progprompt_data: Path) -> None:
    sr, gcr, exec_rate, missed = replay(progprompt_data, 1, derived=False)
    assert exec_rate == 1.0
    assert missed == ["microwave chicken: chicken HEATED"]
    assert sr == pytest.approx(0.9)
    assert gcr == pytest.approx(1 - (1 / 12) / 10)   # 11 of the 12 goal facts of that task: 0.992, as released

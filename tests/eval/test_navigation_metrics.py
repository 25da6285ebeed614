"""TC / SPD / KPA (faithful and corrected) on a small hand-made street graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes import write_street_dataset
from situated.datasets.map2seq import load_split
from situated.eval.episode import Episode
from situated.eval.systems.navigation_episodes import navigation_summary
from situated.eval.systems.navigation_metrics import as_metrics, episode_metrics


@pytest.fixture()
def dataset(tmp_path: Path):
    return load_split(write_street_dataset(tmp_path), "dev")


def test_metrics_perfect_and_neighbour_stops(dataset) -> None:
    graph = dataset.graph
    perfect = episode_metrics(graph, ["A", "B", "C", "D"], ["A", "B", "C", "D"])
    assert perfect.tc and perfect.spd == 0 and perfect.kpa == 1 and perfect.kpa_corrected == 1
    short = episode_metrics(graph, ["A", "B", "C", "D"], ["A", "B", "C"])
    assert short.tc and short.spd == 1  # a neighbour of the target counts as reached
    assert not episode_metrics(graph, ["A", "B", "C", "D"], ["A", "B"]).tc


def test_kpa_faithful_counts_the_start_for_free_corrected_does_not(dataset) -> None:
    graph = dataset.graph
    # Gold A->B->C->D: key points are the start and B (3 out-edges) and C (3 out-edges), then the stop.
    # An agent that turned off at B into W and stopped there:
    wrong = episode_metrics(graph, ["A", "B", "C", "D"], ["A", "B", "W"])
    # faithful: items [A, B, (B,C), (C,D)] + stop; A and B are shared -> 2 / 5
    assert wrong.kpa == pytest.approx(2 / 5)
    # corrected: decisions (A,B), (B,C), (C,D) + stop; only (A,B) right -> 1 / 4
    assert wrong.kpa_corrected == pytest.approx(1 / 4)
    # An agent that never moved: its path has no key points at all in either variant
    stay = episode_metrics(graph, ["A", "B", "C", "D"], ["A"])
    assert stay.kpa == 0 and stay.kpa_corrected == 0 and stay.spd == 3
    summary = navigation_summary([Episode("w", "", 0, as_metrics(wrong)), Episode("s", "", 0, as_metrics(stay))])
    assert summary["n"] == 2 and summary["kpa"] == pytest.approx(20.0) and summary["tc"] == 0



"""ProgPrompt's SR / GCR / Exec / precision on hand-made condition sets (PROTOCOLS.md §1)."""

import pytest

from situated.eval.episode import Episode
from situated.eval.summary import summarize
from situated.eval.systems.household import household_summary
from situated.eval.systems.household_metrics import (
    HOUSEHOLD_METRICS,
    EpisodeScore,
    as_metrics,
    gcr,
    goal_conditions,
    precision,
    score_episode,
)

INITIAL = {"salmon INSIDE fridge", "fridge CLOSED", "microwave OFF", "microwave CLOSED"}
FINAL_GT = {"salmon INSIDE microwave", "fridge CLOSED", "microwave ON", "microwave CLOSED", "salmon HEATED"}


def test_goal_is_what_the_ground_truth_changed():
    assert goal_conditions(INITIAL, FINAL_GT) == {"salmon INSIDE microwave", "microwave ON", "salmon HEATED"}


def test_gcr_counts_only_newly_true_goal_conditions():
    goal = goal_conditions(INITIAL, FINAL_GT)
    agent = {"salmon INSIDE microwave", "fridge CLOSED", "microwave OFF", "microwave CLOSED"}
    assert gcr(goal, INITIAL, agent) == pytest.approx(1 / 3)
    assert gcr(goal, INITIAL, FINAL_GT) == 1.0
    assert gcr(goal, INITIAL, INITIAL) == 0.0
    assert gcr(frozenset(), INITIAL, INITIAL) == 1.0


def test_precision_punishes_undoing_what_should_stay():
    agent = {"salmon INSIDE microwave", "fridge OPEN", "microwave ON", "microwave CLOSED"}
    # kept by the ground truth: fridge CLOSED, microwave CLOSED; the agent left the fridge open
    assert precision(INITIAL, FINAL_GT, agent) == pytest.approx(0.5)


def test_summary_is_mean_over_tasks_then_mean_and_std_over_runs():
    scores = [
        EpisodeScore("a", 0, 1.0, 1.0, 1.0), EpisodeScore("b", 0, 0.5, 0.5, 1.0),
        EpisodeScore("a", 1, 1.0, 1.0, 1.0), EpisodeScore("b", 1, 1.0, 1.0, 1.0),
    ]
    episodes = [Episode(score.task, score.task, score.run, as_metrics(score)) for score in scores]
    s = summarize(episodes, HOUSEHOLD_METRICS)
    assert (s.tasks, s.runs) == (2, 2)
    assert s["success"].mean == pytest.approx(0.75) and s["success"].std == pytest.approx(0.25)
    assert s["gcr"].mean == pytest.approx(0.875)
    assert s["exec"].mean == pytest.approx(0.875)
    assert household_summary(episodes)["sr_std"] == 0.25


def test_score_episode_exec_is_executed_over_attempted():
    s = score_episode("t", 0, INITIAL, FINAL_GT, FINAL_GT, executed=3, attempted=4)
    assert s.success and s.exec_rate == 0.75
    assert score_episode("t", 0, INITIAL, FINAL_GT, INITIAL, 0, 0).exec_rate == 0.0

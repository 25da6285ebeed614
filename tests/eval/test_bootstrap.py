"""Bootstrap intervals over tasks within runs: they bracket the summary's mean, shrink with more tasks, repeat
under a seed, and pair differences by task."""

from __future__ import annotations

import pytest

from situated.eval.bootstrap import bootstrap, bootstrap_difference, same_tasks
from situated.eval.episode import Episode
from situated.eval.summary import summarize


def episodes(successes: list[list[int]], prefix: str = "t") -> list[Episode]:
    """One episode per (run, task) with the given success values."""
    return [Episode(f"{prefix}{task}", "do it", run, {"success": float(value)})
            for run, values in enumerate(successes) for task, value in enumerate(values)]


def test_interval_brackets_the_summary_mean_and_repeats_under_the_seed() -> None:
    eps = episodes([[1, 0, 1, 1, 0, 1, 0, 1], [1, 1, 1, 0, 0, 1, 0, 0]])
    interval = bootstrap(eps, ["success"], resamples=500, seed=4)["success"]
    assert interval.mean == summarize(eps, ["success"])["success"].mean == 0.5625
    assert interval.low < interval.mean < interval.high and interval.low >= 0.0 and interval.high <= 1.0
    assert bootstrap(eps, ["success"], resamples=500, seed=4)["success"] == interval
    assert bootstrap(eps, ["success"], resamples=500, seed=5)["success"] != interval


def test_more_tasks_give_a_narrower_interval() -> None:
    few = bootstrap(episodes([[1, 0] * 4]), ["success"], resamples=400)["success"]
    many = bootstrap(episodes([[1, 0] * 64]), ["success"], resamples=400)["success"]
    assert few.mean == many.mean == 0.5
    assert many.high - many.low < (few.high - few.low) / 2


def test_a_constant_metric_has_no_spread() -> None:
    interval = bootstrap(episodes([[1, 1, 1]]), ["success"], resamples=50)["success"]
    assert (interval.low, interval.mean, interval.high) == (1.0, 1.0, 1.0)


def test_differences_are_paired_by_task_when_the_tasks_are_the_same() -> None:
    a = episodes([[1, 0, 1, 0, 1, 0]])
    b = episodes([[1, 1, 1, 1, 1, 0]])  # better on exactly two tasks, equal elsewhere
    difference = bootstrap_difference(a, b, "success", resamples=500, seed=1)
    assert difference.paired and difference.mean == pytest.approx(2 / 6)
    assert 0 <= difference.low <= difference.mean <= difference.high
    unpaired = bootstrap_difference(a, episodes([[1, 1, 1, 1, 1, 0]], prefix="u"), "success", resamples=500, seed=1)
    assert not unpaired.paired and unpaired.mean == pytest.approx(2 / 6)
    assert unpaired.high - unpaired.low > difference.high - difference.low  # pairing removes task variance
    assert bootstrap_difference(a, a, "success", resamples=50).to_dict() == {"mean": 0.0, "low": 0.0, "high": 0.0,
                                                                            "paired": True}


def test_same_tasks_looks_at_every_run() -> None:
    full = episodes([[1, 0], [0, 1]])
    partial = full[:3]  # the second run lacks a task
    assert same_tasks(full, full) and not same_tasks(full, partial)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="no episodes"):
        bootstrap([], ["success"])
    with pytest.raises(ValueError, match="resamples"):
        bootstrap(episodes([[1]]), ["success"], resamples=0)
    with pytest.raises(ValueError, match="level"):
        bootstrap(episodes([[1]]), ["success"], level=1.5)

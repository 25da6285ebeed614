"""Sampled household runs (`eval progprompt --temperature`): each call's seed comes from the run and the prompt,
greedy calls pass through untouched, and the summary carries intervals and abandoned steps per split."""

from __future__ import annotations

import pytest

from fakes import ScriptedLLM
from situated.errors import SituatedError
from situated.eval.episode import Cost, Episode
from situated.eval.systems.household import household_summary
from situated.eval.systems.household_sampling import SampledLLM, check_temperature
from situated.trace import Trace


def test_greedy_calls_pass_through_unchanged() -> None:
    llm = ScriptedLLM(default="x")
    sampled = SampledLLM(llm, 0.0, seed=3)
    sampled.run = 4
    sampled.complete("p", max_tokens=7, temperature=0.0, seed=11, grammar="g")
    assert llm.calls == [{"prompt": "p", "stop": (), "max_tokens": 7, "temperature": 0.0, "frequency_penalty": 0.0,
                          "grammar": "g", "seed": 11}]


def test_sampled_calls_are_seeded_by_run_and_prompt() -> None:
    llm = ScriptedLLM(default="x")
    sampled = SampledLLM(llm, 0.2, seed=0)
    for run in (0, 0, 1):
        sampled.run = run
        sampled.complete("plan this", temperature=0.0, seed=0)
    sampled.complete("another prompt")
    seeds = [c["seed"] for c in llm.calls]
    assert all(c["temperature"] == 0.2 for c in llm.calls)
    assert seeds[0] == seeds[1]            # a rerun of a run repeats its samples
    assert seeds[2] != seeds[0]            # another run draws others
    assert seeds[3] != seeds[2]            # and so does another prompt in the same run
    assert SampledLLM(llm, 0.2, seed=1).uri == llm.uri


@pytest.mark.parametrize("temperature", [-0.1, 2.5])
def test_temperatures_out_of_range_are_refused(temperature: float) -> None:
    with pytest.raises(SituatedError, match="--temperature must be between 0 and 2"):
        check_temperature(temperature)


def _episode(task: str, run: int, success: float, split: str, abandoned: int) -> Episode:
    metrics = {"success": success, "gcr": success, "exec": 1.0, "precision": 1.0}
    return Episode(task, task, run, metrics, Trace(), Cost(tokens=10, model_seconds=2.0),
                   {"split": split, "abandoned": abandoned})


def test_summary_has_mean_std_intervals_and_abandoned_per_split() -> None:
    episodes = [_episode(f"t{i}", run, float((i + run) % 2), "env1" if i < 3 else "env2", i % 2)
                for run in range(2) for i in range(6)]
    s = household_summary(episodes)
    assert s["runs"] == 2 and s["tasks"] == 6
    assert s["sr"] == 0.5 and s["sr_std"] == 0.0
    low, high = s["sr_ci"]
    assert 0.0 <= low < 0.5 < high <= 1.0
    assert s["exec_ci"] == [1.0, 1.0]
    assert s["abandoned_per_split"] == {"env1": 2, "env2": 4} and s["abandoned"] == 6
    assert s["model_seconds"] == 24.0

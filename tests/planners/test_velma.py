"""The VELMA prompting agent: examples from the training area, prompt layout, legal actions, and one real
episode replayed from recorded calls of the 0.5B model (tests/cassettes/velma_episode.jsonl)."""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from fakes import CASSETTES, ScriptedLLM, write_street_dataset
from situated.actions import STREET_SPACE
from situated.cli import main
from situated.datasets.map2seq import NavDataset, load_split
from situated.envs.streets.env import NavInstance, StreetEnv
from situated.envs.streets.transitions import ACTIONS
from situated.errors import SituatedError
from situated.eval.systems.navigation_episodes import (
    example_from_route,
    in_partition,
    navigation_episode,
    velma_examples,
)
from situated.llm.base import Scores
from situated.llm.cassette import wrap
from situated.planners.nav_baselines import make_agent
from situated.planners.retrieval import Bm25Retriever
from situated.planners.velma import ACTION_GRAMMAR, TASK_LINE, Example, VelmaAgent
from situated.program import Call

CASSETTE = CASSETTES / "velma_episode.jsonl"
MODEL = "llamacpp:qwen2.5-coder-0.5b"


@pytest.fixture(scope="module")
def examples(seen: NavDataset) -> tuple[Example, ...]:
    return velma_examples(seen, seed=0)


def test_examples_are_solved_training_area_routes(seen: NavDataset, examples: tuple[Example, ...]) -> None:
    by_id = {i.id: i for i in seen.instances}
    assert len(examples) == 2
    for example in examples:
        instance = by_id[example.id]
        assert in_partition(seen.graph, instance)
        assert all(seen.graph.nodes[p].partition == "seen" for p in instance.route)
        assert example.instruction == instance.instruction
        assert example.actions[0] == "forward" and example.actions[-1] == "stop"
        assert {"left", "right"} & set(example.actions)
        assert len(example.observations) == len(example.actions)
        # replaying the example's actions walks its route
        env = StreetEnv(seen.graph, max_steps=None)
        env.reset(instance)
        for action in example.actions[1:]:
            env.step(Call(action))
        assert env.trajectory.pano_path == instance.route
        assert list(env.trajectory.observations[1:]) == list(example.observations)
    # at least one example shows an intersection observation
    assert any(re.fullmatch(r"There is a \d-way intersection\.", o) for e in examples for o in e.observations)


def test_example_choice_follows_the_seed(seen: NavDataset, examples: tuple[Example, ...]) -> None:
    assert velma_examples(seen, seed=0) == examples
    others = {tuple(e.id for e in velma_examples(seen, seed=s)) for s in range(1, 5)}
    assert len(others | {tuple(e.id for e in examples)}) > 1


def test_prompt_layout_and_growing_history(dev: NavDataset, examples: tuple[Example, ...]) -> None:
    llm = ScriptedLLM([" forward", " left", " forward"], default=" forward")
    agent = VelmaAgent(llm, examples)
    env = StreetEnv(dev.graph, max_steps=3)
    instance = dev.instances[0]
    record = navigation_episode(env, agent, instance).details
    prompts = llm.prompts
    head = agent.head
    assert head.startswith(TASK_LINE)
    for action in STREET_SPACE:
        assert f"- {action.name}: {action.doc}" in head
    for number, example in enumerate(examples, start=1):
        assert f"Example {number}\nDirections: {' '.join(example.instruction.split())}\n" in head
        assert f"\n{len(example.actions)}. stop\n" in head
    assert all(p.startswith(head + f"Directions: {instance.instruction}\nWalk:\n1. forward\n") for p in prompts)
    # each prompt extends the previous one and ends asking for the next numbered step
    for step, (before, after) in enumerate(itertools.pairwise(prompts), start=2):
        assert after.startswith(before)
        assert before.endswith(f"\n{step}.")
    # the history carries the observation texts and the executed actions, in order
    last = prompts[-1]
    history = last[len(head) :]
    for step, observation in enumerate(record["observations"][1 : len(prompts)], start=1):
        if observation:
            assert f"{step}. {record['actions'][step - 1]}\n{observation}\n" in history
    assert all(r["grammar"] == ACTION_GRAMMAR and r["stop"] == ("\n",) for r in llm.calls)


def test_shared_head_is_identical_across_episodes(dev: NavDataset, examples: tuple[Example, ...]) -> None:
    llm = ScriptedLLM(default=" forward")
    agent = VelmaAgent(llm, examples)
    env = StreetEnv(dev.graph, max_steps=2)
    for instance in dev.instances[:2]:
        navigation_episode(env, agent, instance)
    first, last = llm.prompts[0], llm.prompts[-1]
    assert first.startswith(agent.head) and last.startswith(agent.head)
    assert dev.instances[0].instruction in first and dev.instances[1].instruction in last


def test_answers_are_corrected_by_the_environment_and_the_history_shows_what_ran(
    dev: NavDataset, examples: tuple[Example, ...]
) -> None:
    llm = ScriptedLLM([" LEFT", "nonsense", " turn_around"], default=" stop")
    agent = VelmaAgent(llm, examples)
    episode = navigation_episode(StreetEnv(dev.graph), agent, dev.instances[0])
    asked = [s.call for s in episode.trace.steps]
    executed = episode.details["actions"]
    assert asked[1:4] == ["left()", "nonsense()", "turn_around()"]
    assert executed[2] == "forward"  # not an action: the environment walks on
    assert set(executed) <= set(ACTIONS) and executed[-1] == "stop"
    # the history shows what the environment executed, not what the model said
    for step, action in enumerate(executed[:3], start=1):
        assert f"\n{step}. {action}\n" in agent.prompt


def test_recorded_episode_replays_end_to_end(dev: NavDataset, examples: tuple[Example, ...]) -> None:
    llm = wrap(MODEL, CASSETTE, mode="replay")  # recorded once with the real 0.5B model; never loads it here
    agent = make_agent("llm", llm=llm, examples=examples)
    record = navigation_episode(StreetEnv(dev.graph), agent, dev.instances[0]).details
    calls = sum(1 for _ in CASSETTE.open(encoding="utf-8"))
    assert set(record["actions"]) <= set(ACTIONS)
    assert len(record["actions"]) - 1 == calls  # one model call per action after the forced forward
    assert record["actions"][-1] == "stop" or len(record["actions"]) == 56
    assert record["pano_path"][0] == dev.instances[0].route[0]


def test_cli_runs_the_llm_agent_from_the_cassette(
    velma_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([
        "navigate", "--data", str(velma_data / "map2seq_unseen"), "--agent", "llm", "--model", MODEL,
        "--cassette", str(CASSETTE), "--cassette-mode", "replay", "--limit", "1", "--out", str(tmp_path), "--json",
    ])
    assert code == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["n"] == 1
    stores = list(tmp_path.glob("map2seq_dev_llm-*/episodes.jsonl"))
    assert len(stores) == 1 and len(stores[0].read_text().splitlines()) == 1


def test_llm_agent_without_model_is_a_clear_error(velma_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["navigate", "--data", str(velma_data / "map2seq_unseen"), "--agent", "llm", "--limit", "1"])
    assert code == 2
    assert "--model" in capsys.readouterr().err


# --- beyond VELMA: retrieved examples, stop by probability, intersection counts (small street in code) ---------


class ScoringScript(ScriptedLLM):
    """ScriptedLLM that also scores: each call takes the next {word: probability} of the action words."""

    def __init__(self, probabilities: list[dict[str, float]]) -> None:
        super().__init__()
        self.probabilities = list(probabilities)
        self.scored: list[tuple[str, list[str]]] = []

    def score(self, prompt: str, continuations: Sequence[str]) -> Scores:
        self.scored.append((prompt, list(continuations)))
        chosen = self.probabilities.pop(0)
        rest = (1.0 - sum(chosen.values())) / (len(continuations) - len(chosen))
        return Scores(tuple(math.log(chosen.get(c.strip(), rest)) for c in continuations), prompt_tokens=7)


@pytest.fixture
def street(tmp_path: Path) -> NavDataset:
    return load_split(write_street_dataset(tmp_path), "dev")


def test_stop_threshold_stops_on_the_probability_of_stop(street: NavDataset) -> None:
    llm = ScoringScript([{"forward": 0.7, "stop": 0.2}, {"forward": 0.5, "stop": 0.35}])
    agent = VelmaAgent(llm, (), stop_threshold=0.3)
    episode = navigation_episode(StreetEnv(street.graph), agent, street.instances[0])
    assert episode.details["actions"] == ["forward", "forward", "stop"]  # stop at 0.35 although forward is likelier
    assert [c for _, c in llm.scored] == [[f" {a.name}" for a in STREET_SPACE]] * 2
    assert all(prompt.endswith(f"\n{step}.") for step, (prompt, _) in enumerate(llm.scored, start=2))
    assert agent.last_probabilities["stop"] == pytest.approx(0.35)
    assert episode.cost.calls == 2 and episode.cost.prompt_tokens == 14


def test_below_the_threshold_the_likeliest_other_action_is_taken(street: NavDataset) -> None:
    llm = ScoringScript([{"stop": 0.45, "right": 0.3, "forward": 0.2}, {"stop": 0.9}])
    agent = VelmaAgent(llm, (), stop_threshold=0.5)
    episode = navigation_episode(StreetEnv(street.graph), agent, street.instances[0])
    assert episode.details["actions"] == ["forward", "right", "stop"]
    assert "\n2. right\n" in agent.prompt


def test_a_stop_threshold_needs_a_scoring_backend_and_a_probability() -> None:
    with pytest.raises(SituatedError, match="cannot score continuations"):
        VelmaAgent(ScriptedLLM(), (), stop_threshold=0.5)
    for bad in (0.0, 1.5):
        with pytest.raises(SituatedError, match="probability"):
            VelmaAgent(ScoringScript([]), (), stop_threshold=bad)
    agent = make_agent("llm", llm=ScoringScript([]), examples=(), stop_threshold=0.4)
    assert isinstance(agent, VelmaAgent) and agent.stop_threshold == 0.4


def test_retrieved_examples_are_the_nearest_never_the_task_itself(street: NavDataset) -> None:
    lines = [
        {"id": 1, "route_panoids": ["A", "B", "C", "D"], "navigation_text": "Go straight to the bakery."},
        {"id": 2, "route_panoids": ["A", "B", "W"], "navigation_text": "Turn left at the bank."},
        {"id": 3, "route_panoids": ["A", "B", "C", "K"], "navigation_text": "Turn right at the second light."},
        {"id": 4, "route_panoids": ["A", "B", "C"], "navigation_text": "Walk to the bakery and stop."},
    ]
    pool = tuple(
        example_from_route(street.graph, NavInstance(str(r["id"]), "map2seq", tuple(r["route_panoids"]), 0.0,
                                                     str(r["navigation_text"])))
        for r in lines
    )
    llm = ScriptedLLM(default=" stop")
    agent = VelmaAgent(llm, pool, shots=2, retriever=Bm25Retriever())
    task = NavInstance("1", "map2seq", ("A", "B", "C", "D"), 0.0, "Go to the bakery.")
    # the task's own route (id 1) is never an example, although its directions are the nearest; nearest last
    assert [e.id for e in agent.examples_for(task)] == ["2", "4"]
    navigation_episode(StreetEnv(street.graph), agent, task)
    prompt = llm.prompts[0]
    assert prompt.count("\nExample ") == 2 and "Go straight" not in prompt
    assert prompt.index("Example 2\nDirections: Walk to the bakery and stop.") > prompt.index("Turn left at the bank")
    with pytest.raises(SituatedError, match="number of shots"):
        VelmaAgent(llm, pool, retriever=Bm25Retriever())


def test_examples_count_intersections_like_the_episodes(street: NavDataset) -> None:
    instance = street.instances[0]  # A B C D: two 3-way intersections, B and C
    example = example_from_route(street.graph, instance, count_intersections=True)
    assert example.observations[:2] == (
        "There is a 3-way intersection. It is the 1st intersection since the start.",
        "There is a 3-way intersection. It is the 2nd intersection since the start.",
    )
    env = StreetEnv(street.graph, count_intersections=True)
    env.reset(instance)
    assert env.observation.text == example.observations[0]
    assert example_from_route(street.graph, instance).observations[0] == "There is a 3-way intersection."

"""Navigation traces for finetuning: the finetune template is the prompting agent's own prompt, targets are the
gold (teacher forcing) or the oracle's corrections (response-based learning), and only training-area routes of
map2seq_seen are used (no torch needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes import write_street_dataset
from situated.datasets.map2seq import load_split
from situated.envs.streets.env import StreetEnv
from situated.envs.streets.oracle import gold_actions
from situated.errors import DataError
from situated.train.tokens import IGNORE, encode
from situated.train.traces import finetune_prompter, student_trace, teacher_trace, training_routes


def _seen(tmp_path: Path) -> Path:
    """The hand-made street as a training-area dataset (every panorama in the seen partition)."""
    seen = write_street_dataset(tmp_path, "map2seq_seen")
    nodes = seen / "graph" / "nodes.txt"
    nodes.write_text(nodes.read_text().replace(",unseen", ",seen"))
    return seen


def test_teacher_trace_is_the_agents_prompt_with_the_gold_actions(tmp_path: Path) -> None:
    loaded = load_split(_seen(tmp_path), "dev")
    instance = next(i for i in loaded.instances if i.id == "2")  # A -> B, then left onto W
    trace = teacher_trace(loaded.graph, instance)
    executed = gold_actions(loaded.graph, instance)[1:]  # after Map2seq's forced forward
    assert trace.targets == trace.shown == executed and "left" in executed and executed[-1] == "stop"
    # the running agent is shown exactly this text before each decision
    agent, env = finetune_prompter(), StreetEnv(loaded.graph, None, max_steps=None)
    agent.reset(instance)
    env.reset(instance)
    prompt = agent.next_prompt(env.observation)
    assert trace.text.startswith(prompt) and prompt.endswith("\n2.") and "Example 1" not in prompt
    assert trace.text.endswith("2. left\n3. forward\n4. stop\n")  # left turns in place at B


def test_student_trace_learns_the_oracles_correction_where_the_policy_erred(tmp_path: Path) -> None:
    loaded = load_split(_seen(tmp_path), "dev")
    instance = next(i for i in loaded.instances if i.id == "2")
    wrong = student_trace(loaded.graph, instance, lambda prompt: "forward", max_steps=6)
    assert not wrong.success
    assert wrong.shown[0] == "forward" and wrong.targets[0] == "left"  # at B it went on; the oracle says left
    assert wrong.targets[1] == "turn_around"  # at C, past the turn: go back
    right = student_trace(loaded.graph, instance, _replay(["left", "forward", "stop"]))
    assert right.success and right.targets == right.shown == ["left", "forward", "stop"]


def _replay(words: list[str]):
    queue = list(words)
    return lambda prompt: queue.pop(0)


def test_encoding_learns_action_tokens_only_and_a_correction_by_its_first_token(tmp_path: Path) -> None:
    loaded = load_split(_seen(tmp_path), "dev")
    instance = next(i for i in loaded.instances if i.id == "2")

    def tokenize(text: str) -> list[int]:  # one token per word piece, spaces kept with the word
        pieces = text.replace("\n", " \n ").split(" ")
        return [hash(p) % 10_000 for p in (" " + w if w != "\n" else w for w in pieces) if p.strip() or p == "\n"]

    gold = encode(teacher_trace(loaded.graph, instance), tokenize)
    learned = [i for i, label in enumerate(gold.labels) if label != IGNORE]
    assert gold.learned == 3 * 2  # " left" "\n", " forward" "\n", " stop" "\n"
    assert all(gold.labels[i] == gold.ids[i] for i in learned)
    assert len(gold.first_action_positions()) == 3
    wrong = encode(student_trace(loaded.graph, instance, lambda prompt: "forward", max_steps=3), tokenize)
    first = wrong.first_action_positions()[0]
    assert wrong.labels[first] == tokenize(" left")[0] != wrong.ids[first]
    assert wrong.labels[first + 1] == IGNORE  # the newline after a corrected action is not learned


def test_training_routes_refuse_unseen_data_and_keep_only_the_training_area(tmp_path: Path) -> None:
    unseen = write_street_dataset(tmp_path)
    with pytest.raises(DataError, match="never unseen data"):
        training_routes(unseen, ["dev"])
    routes = training_routes(_seen(tmp_path), ["dev"])
    assert [i.id for i in routes.instances] == ["1", "2", "3"] and routes.skipped == 0


def test_the_real_training_area_holds_1172_routes(velma_data: Path) -> None:
    """map2seq_seen's dev and test files: 1,172 routes lie wholly in the training area (the rest are skipped)."""
    routes = training_routes(velma_data / "map2seq_seen", ["dev", "test"])
    assert len(routes.instances) == 1172 and routes.skipped == 1600 - 1172
    assert all(routes.graph.nodes[p].partition == "seen" for i in routes.instances for p in i.route)

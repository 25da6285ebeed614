"""VELMA's prompting agent: a language model picks each street-navigation action from a verbalized history.

The prompt is a fixed head (task line, the five actions with a gloss each, two solved example trajectories)
followed by the test directions and the numbered history of actions and observations::

    1. forward
    There is a 3-way intersection.
    2. left
    3.

The model completes the next action word (" forward"), constrained by a five-word grammar. Each step only appends to the
prompt, and the head is the same for every episode, so a backend with prompt-prefix reuse (the embedded
llama.cpp one) evaluates only the tokens that are new since its last call.

Example trajectories are replays of gold routes from the training area (every panorama in the `seen`
partition), taken through the same `StreetEnv` and verbalizer as the test episodes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..datasets.map2seq import NavDataset
from ..envs.streets.env import NavInstance, Observation, StreetEnv
from ..envs.streets.graph import StreetGraph
from ..envs.streets.oracle import gold_actions
from ..envs.streets.transitions import ACTIONS, correct_action, normalize_action
from ..envs.streets.visibility import VisibilitySource
from ..errors import DataError, SituatedError
from ..llm.base import LLM

#: Decoding grammar (GBNF): exactly one of the five action words. The prompt ends with "3." and the history
#: reads "3. left", so the answer starts with the space that belongs to the word's token (" left"): ending the
#: prompt with "3. " instead would split that token and throw the model off its own format. The closing newline
#: is the model's own next token (and the stop string); without it a grammar-complete answer would force a
#: full-vocabulary grammar check just to pick end-of-text.
ACTION_GRAMMAR = 'root ::= " " ("forward" | "left" | "right" | "turn_around" | "stop") "\\n"'

TASK_LINE = (
    "You walk through a city by following directions. "
    "After each action you may observe an intersection or a landmark. "
    "Answer with one action per step."
)

#: One short gloss per action word, in ACTIONS order.
ACTION_GLOSSES: dict[str, str] = {
    "forward": "move ahead to the next spot along the street you are facing",
    "left": "at an intersection, turn to face the street on your left",
    "right": "at an intersection, turn to face the street on your right",
    "turn_around": "turn to face the opposite direction",
    "stop": "stop here because you have reached the goal",
}

TRAINING_PARTITION = "seen"


@dataclass(frozen=True)
class Example:
    """A solved trajectory: `observations[i]` is the text seen right after `actions[i]`; `start` before any."""

    id: str
    instruction: str
    actions: tuple[str, ...]
    observations: tuple[str, ...]
    start: str = ""


def render_head(examples: Sequence[Example]) -> str:
    """The prompt part shared by every episode: task line, action glosses and the solved examples."""
    lines = [TASK_LINE, "", "Actions:"]
    lines += [f"- {word}: {ACTION_GLOSSES[word]}" for word in ACTIONS]
    text = "\n".join(lines) + "\n"
    for number, example in enumerate(examples, start=1):
        text += f"\nExample {number}\n" + _render_task(example.instruction, example.start)
        for step, (action, seen) in enumerate(zip(example.actions, example.observations, strict=True), 1):
            text += _render_step(step, action, seen)
    return text + "\nNow it is your turn.\n"


def _render_task(instruction: str, start: str) -> str:
    text = f"Directions: {' '.join(instruction.split())}\nWalk:\n"
    return text + (f"{start}\n" if start else "")


def _render_step(step: int, action: str, observation: str) -> str:
    return f"{step}. {action}\n" + (f"{observation}\n" if observation else "")


def example_from_route(
    graph: StreetGraph, instance: NavInstance, visibility: VisibilitySource | None = None
) -> Example:
    """Replay the gold actions of `instance` and record what the agent would have observed at each step.

    The history shows executed actions (after the environment's corrections); Map2seq's start observation
    is left out because a Map2seq agent never sees it (its first, forced forward happens in reset()).
    """
    env = StreetEnv(graph, visibility, max_steps=None)
    env.reset(instance)
    for action in gold_actions(graph, instance)[len(env.trajectory.actions) :]:
        env.step(action)
    trajectory = env.trajectory
    if trajectory.pano_path != instance.route:
        raise DataError(f"instance {instance.id}: gold replay does not reproduce the route")
    start = "" if instance.forced_first_forward else trajectory.observations[0]
    return Example(
        instance.id, instance.instruction, trajectory.actions, trajectory.observations[1:], start
    )


def in_partition(graph: StreetGraph, instance: NavInstance, partition: str = TRAINING_PARTITION) -> bool:
    """Whether every panorama of the route lies in `partition` (`seen` = the training area)."""
    return all(graph.nodes[p].partition == partition for p in instance.route)


def choose_examples(
    dataset: NavDataset,
    n: int = 2,
    *,
    seed: int = 0,
    visibility: VisibilitySource | None = None,
    shortest_fraction: float = 0.25,
) -> tuple[Example, ...]:
    """`n` solved examples from training-area routes of `dataset`, chosen by `seed`.

    Candidates: routes wholly in the training area whose gold actions include a left or right turn; of these
    the `shortest_fraction` with the fewest actions (short examples keep the prompt small); then `n` drawn
    with `random.Random(seed)`, in id order for a stable prompt.
    """
    scored: list[tuple[int, str, NavInstance]] = []
    for instance in dataset.instances:
        if not in_partition(dataset.graph, instance):
            continue
        actions = gold_actions(dataset.graph, instance)
        if not {"left", "right"} & set(actions):
            continue
        scored.append((len(actions), instance.id, instance))
    if len(scored) < n:
        raise DataError(f"{dataset.name} {dataset.split}: only {len(scored)} training-area routes, need {n}")
    scored.sort(key=lambda item: (item[0], item[1]))
    pool = scored[: max(n, round(len(scored) * shortest_fraction))]
    chosen = sorted(random.Random(seed).sample(pool, n), key=lambda item: item[1])
    return tuple(example_from_route(dataset.graph, item[2], visibility) for item in chosen)


class VelmaAgent:
    """NavAgent that asks `llm` for each next action (VELMA's two-shot prompting agent).

    `graph` (optional) lets the history show the action the environment actually executes (left on a plain
    street becomes forward, as in the examples); without it the history shows the model's own words.
    """

    def __init__(
        self,
        llm: LLM,
        examples: Sequence[Example],
        *,
        graph: StreetGraph | None = None,
        max_tokens: int = 4,
    ) -> None:
        self.llm = llm
        self.examples = tuple(examples)
        self.graph = graph
        self.max_tokens = max_tokens
        self.head = render_head(self.examples)
        self._prompt = self.head
        self._pending = ""
        self.calls = 0

    @property
    def prompt(self) -> str:
        """Everything the model has been shown so far in this episode (head, directions, history)."""
        return self._prompt

    def reset(self, instance: NavInstance) -> None:
        self._prompt = self.head + _render_task(instance.instruction, "")
        self._pending = "forward" if instance.forced_first_forward else ""

    def next_prompt(self, observation: Observation) -> str:
        """Append the last action and `observation` to the history; return the prompt asking for the next."""
        if observation.step == 0:
            if observation.text:
                self._prompt += f"{observation.text}\n"
        else:
            self._prompt += _render_step(observation.step, self._pending or "forward", observation.text)
        return self._prompt + f"{observation.step + 1}."

    def record(self, executed: str) -> None:
        """Show `executed` as the last action in the history instead of the model's choice (when something
        else drives the episode, e.g. a benchmark replaying gold actions)."""
        self._pending = executed

    def act(self, observation: Observation) -> str:
        prompt = self.next_prompt(observation)
        answer = self.llm.complete(
            prompt, stop=("\n",), max_tokens=self.max_tokens, temperature=0.0, grammar=ACTION_GRAMMAR
        )
        self.calls += 1
        word = normalize_action(answer.text)
        if word not in ACTIONS:
            word = "forward"  # what the environment does with an unknown word anyway
        executed = word
        if self.graph is not None and observation.panoid in self.graph:
            executed = correct_action(self.graph, observation.panoid, word, observation.path_length == 1)
        self._pending = executed
        return word


def make_velma_agent(
    *,
    llm: LLM | None = None,
    model: str | None = None,
    examples: Sequence[Example] | None = None,
    examples_data: NavDataset | None = None,
    graph: StreetGraph | None = None,
    seed: int = 0,
    **_: object,
) -> VelmaAgent:
    """A VelmaAgent from `llm` (or a `model` URI) and `examples` (or training-area routes of `examples_data`)."""
    if examples is None:
        if examples_data is None:
            raise SituatedError("the llm agent needs solved examples or a dataset of training-area routes")
        examples = choose_examples(examples_data, seed=seed)
    if llm is None:
        if not model:
            raise SituatedError("the llm agent needs a model: --model URI (e.g. llamacpp:qwen2.5-coder-1.5b)")
        from ..llm.base import load

        llm = load(model)
    return VelmaAgent(llm, examples, graph=graph)

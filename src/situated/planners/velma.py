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
partition), recorded by the episode runner (`situated.eval.systems.navigation_episodes.velma_examples`) through the same
environment and verbalizer as the test episodes. The agent only writes prompts and reads answers: the actions
and their glosses come from the environment's ActionSpace, and the runner tells it (`record`) which action
the environment actually executed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..actions import STREET_SPACE, ActionSpace
from ..envs.streets.env import NavInstance, Observation
from ..errors import SituatedError
from ..llm.base import LLM, ScoringLLM
from ..program.grammar import gbnf_literal
from .base import ModelUsage
from .retrieval import Retriever, nearest


def action_grammar(space: ActionSpace = STREET_SPACE) -> str:
    """Decoding grammar (GBNF): exactly one of the action words. The prompt ends with "3." and the history
    reads "3. left", so the answer starts with the space that belongs to the word's token (" left"): ending the
    prompt with "3. " instead would split that token and throw the model off its own format. The closing
    newline is the model's own next token (and the stop string); without it a grammar-complete answer would
    force a full-vocabulary grammar check just to pick end-of-text."""
    return f'root ::= " " ({" | ".join(gbnf_literal(a.name) for a in space)}) "\\n"'


ACTION_GRAMMAR = action_grammar()

TASK_LINE = (
    "You walk through a city by following directions. "
    "After each action you may observe an intersection or a landmark. "
    "Answer with one action per step."
)

@dataclass(frozen=True)
class Example:
    """A solved trajectory: `observations[i]` is the text seen right after `actions[i]`; `start` before any."""

    id: str
    instruction: str
    actions: tuple[str, ...]
    observations: tuple[str, ...]
    start: str = ""


def render_head(examples: Sequence[Example], space: ActionSpace = STREET_SPACE) -> str:
    """The prompt part shared by every episode: task line, action glosses and the solved examples."""
    lines = [TASK_LINE, "", "Actions:"]
    lines += [f"- {action.name}: {action.doc}" for action in space]
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


class VelmaAgent:
    """NavAgent that asks `llm` for each next action (VELMA's two-shot prompting agent).

    The history shows the action the environment actually executed when the runner reports it with `record`
    (left on a plain street becomes forward, as in the examples); otherwise the model's own words.
    """

    def __init__(
        self,
        llm: LLM,
        examples: Sequence[Example],
        *,
        space: ActionSpace = STREET_SPACE,
        max_tokens: int = 4,
        shots: int | None = None,
        retriever: Retriever | None = None,
        stop_threshold: float | None = None,
    ) -> None:
        """`examples` are the solved examples shown in every prompt; with a `retriever` they are a pool, and each
        episode shows the `shots` whose directions are nearest to its own (nearest last). With `stop_threshold`
        the agent stops when the model's probability of `stop` among the actions reaches it, and otherwise
        takes the likeliest other action (needs a backend that scores continuations)."""
        if retriever is not None and not shots:
            raise SituatedError("retrieved examples need a number of shots")
        if stop_threshold is not None and not 0.0 < stop_threshold <= 1.0:
            raise SituatedError(f"the stop threshold is a probability in (0, 1], not {stop_threshold}")
        if stop_threshold is not None and not isinstance(llm, ScoringLLM):
            raise SituatedError(f"{llm.uri} cannot score continuations, so it cannot use a stop threshold")
        self.llm = llm
        self.examples = tuple(examples)
        self.shots = shots
        self.retriever = retriever
        self.stop_threshold = stop_threshold
        self.space = space
        self.grammar = action_grammar(space)
        self.max_tokens = max_tokens
        self.head = render_head(self.examples if retriever is None else (), space)
        self._prompt = self.head
        self._pending = ""
        self.usage = ModelUsage()
        self.last_probabilities: dict[str, float] = {}

    @property
    def prompt(self) -> str:
        """Everything the model has been shown so far in this episode (head, directions, history)."""
        return self._prompt

    def examples_for(self, instance: NavInstance) -> tuple[Example, ...]:
        """The solved examples an episode's prompt shows."""
        if self.retriever is None:
            return self.examples
        pool = {e.id: e.instruction for e in self.examples if e.id != instance.id}
        chosen = nearest(self.retriever, instance.instruction, pool, self.shots or 0)
        by_id = {e.id: e for e in self.examples}
        return tuple(by_id[i] for i in reversed(chosen))

    def reset(self, instance: NavInstance) -> None:
        if self.retriever is not None:
            self.head = render_head(self.examples_for(instance), self.space)
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
        """Show `executed` as the last action in the history instead of the model's choice (the runner reports
        what the environment executed; a benchmark replaying gold actions reports those)."""
        self._pending = executed

    def action_probabilities(self, prompt: str) -> dict[str, float]:
        """The model's probability of each action word as the next step, normalized over the actions.

        Each word is scored as the grammar would start it (" left"), without the closing newline: the words are
        whole tokens (turn_around: " turn" "_" "around", a first token no other action has), so the newline
        would only cost one more model call per word."""
        if not isinstance(self.llm, ScoringLLM):
            raise SituatedError(f"{self.llm.uri} cannot score continuations")
        words = [action.name for action in self.space]
        scored = self.llm.score(prompt, [f" {w}" for w in words])
        self.usage.count(scored)
        top = max(scored.logprobs)
        weights = [math.exp(v - top) for v in scored.logprobs]
        return {w: x / sum(weights) for w, x in zip(words, weights, strict=True)}

    def act(self, observation: Observation) -> str:
        prompt = self.next_prompt(observation)
        if self.stop_threshold is not None:
            probabilities = self.action_probabilities(prompt)
            self.last_probabilities = probabilities
            if probabilities.get("stop", 0.0) >= self.stop_threshold:
                word = "stop"
            else:
                word = max((w for w in probabilities if w != "stop"), key=probabilities.__getitem__)
            self._pending = word
            return word
        answer = self.llm.complete(
            prompt, stop=("\n",), max_tokens=self.max_tokens, temperature=0.0, grammar=self.grammar
        )
        self.usage.count(answer)
        word = " ".join(answer.text.split()).lower()
        self._pending = word
        return word

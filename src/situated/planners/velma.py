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
partition), recorded by the episode runner (`situated.eval.navigation.velma_examples`) through the same
environment and verbalizer as the test episodes. The agent only writes prompts and reads answers: the actions
and their glosses come from the environment's ActionSpace, and the runner tells it (`record`) which action
the environment actually executed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..actions import STREET_SPACE, ActionSpace
from ..envs.streets.env import NavInstance, Observation
from ..llm.base import LLM
from ..program.grammar import gbnf_literal


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
    ) -> None:
        self.llm = llm
        self.examples = tuple(examples)
        self.space = space
        self.grammar = action_grammar(space)
        self.max_tokens = max_tokens
        self.head = render_head(self.examples, space)
        self._prompt = self.head
        self._pending = ""
        self.calls = 0
        self.tokens = 0
        self.prompt_tokens = 0
        self.seconds = 0.0

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
        """Show `executed` as the last action in the history instead of the model's choice (the runner reports
        what the environment executed; a benchmark replaying gold actions reports those)."""
        self._pending = executed

    def act(self, observation: Observation) -> str:
        prompt = self.next_prompt(observation)
        answer = self.llm.complete(
            prompt, stop=("\n",), max_tokens=self.max_tokens, temperature=0.0, grammar=self.grammar
        )
        self.calls += 1
        self.tokens += answer.completion_tokens
        self.prompt_tokens += answer.prompt_tokens
        self.seconds += answer.seconds
        word = " ".join(answer.text.split()).lower()
        self._pending = word
        return word

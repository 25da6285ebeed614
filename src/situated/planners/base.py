"""What every plan-writing planner returns and what an episode runner needs of it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Protocol

from ..llm.base import LLM, Completion, Scores
from ..program import Program, Statement
from .feedback import Verifier


class ModelUsage:
    """What an agent's model calls cost so far (the episode runner reads the counters before and after);
    stays at zero for an agent without a model."""

    def __init__(self) -> None:
        self.calls = 0
        self.tokens = 0
        self.prompt_tokens = 0
        self.seconds = 0.0

    def count(self, answer: Completion | Scores) -> None:
        """Add one call: its prompt tokens, generated tokens (none for scoring) and seconds."""
        self.calls += 1
        self.tokens += answer.completion_tokens if isinstance(answer, Completion) else 0
        self.prompt_tokens += answer.prompt_tokens
        self.seconds += answer.seconds


@dataclass(frozen=True)
class Rewrite:
    """One statement grounded decoding had the model rewrite: the top-level statement at `line` that the private
    copy of the scene rejected (`reason`: why, as the environment said), and the text the model wrote in its
    place ("" when it ended the plan there)."""

    line: int
    rejected: Statement
    replacement: str
    reason: str = ""


@dataclass(frozen=True)
class PlanResult:
    """A generated plan: the parsed program (invalid lines dropped), the model's text and what it cost.

    `raw_problems` lists what was wrong with the model's first answer (unknown actions/objects, wrong arity,
    unparseable lines); `problems` what was still wrong in the final answer and therefore dropped; `dropped`
    counts the dropped action calls, which an evaluation counts as attempted steps that failed.
    """

    program: Program
    text: str
    completions: tuple[Completion, ...] = ()
    tokens: int = 0
    prompt_tokens: int = 0
    raw_problems: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    dropped: int = 0
    prompt: str = field(default="", repr=False)
    rejected: tuple[str, ...] = ()
    """Grounded decoding: the calls the verifier rejected, `line N: call: reason`, one per rewrite (and the
    stated goals that did not hold at the end, `goal COND: ...`)."""
    goals: tuple[str, ...] = ()
    """The goal conditions the model stated for the task before writing the plan (goal-aware decoding)."""
    budget_spent: bool = False
    """Grounded decoding stopped rewriting because the plan's token budget was spent."""
    rewrites: tuple[Rewrite, ...] = ()
    """Grounded decoding: each rewritten statement and its replacement, in order (several at one line when a
    replacement was rejected in turn)."""
    walks: tuple[str, ...] = ()
    """Room walks grounded decoding wrote before moves into another room (`planners.room_walks`), `line N:
    walk('room')` in the final text."""

    @property
    def repairs(self) -> int:
        """How many statements grounded decoding had the model rewrite."""
        return len(self.rejected)

    @property
    def unknown(self) -> int:
        """Unknown actions and objects in the model's first answer."""
        return sum(("unknown action" in p or "unknown object" in p) for p in self.raw_problems)

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.completions)

    @property
    def calls(self) -> int:
        """Model calls it took."""
        return len(self.completions)


class Planner(Protocol):
    """What an episode runner needs of a plan-writing planner."""

    llm: LLM
    max_repairs: int
    """Statements grounded decoding may have the model rewrite per plan; 0: `plan` takes no verifier."""
    can_replan: bool
    """Whether `replan` writes a new remainder after a failed action (False: it raises SituatedError)."""

    def plan(self, task_name: str, objects: Sequence[str], *, affordances: Mapping[str, Set[str]] | None = None,
             verify: Verifier | None = None) -> PlanResult:
        """A plan for `task_name` over `objects`; with `verify` (and `max_repairs > 0`) drafts are checked."""
        ...

    def replan(self, task_name: str, objects: Sequence[str], done: str, failure: str, *,
               affordances: Mapping[str, Set[str]] | None = None, verify: Verifier | None = None) -> PlanResult:
        """The whole plan again after a failed action: `done` (the text run so far), the `failure` comment and a
        new remainder."""
        ...

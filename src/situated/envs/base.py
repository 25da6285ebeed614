"""The Environment protocol: what the interpreter drives and what metrics read, for every world.

Household scenes, street graphs and the tabletop arm all implement it. A plan-writing planner's program runs
against it call by call; a step-wise agent (VELMA) gets one call per step and reads each step's observation
from the StepResult. Conditions (`'duck' in 'tray'`, `'close' to 'tv'`) are asked with `holds`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..program import Call, Condition


@dataclass(frozen=True)
class StepResult:
    """Outcome of one action: whether it executed, why not (in words a person understands), what changed.

    Step-wise environments also say what the agent perceives next (`observation`, verbalized), whether the
    episode is over (`done`) and, when they corrected the call (VELMA turns `left` on a plain street into
    `forward`), which action they actually executed (`executed`; empty when the call ran as written).
    """

    ok: bool
    reason: str = ""
    changes: tuple[str, ...] = ()
    observation: str = ""
    done: bool = False
    executed: str = ""


@runtime_checkable
class Environment(Protocol):
    """A world the interpreter can act in (Gymnasium's reset/step shape, with symbolic checks)."""

    def reset(self, task: Any = None) -> str:
        """Start an episode (of `task`, where the environment needs one); returns the first observation."""

    def step(self, call: Call) -> StepResult:
        """Execute one grounded call (all arguments are plain names, loop variables already bound)."""

    def holds(self, condition: Condition) -> bool:
        """Whether a condition is true in the current state."""

    def describe(self, near: str | None = None) -> str:
        """The local state in words ("You see: ..."), around the agent or the named object."""

    def snapshot(self) -> dict:
        """The full current state as JSON-serializable data."""


ConditionCheck = Callable[[Condition, Environment], bool]
"""How assertions are judged: exactly against the state (`symbolic_check`) or otherwise (an LLM's opinion)."""


def symbolic_check(condition: Condition, env: Environment) -> bool:
    """The exact assertion check: ask the environment's state."""
    return env.holds(condition)

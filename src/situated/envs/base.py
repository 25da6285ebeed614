"""The Environment protocol: what the interpreter drives and what metrics read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..program import Call, Condition


@dataclass(frozen=True)
class StepResult:
    """Outcome of one action: whether it executed, why not (in words a person understands), what changed."""

    ok: bool
    reason: str = ""
    changes: tuple[str, ...] = ()


@runtime_checkable
class Environment(Protocol):
    """A world the interpreter can act in (Gymnasium's reset/step shape, with symbolic checks)."""

    def reset(self, task: Any = None) -> str:
        """Start an episode; returns a description of the initial observation."""

    def step(self, call: Call) -> StepResult:
        """Execute one grounded call (all arguments are plain names, loop variables already bound)."""

    def holds(self, condition: Condition) -> bool:
        """Whether a condition is true in the current state."""

    def describe(self, near: str | None = None) -> str:
        """The local state in words ("You see: ..."), around the agent or the named object."""

    def snapshot(self) -> dict:
        """The full current state as JSON-serializable data."""

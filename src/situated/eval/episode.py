"""Episodes: one run of the loop on one task, as every evaluation records it, whatever the system.

An `Episode` holds the task it ran (id and instruction), which run it was, the trace the interpreter recorded,
the metrics of its system (household: success, gcr, exec, precision; navigation: tc, spd, kpa, ...), what it
cost (tokens, model calls, seconds) and system-specific details (the plan text, the path walked, ...). Every
dataset's tasks are `Task`s: they have an id unique within their split and an instruction.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import DataError
from ..trace import Trace


class Task(Protocol):
    """What the runner needs of any dataset's task: a stable id and the instruction the agent is given."""

    @property
    def task_id(self) -> str: ...

    @property
    def instruction(self) -> str: ...


@dataclass(frozen=True)
class Cost:
    """What an episode cost: generated and prompt tokens, model calls, seconds spent in the model and in all."""

    tokens: int = 0
    prompt_tokens: int = 0
    calls: int = 0
    model_seconds: float = 0.0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, int | float]:
        return {"tokens": self.tokens, "prompt_tokens": self.prompt_tokens, "calls": self.calls,
                "model_seconds": round(self.model_seconds, 3), "seconds": round(self.seconds, 3)}


@dataclass(frozen=True)
class Episode:
    """One run of the loop on one task (see the module docstring); `key` identifies it in a results store."""

    task: str
    instruction: str
    run: int
    metrics: Mapping[str, float]
    trace: Trace = field(default_factory=Trace)
    cost: Cost = Cost()
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, int]:
        return (self.task, self.run)

    @property
    def success(self) -> bool:
        """Whether the episode reached its goal (household: every goal condition; navigation: TC)."""
        return bool(self.metrics.get("success", self.metrics.get("tc", 0.0)))

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "instruction": self.instruction, "run": self.run, "metrics": dict(self.metrics),
                "cost": self.cost.to_dict(), "details": dict(self.details),
                "events": [e.to_dict() for e in self.trace]}

    @classmethod
    def from_dict(cls, data: Any, where: str = "episode") -> Episode:
        """An episode from its JSON form; DataError naming `where` and the field when it is not one."""
        if not isinstance(data, dict):
            raise DataError(f"{where}: expected an episode object, got {type(data).__name__}")
        for name, kind in (("task", str), ("instruction", str), ("run", int), ("metrics", dict), ("cost", dict),
                           ("details", dict), ("events", list)):
            value = data.get(name)
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise DataError(f"{where}: field {name!r}: expected {kind.__name__}, got {type(value).__name__}")
        if data["run"] < 0:
            raise DataError(f"{where}: field 'run': must be >= 0, got {data['run']}")
        metrics = {}
        for name, value in data["metrics"].items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise DataError(f"{where}: field 'metrics.{name}': expected a finite number, got {value!r}")
            metrics[name] = float(value)
        cost = data["cost"]
        try:
            parsed_cost = Cost(int(cost.get("tokens", 0)), int(cost.get("prompt_tokens", 0)),
                               int(cost.get("calls", 0)), float(cost.get("model_seconds", 0.0)),
                               float(cost.get("seconds", 0.0)))
        except (TypeError, ValueError):
            raise DataError(f"{where}: field 'cost': expected numbers, got {cost!r}"[:300]) from None
        try:
            trace = Trace.from_dicts(data["events"])
        except DataError as err:
            raise DataError(f"{where}: field 'events': {err}") from None
        return cls(data["task"], data["instruction"], data["run"], metrics, trace, parsed_cost, data["details"])

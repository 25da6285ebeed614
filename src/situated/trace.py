"""Trace events of one episode: JSON-serializable records shared by CLI output, reports and evaluation files."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import MISSING, asdict, dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any, ClassVar

from .errors import DataError


@dataclass(frozen=True)
class Event:
    """Base of all trace events; `kind` names the subclass in JSON."""

    kind: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **asdict(self)}


@dataclass(frozen=True)
class SubgoalEvent(Event):
    """A comment opened a new sub-goal."""

    kind: ClassVar[str] = "subgoal"
    index: int
    text: str
    line: int


@dataclass(frozen=True)
class StepEvent(Event):
    """One attempted action and its outcome."""

    kind: ClassVar[str] = "step"
    call: str
    ok: bool
    reason: str
    changes: tuple[str, ...]
    line: int
    subgoal: int
    recovery: bool = False


@dataclass(frozen=True)
class CheckEvent(Event):
    """An `assert` or `if` condition was checked."""

    kind: ClassVar[str] = "check"
    condition: str
    held: bool
    line: int
    statement: str = "assert"


@dataclass(frozen=True)
class SkipEvent(Event):
    """An action was not attempted (sub-goal step cap reached)."""

    kind: ClassVar[str] = "skip"
    call: str
    reason: str
    line: int
    subgoal: int


@dataclass(frozen=True)
class StopEvent(Event):
    """The run ended early: operation budget spent, or stopped at the first failure for replanning."""

    kind: ClassVar[str] = "stop"
    reason: str
    line: int


@dataclass(frozen=True)
class ObservationEvent(Event):
    """What a step-wise agent was shown after a step (verbalized), e.g. "There is a 3-way intersection."."""

    kind: ClassVar[str] = "observe"
    text: str
    step: int


_KINDS: dict[str, type[Event]] = {c.kind: c for c in (SubgoalEvent, StepEvent, CheckEvent, SkipEvent, StopEvent,
                                                      ObservationEvent)}


def event_from_dict(data: Any) -> Event:
    """Rebuild an event from its JSON form; DataError naming the field when it is not one."""
    if not isinstance(data, dict):
        raise DataError(f"trace event: expected an object, got {type(data).__name__}")
    fields = dict(data)
    kind = fields.pop("kind", None)
    cls = _KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise DataError(f"trace event: unknown kind {kind!r} (known: {', '.join(sorted(_KINDS))})")
    expected = {f.name: f.type for f in dataclass_fields(cls)}
    if set(fields) - set(expected) or {n for n, f in cls.__dataclass_fields__.items()
                                       if f.default is MISSING} - set(fields):
        raise DataError(f"trace event {kind!r}: fields {sorted(fields)} do not match {sorted(expected)}")
    for name, value in fields.items():
        wanted = _FIELD_TYPES.get(expected[name], object)
        if name == "changes":
            if not isinstance(value, list | tuple) or not all(isinstance(c, str) for c in value):
                raise DataError(f"trace event {kind!r}: field 'changes': expected a list of strings")
            fields[name] = tuple(value)
        elif not isinstance(value, wanted) or (wanted is int and isinstance(value, bool)):
            raise DataError(f"trace event {kind!r}: field {name!r}: expected {expected[name]}, "
                            f"got {type(value).__name__}")
    return cls(**fields)


_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {"str": str, "int": int, "bool": bool}


@dataclass
class Trace:
    """The ordered events of one run, with the counts metrics need."""

    events: list[Event] = field(default_factory=list)

    def add(self, event: Event) -> None:
        self.events.append(event)

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    @property
    def steps(self) -> list[StepEvent]:
        return [e for e in self.events if isinstance(e, StepEvent)]

    @property
    def attempted(self) -> int:
        return len(self.steps)

    @property
    def executed(self) -> int:
        return sum(e.ok for e in self.steps)

    @property
    def exec_rate(self) -> float:
        """Executable steps / attempted steps (ProgPrompt's Exec); 0 when nothing was attempted."""
        return self.executed / self.attempted if self.attempted else 0.0

    @property
    def stop(self) -> StopEvent | None:
        return next((e for e in reversed(self.events) if isinstance(e, StopEvent)), None)

    @property
    def first_failure(self) -> StepEvent | None:
        return next((e for e in self.steps if not e.ok), None)

    def to_jsonl(self) -> str:
        return "".join(json.dumps(e.to_dict()) + "\n" for e in self.events)

    @classmethod
    def from_dicts(cls, rows: Iterable[dict[str, Any]]) -> Trace:
        return cls([event_from_dict(r) for r in rows])

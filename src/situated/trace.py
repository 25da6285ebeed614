"""Trace events of one episode: JSON-serializable records shared by CLI output, reports and evaluation files."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar


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


_KINDS: dict[str, type[Event]] = {c.kind: c for c in (SubgoalEvent, StepEvent, CheckEvent, SkipEvent, StopEvent)}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from its JSON form."""
    fields = dict(data)
    cls = _KINDS[fields.pop("kind")]
    if "changes" in fields:
        fields["changes"] = tuple(fields["changes"])
    return cls(**fields)


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

"""What a sandbox session answers: plain, JSON-ready values a console or a web page renders."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from ..program import Call, Condition, call_text, condition_text

ReplyKind = Literal["plan", "executed", "teach", "taught", "unknown_object", "unknown_behaviour", "unknown_skill",
                    "cancelled", "undone", "reset", "notice", "error"]


@dataclass(frozen=True)
class Plan:
    """A plan awaiting confirmation: the utterance, its calls (shown in the plan language) and their expansion
    (behaviour calls opened into the skills they run)."""

    utterance: str
    calls: tuple[Call, ...]
    expanded: str
    depth: int
    """Deepest composition of behaviours in the plan (0: skills only)."""
    goal: tuple[Condition, ...] = ()
    """What the request should make true (the model's statement of it), checked after the run."""
    note: str = ""
    """What checking the plan on a copy of the table found or changed ('' when the model's plan held)."""

    @property
    def text(self) -> str:
        """The calls, one a line, as the user sees them: `pack('ball')`."""
        return "".join(call_text(c) + "\n" for c in self.calls)

    def to_dict(self) -> dict[str, Any]:
        return {"utterance": self.utterance, "calls": [call_text(c) for c in self.calls], "text": self.text,
                "expanded": self.expanded, "depth": self.depth, "goal": [condition_text(c) for c in self.goal],
                "note": self.note}


@dataclass(frozen=True)
class SkillOutcome:
    """One skill the arm attempted, with why it failed and what it changed."""

    call: str
    ok: bool
    reason: str = ""
    changes: tuple[str, ...] = ()


@dataclass(frozen=True)
class CallOutcome:
    """One call of the plan: the skills it ran (a behaviour runs several), or none if the run stopped before it."""

    call: str
    behaviour: bool
    skills: tuple[SkillOutcome, ...]
    ran: bool

    @property
    def ok(self) -> bool:
        return self.ran and all(s.ok for s in self.skills)


@dataclass(frozen=True)
class Execution:
    """The outcome of a confirmed plan, call by call; `stopped` says why the run ended early ('' if it did not)."""

    calls: tuple[CallOutcome, ...]
    stopped: str = ""

    @property
    def ok(self) -> bool:
        return not self.stopped and all(c.ok for c in self.calls)

    @property
    def skills(self) -> int:
        return sum(len(c.skills) for c in self.calls)

    @property
    def failures(self) -> int:
        return sum(not s.ok for c in self.calls for s in c.skills)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "stopped": self.stopped, "calls": [asdict(c) | {"ok": c.ok} for c in self.calls]}


@dataclass(frozen=True)
class Taught:
    """Something the robot just learned: a behaviour (shown as its definition), an object or a skill."""

    kind: Literal["behaviour", "object", "skill"]
    name: str
    text: str
    synthesized: bool = True
    """For a behaviour: whether the model named its parameters and wrote its docstring (else the fallback)."""


@dataclass(frozen=True)
class Reply:
    """The robot's answer to one user action: what it says, and the plan, execution or lesson it concerns."""

    kind: ReplyKind
    say: str
    plan: Plan | None = None
    execution: Execution | None = None
    taught: Taught | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "say": self.say,
                "plan": self.plan.to_dict() if self.plan else None,
                "execution": self.execution.to_dict() if self.execution else None,
                "taught": asdict(self.taught) if self.taught else None}

"""The user study's measures of one session, read back from the library's event log.

Vocal Sandbox reports supervision (here: confirmations, corrections and cancellations the user had to give),
teaching, behaviour complexity (skills executed per behaviour call; the paper: 3.4 → 8.6 across gift bags),
skill failures and time. Every number here is computed from logged events, so a session in progress, one that
ended and one whose process was killed are measured alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from .library import EventRecord, SessionRecord

EVENT_KINDS = ("utterance", "plan", "unknown_behaviour", "unknown_object", "confirmation", "cancellation",
               "correction", "execution", "skill_failure", "teaching", "undo", "reset", "expectation",
               "model_call", "note")
"""The kinds of events a session logs (payloads in docs/sandbox.md)."""


@dataclass(frozen=True)
class SessionMetrics:
    """Counts and times of one session."""

    session: int
    scene: str
    model: str
    seconds: float
    """From the session's start to its end (or to its last event, if it never ended)."""
    utterances: int
    confirmations: int
    corrections: int
    cancellations: int
    teaching: int
    """Lessons completed: behaviours, objects and skills taught."""
    behaviours_taught: int
    behaviour_calls: int
    skills_per_behaviour: float
    """Skills executed per behaviour call (0 when no behaviour was called)."""
    max_depth: int
    """Deepest composition of behaviours in a confirmed plan."""
    skills: int
    skill_failures: int
    expectations: int
    met: int
    model_calls: int
    """Requests to the model (a planner step asked again with a narrower schema counts twice)."""
    prompt_tokens: int
    completion_tokens: int
    model_seconds: float

    @property
    def supervision(self) -> int:
        """Every time the user had to approve, fix or stop a plan."""
        return self.confirmations + self.corrections + self.cancellations

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"supervision": self.supervision}


def session_metrics(session: SessionRecord, events: Iterable[EventRecord]) -> SessionMetrics:
    """The measures of `session` from its events."""
    events = list(events)
    counts: dict[str, int] = {}
    behaviour_calls = behaviour_skills = skills = failures = depth = expectations = met = 0
    behaviours_taught = prompt = completion = model_calls = 0
    model_seconds = 0.0
    for event in events:
        counts[event.kind] = counts.get(event.kind, 0) + 1
        payload = event.payload
        if event.kind == "execution":
            for call in payload.get("calls", ()):
                n = int(call.get("skills", 0))
                skills += n
                if call.get("behaviour"):
                    behaviour_calls += 1
                    behaviour_skills += n
            depth = max(depth, int(payload.get("depth", 0)))
        elif event.kind == "skill_failure":
            failures += 1
        elif event.kind == "expectation":
            expectations += 1
            met += bool(payload.get("met"))
        elif event.kind == "teaching":
            behaviours_taught += payload.get("kind") == "behaviour"
        elif event.kind == "model_call":
            model_calls += int(payload.get("calls", 1))
            prompt += int(payload.get("prompt_tokens", 0))
            completion += int(payload.get("completion_tokens", 0))
            model_seconds += float(payload.get("seconds", 0.0))
    end = session.ended_at if session.ended_at is not None else max((e.at for e in events), default=session.started_at)
    return SessionMetrics(
        session=session.id, scene=session.scene, model=session.model, seconds=round(end - session.started_at, 3),
        utterances=counts.get("utterance", 0), confirmations=counts.get("confirmation", 0),
        corrections=counts.get("correction", 0), cancellations=counts.get("cancellation", 0),
        teaching=counts.get("teaching", 0), behaviours_taught=behaviours_taught, behaviour_calls=behaviour_calls,
        skills_per_behaviour=round(behaviour_skills / behaviour_calls, 3) if behaviour_calls else 0.0,
        max_depth=depth, skills=skills, skill_failures=failures, expectations=expectations, met=met,
        model_calls=model_calls, prompt_tokens=prompt, completion_tokens=completion,
        model_seconds=round(model_seconds, 3))

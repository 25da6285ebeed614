"""The user study's measures of one session, read back from the library's event log.

Vocal Sandbox reports supervision (here: confirmations, corrections and cancellations the user had to give),
teaching, behaviour complexity (skills executed per behaviour call; the paper: 3.4 → 8.6 across gift bags),
skill failures and time. Every number here is computed from logged events, so a session in progress, one that
ended and one whose process was killed are measured alike.

`study_measures` adds the study's times and command complexity. Times come twice: from the events' timestamps
(what this run took: the model and the arm included) and from a person-time model (`PersonModel`) that prices
what the person did — speaking each utterance, reading each plan and deciding, pointing, demonstrating — so that a
scripted session, where the person takes no time, still has minutes comparable in kind to a user study's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .library import EventRecord, SessionRecord

EVENT_KINDS = ("utterance", "plan", "unknown_behaviour", "unknown_object", "confirmation", "cancellation",
               "correction", "execution", "skill_failure", "teaching", "undo", "reset", "expectation",
               "model_call", "note", "study")
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


# ---------------------------------------------------------------------------------------------- the study


@dataclass(frozen=True)
class PersonModel:
    """What the person's actions cost in seconds, for sessions where the person's time is not real (scripts).

    Defaults: speaking at 150 words a minute and reading at 240 (common conversational and silent-reading rates),
    2 s to decide on a plan or answer a question, 5 s to point at a spot in the camera image, and a
    demonstration 5 s plus 3 s per waypoint. A plan is read as the words of its calls (`pickup('ball')`: 2)."""

    speak_words_per_minute: float = 150.0
    read_words_per_minute: float = 240.0
    decide_seconds: float = 2.0
    point_seconds: float = 5.0
    demo_seconds: float = 5.0
    waypoint_seconds: float = 3.0

    def speak(self, text: str) -> float:
        return len(text.split()) * 60.0 / self.speak_words_per_minute

    def review(self, calls: Sequence[str]) -> float:
        """Reading a plan's calls, then deciding."""
        words = sum(len(_WORD.findall(c)) for c in calls)
        return words * 60.0 / self.read_words_per_minute + self.decide_seconds


PERSON = PersonModel()
_WORD = re.compile(r"[A-Za-z0-9]+")
_DECISIONS = ("confirmation", "cancellation", "correction")


@dataclass(frozen=True)
class StudyMeasures:
    """The user study's measures of one session (see the module docstring)."""

    participant: str
    condition: str
    trial: int | None
    tasks: int
    """Expectations checked (each `expect:` line states one task done)."""
    utterances_per_task: float
    behaviours_taught: int
    objects_taught: int
    skills_taught: int
    lessons: int
    """Lessons begun (a robot's request to be taught, or `teach NAME`), finished or not."""
    teaching_seconds: float
    """From the events: each lesson's start to its end (saved or abandoned)."""
    review_seconds: float
    """From the events: each plan shown to the person's decision, outside lessons."""
    supervision_seconds: float
    """review_seconds + teaching_seconds."""
    person_teaching_seconds: float
    """The person-time model over what the person did inside lessons."""
    person_supervision_seconds: float
    """The person-time model over everything the person did: speaking, reviewing plans, lessons."""
    commands: int
    """Plans run."""
    calls: int
    """Top-level calls run (a behaviour call is one)."""
    skills_per_command: float
    """Seed skills run per plan run."""
    mean_depth: float
    """Composition depth of the calls run: a seed skill 1, a behaviour of skills 2, of behaviours 3, ..."""
    max_call_depth: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"supervision_minutes": round(self.supervision_seconds / 60, 3),
                               "person_supervision_minutes": round(self.person_supervision_seconds / 60, 3),
                               "person_teaching_minutes": round(self.person_teaching_seconds / 60, 3)}


def study_measures(events: Iterable[EventRecord], person: PersonModel = PERSON) -> StudyMeasures:
    """The study's measures of one session from its events (in logged order)."""
    events = list(events)
    study = next((e.payload for e in events if e.kind == "study"), {})
    taught = {"behaviour": 0, "object": 0, "skill": 0}
    lesson_start: float | None = None
    lesson_kind = ""
    plan_at: float | None = None
    lessons = tasks = utterances = commands = calls = skills = 0
    teaching = review = person_all = person_lesson = 0.0
    depths: list[int] = []

    def spend(seconds: float) -> None:
        nonlocal person_all, person_lesson
        person_all += seconds
        if lesson_start is not None:
            person_lesson += seconds

    for event in events:
        payload, kind = event.payload, event.kind
        if kind == "utterance":
            utterances += 1
            spend(person.speak(str(payload.get("text", ""))))
        elif kind in ("unknown_behaviour", "unknown_object") or (kind == "note" and _starts_lesson(payload)):
            if lesson_start is None:
                lessons += 1
                lesson_start, lesson_kind = event.at, "object" if kind == "unknown_object" else "behaviour"
            spend(person.decide_seconds)  # reading the robot's question
        elif kind == "plan":
            plan_at = event.at
        elif kind in _DECISIONS:
            spend(person.review([str(c) for c in payload.get("calls", payload.get("rejected", ()))]))
            if plan_at is not None and lesson_start is None:
                review += event.at - plan_at
            plan_at = None
        elif kind == "execution":
            commands += 1
            for call in payload.get("calls", ()):
                if call.get("ran", True):
                    calls += 1
                    skills += int(call.get("skills", 0))
                    depths.append(int(call.get("depth", 2 if call.get("behaviour") else 1)))
        elif kind == "teaching":
            what = str(payload.get("kind", ""))
            taught[what] = taught.get(what, 0) + 1
            if what == "object":
                spend(person.point_seconds)
            elif what == "skill":
                spend(person.demo_seconds + person.waypoint_seconds * int(payload.get("waypoints", 0)))
            if lesson_start is not None and what == lesson_kind:
                teaching += event.at - lesson_start
                lesson_start = None
        elif kind == "expectation":
            tasks += 1
        if lesson_start is not None and kind == "note" and _ends_lesson(payload):
            teaching += event.at - lesson_start
            lesson_start = None
    if lesson_start is not None and events:  # a lesson still open when the log ends
        teaching += events[-1].at - lesson_start
    trial = study.get("trial")
    return StudyMeasures(
        participant=str(study.get("participant") or ""), condition=str(study.get("condition") or "teaching"),
        trial=trial if isinstance(trial, int) else None, tasks=tasks,
        utterances_per_task=round(utterances / tasks, 3) if tasks else float(utterances),
        behaviours_taught=taught["behaviour"], objects_taught=taught["object"], skills_taught=taught["skill"],
        lessons=lessons, teaching_seconds=round(teaching, 3), review_seconds=round(review, 3),
        supervision_seconds=round(review + teaching, 3), person_teaching_seconds=round(person_lesson, 3),
        person_supervision_seconds=round(person_all, 3), commands=commands, calls=calls,
        skills_per_command=round(skills / commands, 3) if commands else 0.0,
        mean_depth=round(sum(depths) / len(depths), 3) if depths else 0.0, max_call_depth=max(depths, default=0))


def _starts_lesson(payload: dict[str, Any]) -> bool:
    text = str(payload.get("text", ""))
    return text.startswith("teaching ") and text.endswith(" started")


def _ends_lesson(payload: dict[str, Any]) -> bool:
    text = str(payload.get("text", ""))
    return ((text.startswith(("teaching ", "could not learn ")) and not text.endswith(" started"))
            or text.endswith(" was never pointed at"))

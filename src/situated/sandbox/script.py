"""Scripted sessions, format `situated-session/1`: a user's side of a session written down, run unattended.

One statement a line (blank lines ignored):

    # situated-session/1              optional first line; any other version is refused
    # a comment
    user: pack the ball               an utterance; a plan it yields is confirmed automatically
    expect: 'ball' in 'gift_bag'      a plan-language condition, checked in the world now (counted)
    reset                             the world returns to the scene's initial state (lessons are kept)
    point marker 160 120              name the object at pixel (u, v) of the camera image
    point marker 0.5 0.1 0.02         ... or nearest a point (x, y, z) in metres
    demo tap 0.59 -0.34 0.25 ; 0.59 -0.34 0.12       a demonstration through waypoints (x y z ; ...)
    demo tap ball 0.59 -0.34 0.25 ; 0.59 -0.34 0.12  ... naming the object it is about
    demo lift ball 0.59 -0.34 0.2 ; close ; 0.59 -0.34 0.3 ; open    ... with gripper events (close: grasp
                                      what is under the gripper; open: let go)

A `demo` given while the robot waits to be shown a motion answers it: the request that asked for the motion is
planned again (and its plan confirmed, as any plan).
    undo pack                         forget the newest version of something taught

Header comments say whose session it is, for the user study: `# participant: p1`, `# condition: teaching` (or
`no-teaching`), `# trial: 2` (the bag, a whole number from 1); a bad value is refused like a bad line.

A bad line is a `DataError` naming the file and line. A file is read and checked whole before anything runs;
lines can also come one at a time (`iter_script`), e.g. from a pipe, each checked as it arrives.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .. import files
from ..errors import DataError, ParseError
from ..program import Condition
from .motions import EVENTS
from .replies import Reply
from .session import CONDITIONS, SandboxSession, parse_condition

FORMAT = "situated-session/1"
MAX_SCRIPT_BYTES = 1_000_000
MAX_LINE = 2_000
_HEADER = re.compile(r"#\s*situated-session/(\S+)\s*$")
_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
_STUDY = re.compile(r"#\s*(participant|condition|trial)\s*:(.*)$")
_PARTICIPANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
MAX_TRIAL = 1000

LineKind = Literal["user", "expect", "reset", "point", "demo", "undo"]


@dataclass(frozen=True)
class ScriptLine:
    """One statement of a script, with where it came from."""

    kind: LineKind
    number: int
    text: str = ""
    name: str = ""
    where: tuple[float, ...] = ()
    waypoints: tuple[tuple[float, float, float] | str, ...] = ()
    """A demo's steps: waypoints (x, y, z) and gripper events ("close", "open")."""
    reference: str | None = None
    condition: Condition | None = None


def parse_line(raw: str, number: int, source: str) -> ScriptLine | None:
    """One line → a statement (None for blank and comment lines); DataError `source:number: problem`."""

    def bad(problem: str) -> DataError:
        return DataError(f"{source}:{number}: {problem}")

    line = raw.strip()
    if len(line) > MAX_LINE:
        raise bad(f"line longer than {MAX_LINE} characters")
    if not line.isprintable():
        raise bad("control characters are not allowed")
    if not line:
        return None
    if line.startswith("#"):
        header = _HEADER.match(line)
        if header and number == 1 and header.group(1) != FORMAT.split("/")[1]:
            raise bad(f"format {'situated-session/' + header.group(1)!r} is not {FORMAT!r}")
        study = _STUDY.match(line)
        if study:
            study_value(study.group(1), study.group(2).strip(), bad)
        return None
    head, colon, rest = line.partition(":")
    if colon and head.strip() in ("user", "expect"):
        text = rest.strip()
        if not text:
            raise bad(f"'{head.strip()}:' needs a text")
        if head.strip() == "user":
            return ScriptLine("user", number, text=text)
        try:
            condition = parse_condition(text)
        except ParseError as err:
            raise bad(f"expect: {err.message}") from None
        return ScriptLine("expect", number, text=text, condition=condition)
    words = line.split()
    keyword, args = words[0], words[1:]
    if keyword == "reset":
        if args:
            raise bad("'reset' takes nothing after it")
        return ScriptLine("reset", number)
    if keyword == "undo":
        if len(args) != 1 or not _NAME.fullmatch(args[0]):
            raise bad("expected 'undo NAME'")
        return ScriptLine("undo", number, name=args[0])
    if keyword == "point":
        if len(args) not in (3, 4) or not _NAME.fullmatch(args[0]):
            raise bad("expected 'point NAME U V' (a pixel) or 'point NAME X Y Z' (metres)")
        numbers = _numbers(args[1:], bad)
        if len(numbers) == 2 and not all(float(v).is_integer() and v >= 0 for v in numbers):
            raise bad("a pixel is two whole numbers 'U V' (column, row)")
        return ScriptLine("point", number, name=args[0], where=numbers)
    if keyword == "demo":
        if not args or not _NAME.fullmatch(args[0]):
            raise bad("expected 'demo NAME [OBJECT] x y z ; x y z ; ...' (and 'close' / 'open' for the gripper)")
        name, rest_words = args[0], args[1:]
        reference = None
        if rest_words and _NAME.fullmatch(rest_words[0]) and rest_words[0] not in EVENTS:
            reference, rest_words = rest_words[0], rest_words[1:]
        steps: list[tuple[float, float, float] | str] = []
        for k, chunk in enumerate(" ".join(rest_words).split(";")):
            if chunk.strip() in EVENTS:
                steps.append(chunk.strip())
                continue
            values = _numbers(chunk.split(), bad)
            if len(values) != 3:
                raise bad(f"demo waypoint {k + 1}: expected 'x y z' (metres), 'close' or 'open', got {chunk.strip()!r}")
            steps.append((values[0], values[1], values[2]))
        if all(isinstance(step, str) for step in steps):
            raise bad("demo: give at least one waypoint 'x y z'")
        return ScriptLine("demo", number, name=name, waypoints=tuple(steps), reference=reference)
    raise bad(f"unknown statement {keyword!r} (expected 'user:', 'expect:', 'reset', 'point', 'demo' or 'undo')")


@dataclass(frozen=True)
class StudyFields:
    """Whose session a script is (its header comments): participant, condition, trial (the bag)."""

    participant: str = ""
    condition: str = ""
    trial: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {"participant": self.participant, "condition": self.condition, "trial": self.trial}


def study_value(field_name: str, value: str, bad: Callable[[str], DataError]) -> str | int:
    """A header field's value checked: a participant label, one of `CONDITIONS`, a trial number."""
    if field_name == "participant":
        if not _PARTICIPANT.fullmatch(value):
            raise bad(f"participant: expected a label (letters, digits, '_', '-', '.'), got {value!r}")
        return value
    if field_name == "condition":
        if value not in CONDITIONS:
            raise bad(f"condition: expected {' or '.join(CONDITIONS)}, got {value!r}")
        return value
    if not value.isdigit() or not 1 <= int(value) <= MAX_TRIAL:
        raise bad(f"trial: expected a whole number from 1 to {MAX_TRIAL}, got {value!r}")
    return int(value)


def study_fields(lines: Iterable[str], source: str) -> StudyFields:
    """The study header of a script's lines; a field given twice with different values is a DataError."""
    found: dict[str, str | int] = {}
    for number, raw in enumerate(lines, start=1):
        match = _STUDY.match(raw.strip())
        if not match:
            continue
        name = match.group(1)

        def bad(problem: str, number: int = number) -> DataError:
            return DataError(f"{source}:{number}: {problem}")

        value = study_value(name, match.group(2).strip(), bad)
        if found.setdefault(name, value) != value:
            raise bad(f"{name}: given twice ({found[name]!r}, then {value!r})")
    trial = found.get("trial")
    return StudyFields(str(found.get("participant", "")), str(found.get("condition", "")),
                       trial if isinstance(trial, int) else None)


def read_study_fields(path: str | Path) -> StudyFields:
    """`study_fields` of a script file (read through the guarded reader)."""
    file = Path(path)
    data = files.read_bytes(file, what="the script", limit=MAX_SCRIPT_BYTES)
    return study_fields(data.decode("utf-8", errors="replace").splitlines(), str(file))


def _numbers(words: list[str], bad: Callable[[str], DataError]) -> tuple[float, ...]:
    out = []
    for word in words:
        try:
            value = float(word)
        except ValueError:
            raise bad(f"{word!r} is not a number") from None
        if not math.isfinite(value):
            raise bad(f"{word!r} is not a finite number")
        out.append(value)
    return tuple(out)


def iter_script(lines: Iterable[str], source: str) -> Iterator[ScriptLine]:
    """Statements of a script whose lines arrive one at a time, each checked as it comes. From a stream (e.g.
    stdin) each line is read with a bound, so one endless line is refused, not held in memory."""
    for number, raw in enumerate(_bounded(lines), start=1):
        if raw is None:
            raise DataError(f"{source}:{number}: line longer than {MAX_LINE} characters")
        statement = parse_line(raw, number, source)
        if statement is not None:
            yield statement


def _bounded(lines: Iterable[str]) -> Iterator[str | None]:
    """The lines of `lines`; from a stream, None for a line longer than MAX_LINE (read no further than that)."""
    readline = getattr(lines, "readline", None)
    if readline is None:
        yield from lines
        return
    while True:
        line = readline(MAX_LINE + 2)
        if not line:
            return
        if len(line) > MAX_LINE + 1 or (len(line) == MAX_LINE + 1 and not line.endswith("\n")):
            yield None
            return
        yield line


def read_script(path: str | Path) -> list[ScriptLine]:
    """Every statement of a script file, all checked before any runs. The file is read through the guarded
    reader (`files.read_bytes`): a regular file, its size checked before reading and while streaming it, so a
    huge file is refused without being loaded."""
    file = Path(path)
    data = files.read_bytes(file, what="the script", limit=MAX_SCRIPT_BYTES)
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise DataError(f"{file}:{line}: not UTF-8 text") from None
    return list(iter_script(text.splitlines(), str(file)))


@dataclass(frozen=True)
class Step:
    """What one script statement did: the replies it got (an utterance may get a plan and its execution), or
    for an expectation whether it was met."""

    line: ScriptLine
    replies: tuple[Reply, ...] = ()
    met: bool | None = None


@dataclass
class ScriptResult:
    """The totals of a script run, as the `--json` line reports them."""

    utterances: int = 0
    expectations: int = 0
    met: int = 0
    taught: list[str] = field(default_factory=list)
    skill_failures: int = 0
    confirmations: int = 0
    unmet: list[str] = field(default_factory=list)
    """`line N: condition` for each expectation not met."""

    def to_dict(self) -> dict[str, object]:
        return {"utterances": self.utterances, "expectations": self.expectations, "met": self.met,
                "taught": list(self.taught), "skill_failures": self.skill_failures,
                "confirmations": self.confirmations}


def run_statement(session: SandboxSession, line: ScriptLine) -> Step:
    """Run one statement; a plan it yields is confirmed at once."""
    replies: list[Reply] = []
    if line.kind == "expect":
        assert line.condition is not None
        return Step(line, met=session.check(line.condition))
    if line.kind == "user":
        replies.append(session.say(line.text))
    elif line.kind == "point":
        replies.append(session.point(line.name, line.where))
    elif line.kind == "demo":
        replies.append(session.demo(line.name, line.waypoints, line.reference))
    elif line.kind == "undo":
        replies.append(session.undo(line.name))
    else:
        replies.append(session.reset())
    if replies[-1].kind == "plan":
        replies.append(session.confirm())
    return Step(line, tuple(replies))


def run_script(session: SandboxSession, lines: Iterable[ScriptLine],
               on_step: Callable[[Step], None] | None = None) -> ScriptResult:
    """Run statements in order on `session`, calling `on_step` after each; returns the totals."""
    result = ScriptResult()
    for line in lines:
        step = run_statement(session, line)
        if line.kind == "user":
            result.utterances += 1
        if step.met is not None:
            result.expectations += 1
            result.met += step.met
            if not step.met:
                result.unmet.append(f"line {line.number}: {line.text}")
        for reply in step.replies:
            if reply.taught is not None:
                result.taught.append(reply.taught.name)
            if reply.kind == "executed":
                result.confirmations += 1
                result.skill_failures += reply.execution.failures if reply.execution else 0
        if on_step is not None:
            on_step(step)
    return result

"""Reading model text into a plan program: tolerant of bad lines, which are dropped and reported.

A model writes the body of a plan function. Lines the parser rejects are blanked (line numbers stay those of
the text) and statements that name unknown actions or objects are dropped; each problem is reported as
`line N: ...` and dropped action calls are counted, since an evaluation counts them as failed attempts.

The text is cut into top-level statements (a line at the body's indentation starts one; deeper lines and an
`else:` belong to the statement above), and each is parsed on its own, so the work grows linearly with the
text however many of its lines are bad.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ..actions import ActionSpace
from ..errors import ParseError
from .parser import parse
from .syntax import HANDS, Assert, Call, Comment, For, If, Program, Statement
from .validation import validate

MAX_BLANKED_PER_STATEMENT = 16
"""A statement with more unparseable lines than this is dropped whole (bounds the work per statement)."""

_CALL_LIKE = re.compile(r"\s*(else:\s*)?\w+\(")


@dataclass(frozen=True)
class ReadPlan:
    """A program read from model text: what was kept, what was wrong and how many action calls were dropped."""

    program: Program
    problems: tuple[str, ...] = ()
    dropped: int = 0


def complete_statements(text: str) -> str:
    """The longest prefix of generated body text that ends after a complete statement (for continuing a plan
    cut off by the token cap): the partial last line goes, and so does a trailing assertion without
    recovery."""
    lines = text.split("\n")[:-1]  # the part after the last newline is incomplete
    while lines and lines[-1].strip().startswith("assert"):
        lines.pop()
    return "".join(line + "\n" for line in lines)


def statement_line(stmt: Statement) -> int:
    return stmt.line


def statement_at(program: Program, line: int) -> Statement | None:
    """The top-level statement that holds `line` (the last one starting at or before it)."""
    return max((s for s in program.body if s.line <= line), key=statement_line, default=None)


def calls_in(stmt: Statement) -> int:
    """How many action calls a statement holds (recovery calls and block bodies included)."""
    if isinstance(stmt, Call):
        return 1
    if isinstance(stmt, Assert):
        return len(stmt.recovery)
    if isinstance(stmt, If):
        return sum(map(calls_in, stmt.then)) + sum(map(calls_in, stmt.otherwise))
    if isinstance(stmt, For):
        return sum(map(calls_in, stmt.body))
    return 0


def plan_object_names(programs: Iterable[Program]) -> list[str]:
    """Sorted object names the programs mention (calls and assertions; not 'hands' nor states)."""
    names: set[str] = set()

    def visit(body: tuple[Statement, ...]) -> None:
        for stmt in body:
            if isinstance(stmt, Call):
                names.update(a for a in stmt.args if isinstance(a, str))
            elif isinstance(stmt, Assert):
                cond = stmt.condition
                args = cond.args[:1] if cond.kind == "state" else cond.args
                names.update(a for a in args if isinstance(a, str) and a != HANDS)
                visit(stmt.recovery)
            elif isinstance(stmt, If):
                visit(stmt.then)
                visit(stmt.otherwise)
            elif isinstance(stmt, For):
                names.update(stmt.items)
                visit(stmt.body)

    for program in programs:
        visit(program.body)
    return sorted(names)


def _shifted(stmt: Statement, offset: int) -> Statement:
    """`stmt` with every line number moved by `offset`."""
    if isinstance(stmt, (Call, Comment)):
        return replace(stmt, line=stmt.line + offset)
    if isinstance(stmt, Assert):
        return replace(stmt, line=stmt.line + offset, recovery=tuple(_shifted(c, offset) for c in stmt.recovery))
    if isinstance(stmt, If):
        return replace(stmt, line=stmt.line + offset, then=tuple(_shifted(s, offset) for s in stmt.then),
                       otherwise=tuple(_shifted(s, offset) for s in stmt.otherwise))
    return replace(stmt, line=stmt.line + offset, body=tuple(_shifted(s, offset) for s in stmt.body))


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _chunks(lines: Sequence[str], start: int) -> list[tuple[int, int]]:
    """(first, end) index ranges of the top-level statements of the body lines from `start` on."""
    body = [i for i in range(start, len(lines)) if lines[i].strip()]
    if not body:
        return []
    base = _indent(lines[body[0]])
    chunks: list[tuple[int, int]] = []
    for i in body:
        indent = _indent(lines[i])
        continues = chunks and (len(indent) > len(base) or lines[i].strip().startswith("else"))
        if continues:
            chunks[-1] = (chunks[-1][0], i + 1)
        else:
            chunks.append((i, i + 1))
    return chunks


def parse_tolerant(text: str, *, source: str = "<model>", from_line: int = 1) -> ReadPlan:
    """Parse model output, blanking the lines the parser rejects; problems and dropped calls are counted only
    from line `from_line` on. A `def` header that does not parse is an error (ParseError)."""
    lines = text.split("\n")
    name = None
    start = 0
    if lines and lines[0].lstrip().startswith("def "):
        name = parse(lines[0] + "\n\tpass", source=source).name
        start = 1
    problems: list[str] = []
    dropped = 0
    body: list[Statement] = []
    chunks = _chunks(lines, start)
    body_indent = _indent(lines[chunks[0][0]]) if chunks else ""
    for first, end in chunks:
        part = lines[first:end]
        base = _indent(part[0])
        if base != body_indent:  # a line outside the body's indentation ends the function: nothing may follow
            if first + 1 >= from_line:
                problems += [f"line {first + i + 1}: unparseable {line.strip()[:60]!r} (outside the function body)"
                             for i, line in enumerate(part) if line.strip()]
                dropped += sum(bool(_CALL_LIKE.match(line)) and "assert" not in line for line in part)
            continue
        for _ in range(MAX_BLANKED_PER_STATEMENT + 1):
            try:
                parsed = parse("\n".join(line.removeprefix(base) if line.startswith(base) else line
                                         for line in part), source=source)
            except ParseError as err:
                index = err.line - 1 if 1 <= err.line <= len(part) else 0
                number = first + index + 1
                bad = part[index]
                if number >= from_line:
                    problems.append(f"line {number}: unparseable {bad.strip()[:60]!r} ({err.message})")
                    dropped += bool(_CALL_LIKE.match(bad)) and "assert" not in bad
                part[index] = ""
                continue
            body.extend(_shifted(s, first) for s in parsed.body)
            break
        else:  # too many bad lines in one statement: drop what is left of it
            rest = [line for line in part if line.strip()]
            if first + 1 >= from_line:
                problems.append(f"line {first + 1}: statement dropped after {MAX_BLANKED_PER_STATEMENT} bad lines")
                dropped += sum(bool(_CALL_LIKE.match(line)) for line in rest)
    return ReadPlan(Program(tuple(body), name), tuple(problems), dropped)


def keep_valid(program: Program, space: ActionSpace, objects: Sequence[str], *, from_line: int = 1) -> ReadPlan:
    """`program` without the statements (or recovery calls) from line `from_line` on that `validate` rejects;
    the problems and how many action calls were dropped."""
    problems: list[str] = []
    dropped = 0
    kept: list[Statement] = []
    for stmt in program.body:
        found = validate(Program((stmt,)), space, objects) if stmt.line >= from_line else []
        if not found:
            kept.append(stmt)
            continue
        problems += found
        if isinstance(stmt, Assert) and not validate(Program((Assert(stmt.condition, (), stmt.line),)), space,
                                                     objects):
            recovery = tuple(c for c in stmt.recovery if not validate(Program((c,)), space, objects))
            dropped += len(stmt.recovery) - len(recovery)
            kept.append(Assert(stmt.condition, recovery, stmt.line))
        else:
            dropped += calls_in(stmt)
    return ReadPlan(Program(tuple(kept), program.name), tuple(problems), dropped)


def read_plan(text: str, space: ActionSpace, objects: Sequence[str], *, from_line: int = 1,
              source: str = "<model output>") -> ReadPlan:
    """Model text as a program: unparseable and invalid lines from line `from_line` on dropped, with the
    problems and the number of dropped action calls."""
    parsed = parse_tolerant(text, source=source, from_line=from_line)
    valid = keep_valid(parsed.program, space, objects, from_line=from_line)
    return ReadPlan(valid.program, parsed.problems + valid.problems, parsed.dropped + valid.dropped)

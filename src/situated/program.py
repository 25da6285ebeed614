"""Plan programs: the statements a planner may write, as plain data that is interpreted, never executed.

Statements: `Call` (an action on object names), `Comment` (a `# n: sub-goal` line), `Assert` (a condition with
recovery calls run when it fails), and the bounded extensions `If` and `For` (a loop over a literal list).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .errors import ValidationError

if TYPE_CHECKING:
    from .actions import ActionSpace


@dataclass(frozen=True)
class Var:
    """A reference to the loop variable of an enclosing `For` (e.g. `grab(item)`)."""

    name: str


Arg = str | Var

# close:  ('close' to X)          args = (X,)
# state:  (X is 'opened')          args = (X, state)  state: opened/closed/switchon/switchoff/... (lower case)
# holds:  (X in 'hands')           args = (X,)
# inside: (X in Y)                 args = (X, Y)
# on:     (X on Y)                 args = (X, Y)
ConditionKind = Literal["close", "state", "holds", "inside", "on"]


@dataclass(frozen=True)
class Condition:
    """A checkable fact about the scene, written by a plan in an `assert` or `if`."""

    kind: ConditionKind
    args: tuple[Arg, ...]
    negated: bool = False


@dataclass(frozen=True)
class Call:
    """One action with its object arguments; `line`/`col` locate it in the source (1-based; 0: synthetic)."""

    action: str
    args: tuple[Arg, ...] = ()
    line: int = 0
    col: int = 0


@dataclass(frozen=True)
class Comment:
    """A comment line; in ProgPrompt each comment opens a new sub-goal."""

    text: str
    line: int = 0


@dataclass(frozen=True)
class Assert:
    """Check `condition`; when it does not hold, run `recovery` (the `else:` lines) in order."""

    condition: Condition
    recovery: tuple[Call, ...] = ()
    line: int = 0


@dataclass(frozen=True)
class If:
    """Run `then` when `condition` holds, else `otherwise` (extension beyond ProgPrompt)."""

    condition: Condition
    then: tuple[Statement, ...]
    otherwise: tuple[Statement, ...] = ()
    line: int = 0


@dataclass(frozen=True)
class For:
    """Run `body` once per literal item, binding `var` (extension beyond ProgPrompt; bounded by design)."""

    var: str
    items: tuple[str, ...]
    body: tuple[Statement, ...]
    line: int = 0


Statement = Call | Comment | Assert | If | For


@dataclass(frozen=True)
class Program:
    """A parsed plan: an optional function name (`def name():`) and its statements."""

    body: tuple[Statement, ...]
    name: str | None = None


# ----------------------------------------------------------------------------------------------------
# Parsing, canonical text and validation (the parser itself lives in program_parser.py).

_SPECIAL_WORDS = frozenset({"hands"})


def parse(text: str | bytes, *, source: str | None = None, max_bytes: int = 200_000, max_depth: int = 8,
          max_loop_items: int = 64) -> Program:
    """Parse plan text (ProgPrompt's pseudo-Python plus bounded if/for) into a Program, else ParseError.

    `source` names the input in error messages; inputs above `max_bytes`, `if`/`for` nested deeper than
    `max_depth` and loop lists longer than `max_loop_items` are rejected. Nothing is ever executed.
    """
    return _program_parser.parse(text, source=source, max_bytes=max_bytes, max_depth=max_depth,
                                 max_loop_items=max_loop_items)


def _arg_text(arg: Arg) -> str:
    return arg.name if isinstance(arg, Var) else f"'{arg}'"


def call_text(call: Call) -> str:
    """One call in canonical form: `putin('lime', 'garbagecan')`."""
    return f"{call.action}({', '.join(_arg_text(a) for a in call.args)})"


def condition_text(cond: Condition) -> str:
    """A condition in canonical form, without outer parentheses: `'close' to 'lime'`, `not 'x' in 'hands'`."""
    args = [_arg_text(a) for a in cond.args]
    if cond.kind == "close":
        text = f"'close' to {args[0]}"
    elif cond.kind == "state":
        text = f"{args[0]} is {args[1]}"
    elif cond.kind == "holds":
        text = f"{args[0]} in 'hands'"
    elif cond.kind == "inside":
        text = f"{args[0]} in {args[1]}"
    else:
        text = f"{args[0]} on {args[1]}"
    return f"not {text}" if cond.negated else text


def format(program: Program, *, indent: str = "\t") -> str:
    """Canonical text of `program`: parsing it gives the same program back (line numbers aside)."""
    lines: list[str] = []
    depth = 0
    if program.name is not None:
        lines.append(f"def {program.name}():")
        depth = 1
    _format_block(program.body, depth, indent, lines, allow_empty=True)
    return "\n".join(lines) + "\n"


format_program = format


def _format_block(body: tuple[Statement, ...], depth: int, indent: str, lines: list[str],
                  allow_empty: bool = False) -> None:
    pad = indent * depth
    if not body and not allow_empty:
        lines.append(f"{pad}pass")
    for statement in body:
        if isinstance(statement, Comment):
            lines.append(f"{pad}# {statement.text}".rstrip())
        elif isinstance(statement, Call):
            lines.append(pad + call_text(statement))
        elif isinstance(statement, Assert):
            lines.append(f"{pad}assert({condition_text(statement.condition)})")
            lines.extend(f"{pad}{indent}else: {call_text(c)}" for c in statement.recovery)
        elif isinstance(statement, If):
            lines.append(f"{pad}if {condition_text(statement.condition)}:")
            _format_block(statement.then, depth + 1, indent, lines)
            if statement.otherwise:
                lines.append(f"{pad}else:")
                _format_block(statement.otherwise, depth + 1, indent, lines)
        elif isinstance(statement, For):
            items = ", ".join(f"'{item}'" for item in statement.items)
            lines.append(f"{pad}for {statement.var} in [{items}]:")
            _format_block(statement.body, depth + 1, indent, lines)
        else:
            raise TypeError(f"not a plan statement: {statement!r}")


def validate(program: Program, space: ActionSpace, objects: Iterable[str] | None = None) -> list[str]:
    """Every unknown action, wrong arity and unknown object in `program`, as `line N: ...` (empty if fine).

    Objects are checked against `objects`, or else the space's own vocabulary when it has one; the word
    'hands' and the states of `is` conditions are not objects. Loop variables are checked via the loop items.
    """
    known = frozenset(objects) if objects is not None else frozenset(space.objects) or None
    problems: list[str] = []
    _validate_block(program.body, space, known, frozenset(), problems)
    return problems


def check(program: Program, space: ActionSpace, objects: Iterable[str] | None = None) -> None:
    """Raise ValidationError listing every problem `validate` finds."""
    problems = validate(program, space, objects)
    if problems:
        raise ValidationError(problems)


def _validate_block(body: tuple[Statement, ...], space: ActionSpace, known: frozenset[str] | None,
                    bound: frozenset[str], problems: list[str]) -> None:
    for statement in body:
        if isinstance(statement, Call):
            _validate_call(statement, space, known, bound, problems)
        elif isinstance(statement, Assert):
            _validate_condition(statement.condition, statement.line, known, bound, problems)
            for call in statement.recovery:
                _validate_call(call, space, known, bound, problems)
        elif isinstance(statement, If):
            _validate_condition(statement.condition, statement.line, known, bound, problems)
            _validate_block(statement.then, space, known, bound, problems)
            _validate_block(statement.otherwise, space, known, bound, problems)
        elif isinstance(statement, For):
            for item in statement.items:
                _validate_object(item, statement.line, known, bound, problems)
            _validate_block(statement.body, space, known, bound | {statement.var}, problems)


def _validate_call(call: Call, space: ActionSpace, known: frozenset[str] | None, bound: frozenset[str],
                   problems: list[str]) -> None:
    if call.action not in space:
        problems.append(f"line {call.line}: unknown action {call.action!r}")
    else:
        arity = space.get(call.action).arity
        if len(call.args) != arity:
            noun = "argument" if arity == 1 else "arguments"
            problems.append(f"line {call.line}: {call.action} takes {arity} {noun}, got {len(call.args)}")
    for arg in call.args:
        _validate_object(arg, call.line, known, bound, problems)


def _validate_condition(cond: Condition, line: int, known: frozenset[str] | None, bound: frozenset[str],
                        problems: list[str]) -> None:
    objects = cond.args[:1] if cond.kind == "state" else cond.args
    for arg in objects:
        if not (isinstance(arg, str) and arg in _SPECIAL_WORDS):
            _validate_object(arg, line, known, bound, problems)


def _validate_object(arg: Arg, line: int, known: frozenset[str] | None, bound: frozenset[str],
                     problems: list[str]) -> None:
    if isinstance(arg, Var):
        if arg.name not in bound:
            problems.append(f"line {line}: unbound loop variable {arg.name!r}")
    elif known is not None and arg not in known:
        problems.append(f"line {line}: unknown object {arg!r}")


# Last, because the parser builds the classes above (works whichever of the two modules is imported first).
from . import program_parser as _program_parser  # noqa: E402

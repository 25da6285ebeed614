"""Validation of a parsed plan against an agent's API and a scene's objects."""

from __future__ import annotations

from collections.abc import Iterable

from ..actions import ActionSpace
from ..errors import ValidationError
from .syntax import HANDS, Arg, Assert, Call, Condition, For, If, Program, Statement, Var


def validate(program: Program, space: ActionSpace, objects: Iterable[str] | None = None) -> list[str]:
    """Every unknown action, wrong arity and unknown object in `program`, as `line N: ...` (empty if fine).

    Objects are checked against `objects`, or else the space's own vocabulary when it has one; the word
    'hands' and the states of `is` conditions are not objects. Loop variables are checked via the loop items.
    """
    known = frozenset(objects) if objects is not None else frozenset(space.objects) or None
    problems: list[str] = []
    _validate_block(program.body, space, known, frozenset(), problems)
    return problems


def require_valid(program: Program, space: ActionSpace, objects: Iterable[str] | None = None) -> None:
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
        if not (isinstance(arg, str) and arg == HANDS):
            _validate_object(arg, line, known, bound, problems)


def _validate_object(arg: Arg, line: int, known: frozenset[str] | None, bound: frozenset[str],
                     problems: list[str]) -> None:
    if isinstance(arg, Var):
        if arg.name not in bound:
            problems.append(f"line {line}: unbound loop variable {arg.name!r}")
    elif known is not None and arg not in known:
        problems.append(f"line {line}: unknown object {arg!r}")

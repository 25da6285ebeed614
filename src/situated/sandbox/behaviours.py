"""Taught behaviours as plan programs: their text, their parameters, and their expansion for the interpreter.

A behaviour's body is plan-language text over skills and other behaviours, one call a line, its parameters
written as bare names (`pickup(obj)`), objects it always uses quoted (`goto('gift_bag')`):

    def pack(obj):
        pickup(obj)
        goto('gift_bag')
        release()

Bodies are read with the plan language's own parser (the parameters bound like loop variables), never executed.
A plan that calls behaviours is *expanded* before it runs: each behaviour call becomes a `# pack('ball')`
comment, which opens a sub-goal in the trace, followed by its body with the arguments bound, recursively. The
composition depth is bounded (`MAX_COMPOSITION_DEPTH`) and so is the expanded size; the library refuses
cycles, and the expansion would stop one at the depth bound anyway. The interpreter then runs the expanded
program like any other plan.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..actions import ActionSpace, Behaviour
from ..errors import ParseError, ValidationError
from ..program import Call, Comment, Program, Var, call_text, parse

MAX_COMPOSITION_DEPTH = 8
"""Deepest nesting of behaviours a plan may reach (a behaviour over skills has depth 1)."""
MAX_EXPANDED_CALLS = 2000
"""Most skill calls one plan may expand to."""


def body_text(calls: Sequence[Call]) -> str:
    """The body of a behaviour from its calls: one call a line, parameters (`Var`) bare, objects quoted."""
    return "".join(call_text(c) + "\n" for c in calls)


def definition_text(name: str, params: Sequence[str], body: str) -> str:
    """How a behaviour is shown to the user: `def pack(obj):` and its body, indented."""
    lines = [line for line in body.splitlines() if line.strip()]
    return f"def {name}({', '.join(params)}):\n" + "".join(f"    {line.strip()}\n" for line in lines)


def parse_body(body: str, params: Sequence[str], *, source: str = "behaviour") -> tuple[Call, ...]:
    """The calls of a behaviour body (see `_parse_body`); a body is parsed once per process (cached)."""
    return _parse_body(body, tuple(params), source)


@functools.lru_cache(maxsize=2048)
def _parse_body(body: str, params: tuple[str, ...], source: str) -> tuple[Call, ...]:
    """The calls of a behaviour body, parameters as `Var`s. ParseError (line numbers of the body) for anything
    that is not one call a line (comments and blank lines are allowed and dropped)."""
    if len(set(params)) != len(params):
        raise ParseError(f"parameters {list(params)} repeat a name", 0, 0, source)
    # The parser binds bare names only as loop variables, so each parameter becomes one: a `for` over a single
    # placeholder, unwrapped again below. Nothing is evaluated.
    lines = [f"{'    ' * i}for {p} in ['parameter']:" for i, p in enumerate(params)]
    pad = "    " * len(params)
    body_lines = body.splitlines() or [""]
    text = "\n".join([*lines, *(pad + line if line.strip() else "" for line in body_lines)])
    if params and not any(line.strip() and not line.strip().startswith("#") for line in body_lines):
        raise ParseError("the body has no calls", 1, 1, source)
    try:
        program = parse(text, source=source, max_depth=len(params) + 2)
    except ParseError as err:
        raise ParseError(err.message, max(0, err.line - len(params)), max(0, err.col - len(pad)), source) from None
    statements = program.body
    for _ in params:
        statements = statements[0].body  # type: ignore[union-attr]
    calls = []
    for statement in statements:
        if isinstance(statement, Comment):
            continue
        if not isinstance(statement, Call):
            raise ParseError("a behaviour body holds calls only", statement.line - len(params), 1, source)
        calls.append(Call(statement.action, statement.args, statement.line - len(params), statement.col - len(pad)))
    if not calls:
        raise ParseError("the body has no calls", 1, 1, source)
    return tuple(calls)


def callees(calls: Iterable[Call]) -> list[str]:
    """The distinct functions a body calls, in order of first use."""
    return list(dict.fromkeys(c.action for c in calls))


def check_body(name: str, params: Sequence[str], body: str, space: ActionSpace,
               objects: Iterable[str] | None = None, *, depths: dict[str, int] | None = None) -> tuple[Call, ...]:
    """Parse a body and check it against the API: known callees with the right number of arguments, only its
    own parameters bare, known objects (when `objects` is given), depth within bounds. ValidationError lists
    every problem.

    `depths` memoises composition depths; a caller checking behaviours callees first into a space that only
    grows (as loading a library does) may share one dict across the checks, which makes the whole load one
    pass over the call graph. By default each check has its own (linear in the graph it reaches)."""
    calls = parse_body(body, params, source=name)
    known = None if objects is None else frozenset(objects)
    problems = []
    for call in calls:
        if call.action == name:
            problems.append(f"line {call.line}: {name} calls itself")
            continue
        if call.action not in space:
            problems.append(f"line {call.line}: unknown function {call.action!r}")
            continue
        arity = space.get(call.action).arity
        if len(call.args) != arity:
            problems.append(f"line {call.line}: {call.action} takes {arity} argument(s), got {len(call.args)}")
        for arg in call.args:
            if isinstance(arg, Var):
                if arg.name not in params:
                    problems.append(f"line {call.line}: unknown parameter {arg.name!r}")
            elif known is not None and arg not in known:
                problems.append(f"line {call.line}: unknown object {arg!r}")
    if problems:
        raise ValidationError(problems)
    memo: dict[str, int] = {} if depths is None else depths
    depth = 1 + max((composition_depth(c, space, memo=memo) for c in callees(calls)), default=0)
    if depth > MAX_COMPOSITION_DEPTH:
        raise ValidationError([f"{name}: composition depth {depth} is more than {MAX_COMPOSITION_DEPTH}"])
    if depths is not None:
        depths[name] = depth
    return calls


def composition_depth(name: str, space: ActionSpace, _seen: tuple[str, ...] = (),
                      memo: dict[str, int] | None = None) -> int:
    """0 for a skill; 1 + the deepest callee for a behaviour (ValidationError past the bound or on a cycle).
    Each behaviour's depth is computed once (`memo`, shared by the calls of one check), so the time is linear
    in the call graph, not in the number of its paths."""
    memo = {} if memo is None else memo
    if name in memo:
        return memo[name]
    action = space.get(name)
    if not isinstance(action, Behaviour):
        return 0
    if name in _seen:
        raise ValidationError([f"cycle of behaviours: {' -> '.join([*_seen, name])}"])
    if len(_seen) >= MAX_COMPOSITION_DEPTH:
        raise ValidationError([f"composition deeper than {MAX_COMPOSITION_DEPTH}: {' -> '.join([*_seen, name])}"])
    path = (*_seen, name)
    called = _callees(action.body, tuple(p.name for p in action.params), name)
    memo[name] = 1 + max((composition_depth(c, space, path, memo) for c in called if c in space), default=0)
    return memo[name]


@functools.lru_cache(maxsize=2048)
def _callees(body: str, params: tuple[str, ...], source: str) -> tuple[str, ...]:
    """The distinct functions a body calls (cached with the parse)."""
    return tuple(callees(_parse_body(body, params, source)))


@dataclass(frozen=True)
class Expansion:
    """A plan with every behaviour call expanded: the program the interpreter runs, which top-level call each
    of its lines belongs to, and the deepest composition reached."""

    program: Program
    owner: Mapping[int, int]
    """Program line → index of the top-level call it came from."""
    depth: int

    @property
    def text(self) -> str:
        """The expanded program in the plan language (comments open each behaviour's sub-goal)."""
        lines = []
        for statement in self.program.body:
            lines.append(f"# {statement.text}" if isinstance(statement, Comment) else call_text(statement))
        return "".join(line + "\n" for line in lines)


def expand(calls: Sequence[Call], space: ActionSpace) -> Expansion:
    """Expand behaviour calls into their bodies with the arguments bound (see the module docstring).
    ValidationError when the plan calls something the API lacks, a body does not fit, the composition is
    deeper than `MAX_COMPOSITION_DEPTH` or the plan grows past `MAX_EXPANDED_CALLS`."""
    statements: list[Comment | Call] = []
    owner: dict[int, int] = {}
    deepest = 0
    parsed: dict[str, tuple[Call, ...]] = {}

    def emit(statement: Comment | Call, index: int) -> None:
        line = len(statements) + 1
        if isinstance(statement, Comment):
            statement = Comment(statement.text, line)
        else:
            statement = Call(statement.action, statement.args, line, 1)
        statements.append(statement)
        owner[line] = index

    def visit(call: Call, index: int, depth: int, path: tuple[str, ...]) -> None:
        nonlocal deepest
        if call.action not in space:
            raise ValidationError([f"unknown function {call.action!r}"])
        action = space.get(call.action)
        if len(call.args) != action.arity:
            raise ValidationError([f"{call.action} takes {action.arity} argument(s), got {len(call.args)}"])
        if not isinstance(action, Behaviour):
            if sum(isinstance(s, Call) for s in statements) >= MAX_EXPANDED_CALLS:
                raise ValidationError([f"the plan expands to more than {MAX_EXPANDED_CALLS} skill calls"])
            emit(call, index)
            return
        if call.action in path:
            raise ValidationError([f"cycle of behaviours: {' -> '.join([*path, call.action])}"])
        if depth + 1 > MAX_COMPOSITION_DEPTH:
            raise ValidationError([f"composition deeper than {MAX_COMPOSITION_DEPTH}: "
                                   f"{' -> '.join([*path, call.action])}"])
        deepest = max(deepest, depth + 1)
        params = [p.name for p in action.params]
        if call.action not in parsed:
            parsed[call.action] = parse_body(action.body, params, source=call.action)
        binding = dict(zip(params, call.args, strict=True))
        emit(Comment(call_text(call)), index)
        for inner in parsed[call.action]:
            args = tuple(binding[a.name] if isinstance(a, Var) and a.name in binding else a for a in inner.args)
            if any(isinstance(a, Var) for a in args):
                raise ValidationError([f"{call.action}: unbound parameter in {call_text(inner)}"])
            visit(Call(inner.action, args), index, depth + 1, (*path, call.action))

    for i, call in enumerate(calls):
        visit(call, i, 0, ())
    return Expansion(Program(tuple(statements)), owner, deepest)

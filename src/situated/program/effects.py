"""What a plan sets out to achieve, read from its calls alone: the conditions it leaves true at its end.

A small symbolic model of the household actions, without a scene: `putin(a, b)` leaves `a` in `b`, `putback(a, b)`
leaves `a` on `b`, `grab(a)` leaves `a` in the hands until it is put somewhere, and switching, opening and closing
leave a state — counted only when the plan changed it an odd number of times (open then close is no goal).
Used to state an example plan's goals in a prompt (`# goal: ...` lines) so a model learns to state its own.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..errors import ParseError
from .parser import parse
from .syntax import Assert, Call, Condition, For, If, Program, Statement, Var
from .text import condition_text

_STATES = {"switchon": ("switchon", "switchoff"), "switchoff": ("switchoff", "switchon"),
           "open": ("opened", "closed"), "close": ("closed", "opened")}


def _calls(body: tuple[Statement, ...]) -> Iterator[Call]:
    for stmt in body:
        if isinstance(stmt, Call):
            yield stmt
        elif isinstance(stmt, Assert):
            continue  # recovery calls only run when something is off; they are no goal
        elif isinstance(stmt, If):
            yield from _calls(stmt.then)
        elif isinstance(stmt, For):
            for item in stmt.items:
                for call in _calls(stmt.body):
                    yield Call(call.action, tuple(item if isinstance(a, Var) else a for a in call.args), call.line)


def net_effects(program: Program) -> tuple[Condition, ...]:
    """The conditions the plan's calls leave true at its end, in the order they were last set."""
    placed: dict[str, Condition] = {}  # object -> where it ends (inside / on / in the hands)
    states: dict[str, tuple[str, int]] = {}  # object -> (last state set, how many changes)
    for call in _calls(program.body):
        args = [a for a in call.args if isinstance(a, str)]
        if len(args) != len(call.args):
            continue
        if call.action in ("putin", "putback") and len(args) == 2:
            placed.pop(args[0], None)
            placed[args[0]] = Condition("inside" if call.action == "putin" else "on", (args[0], args[1]))
        elif call.action == "grab" and len(args) == 1:
            placed.pop(args[0], None)
            placed[args[0]] = Condition("holds", (args[0],))
        elif call.action in ("drop", "release") and len(args) == 1:
            placed.pop(args[0], None)
        elif call.action in _STATES and len(args) == 1:
            state, _ = _STATES[call.action]
            _, changes = states.pop(args[0], ("", 0))
            states[args[0]] = (state, changes + 1)
    conditions = [c for c in placed.values() if c.kind != "holds"]
    conditions += [Condition("state", (obj, state)) for obj, (state, changes) in states.items() if changes % 2]
    return tuple(conditions)


GOALS_PREFIX = "# goals:"
"""The comment line that states a plan's goals, right above its `def` line in a prompt."""


def goals_line(goals: tuple[Condition, ...]) -> str:
    """`# goals: 'lime' in 'garbagecan', 'garbagecan' is 'closed'` (empty when there is no goal)."""
    return f"{GOALS_PREFIX} " + ", ".join(condition_text(g) for g in goals) if goals else ""


def read_goals(text: str, *, source: str = "<goals>") -> tuple[Condition, ...]:
    """The conditions of a goals line's text (`'lime' in 'garbagecan', 'tv' is 'switchon'`); ParseError when
    one is not a condition of the plan language."""
    goals = []
    for part in (p.strip() for p in text.strip().removeprefix(GOALS_PREFIX).split(",")):
        if not part:
            continue
        program = parse(f"assert({part})", source=source)
        statement = program.body[0] if program.body else None
        if not isinstance(statement, Assert):
            raise ParseError(f"not a condition: {part!r}", 1, 1, source)
        goals.append(statement.condition)
    return tuple(goals)


def goal_phrase(goal: Condition) -> str:
    """A sub-goal comment's words for a condition: `put barsoap in bathroomcabinet`, `switch on tv`."""
    args = [str(a) for a in goal.args]
    if goal.kind == "inside":
        return f"put {args[0]} in {args[1]}"
    if goal.kind == "on":
        return f"put {args[0]} on {args[1]}"
    if goal.kind == "holds":
        return f"hold {args[0]}"
    if goal.kind == "close":
        return f"go to {args[0]}"
    state = {"switchon": "switch on", "switchoff": "switch off", "opened": "open", "closed": "close"}
    return f"{state.get(args[1], 'make ' + args[1])} {args[0]}" if len(args) > 1 else condition_text(goal)

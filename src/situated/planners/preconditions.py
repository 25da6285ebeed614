"""Missing preconditions found by a bounded search (grounded decoding, beyond the paper).

When a plan's call fails on the private copy of the scene because something it needs is not so (the character
is not close to the object, the container is closed), the step that makes it so is usually one call over the
failing call's own objects: `find('radio')` before `grab('radio')`, `open('dishwasher')` before `putin(...)`.
ProgPrompt's own recovery lines (`assert('close' to 'radio') else: find('radio')`) are of that kind. Instead of
having the model replace the failing call (a small model often writes another call that fails, or gives the
task step up), the planner tries such steps in front of it, checked on the copy of the scene: one step over the
call's objects, then a move (`find`, `walk`) followed by one more step. The first that lets the call execute is
written before it; the model's call and the rest of its plan stay as written. The search names only actions of
the action space and the call's own objects, so it cannot write anything the grammar would not allow.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence, Set

from ..actions import ActionSpace, Primitive
from ..program import Call

MOVES: tuple[str, ...] = ("find", "walk")
"""Moves tried first (`find`: ProgPrompt's recovery step), and the only first steps of two-step preconditions."""

MAX_STEPS = 8
"""Steps the search may add to one plan."""

_CLOSED_AROUND = re.compile(r"is inside (\w+) \(id \d+\), which is closed")
"""The household simulator's reason for an object out of reach in a closed container (it names the container)."""


def closed_container(reason: str) -> str | None:
    """The closed container a failure reason names (`... is inside fridge (id 12), which is closed ...`)."""
    match = _CLOSED_AROUND.search(reason)
    return match.group(1) if match else None


def about_closed(reason: str) -> bool:
    """Whether a failure is for want of something opened: a closed container to put into or take out of."""
    return "is not open" in reason or closed_container(reason) is not None


def _affords(action: Primitive, obj: str, affordances: Mapping[str, Set[str]] | None) -> bool:
    affords = action.params[0].affords
    return affordances is None or not affords or bool(set(affords) & set(affordances.get(obj, ())))


def single_steps(space: ActionSpace, call: Call, objects: Sequence[str],
                 affordances: Mapping[str, Set[str]] | None = None, extra: Sequence[str] = ()) -> list[str]:
    """One-object calls over `call`'s objects (and the `extra` ones, such as the closed container a failure
    names), moves first, then the space's other one-object actions in order; never `call` itself."""
    targets = [a for a in dict.fromkeys((*call.args, *extra)) if isinstance(a, str) and a in objects]
    unary = [a for a in space if a.arity == 1]
    order = sorted(unary, key=lambda a: (a.name not in MOVES, MOVES.index(a.name) if a.name in MOVES else 0))
    steps = []
    for action in order:
        for obj in targets:
            if (action.name, (obj,)) != (call.action, tuple(call.args)) and _affords(action, obj, affordances):
                steps.append(f"{action.name}('{obj}')")
    return steps


def candidates(space: ActionSpace, call: Call, objects: Sequence[str],
               affordances: Mapping[str, Set[str]] | None = None,
               extra: Sequence[str] = ()) -> Iterator[tuple[str, ...]]:
    """The steps to try before `call`, in order: each single step, then a move and another step."""
    singles = single_steps(space, call, objects, affordances, extra)
    yield from ((s,) for s in singles)
    moves = [s for s in singles if s.split("(")[0] in MOVES]
    for move in moves:
        for step in singles:
            if step != move and step.split("(")[0] not in MOVES:
                yield move, step


def with_steps(text: str, line: int, steps: Sequence[str]) -> str:
    """`text` with `steps` written before its line `line` (1-based), at that line's indentation."""
    lines = text.split("\n")
    at = lines[line - 1]
    indent = at[: len(at) - len(at.lstrip())]
    return "\n".join(lines[: line - 1] + [indent + s for s in steps] + lines[line - 1:])


def search(text: str, line: int, call: Call, space: ActionSpace, objects: Sequence[str],
           affordances: Mapping[str, Set[str]] | None, runs: Callable[[str, int], bool],
           max_steps: int = MAX_STEPS, extra: Sequence[str] = ()) -> tuple[str, tuple[str, ...]] | None:
    """The first candidate (`candidates`, at most `max_steps` long, over the call's objects and `extra`) whose
    text `runs(text, n)` accepts (`n`: the steps written, so the call now stands at `line + n`), with its steps;
    None when none does."""
    for steps in candidates(space, call, objects, affordances, extra):
        if len(steps) > max_steps:
            continue
        fixed = with_steps(text, line, steps)
        if runs(fixed, len(steps)):
            return fixed, steps
    return None

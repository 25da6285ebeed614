"""The place a plan puts things, checked against the places the person named.

The model sometimes writes the table for another place the request names (measured: "put the candy on the tray"
answered `'candy' on 'table'` with `goto('table')`: the examples say "on the table", not "on the tray"). When
every destination of the goal is one place the request never names (`said`, slips allowed), and the request says
exactly one other place by a word of its name, spelt as it is (a slip is not enough: "place the bottal in the
boks" does not say the plate), that is neither where those items already are nor one the calls visit with the
gripper empty, that place is meant: the goal and the calls are written with it. Read against the model's answer
and the scene's names, never as patterns over the words alone.

The arm's home is such a place too (`go_home`): where the request names no container or place but says the
home, and the plan sets the held item down on a place the request never names, the arm goes home holding it
(measured: "then bring it back up to your home position", a lesson's step with the apple in hand, planned
`goto('table'), release()`, and the lesson learnt to put things on the table).
"""

from __future__ import annotations

import re

from ..planners.toolcall import PlannedCalls, said
from ..program import Call, Condition
from .table_copy import HOME, TableCopy

MOVES = ("inside", "on")
"""Goal conditions that put an item somewhere."""


def meant_place(answer: PlannedCalls, request: str, table: TableCopy) -> tuple[PlannedCalls, str, str] | None:
    """The answer with its unnamed destination replaced by the one place the request names, with the two places
    (was, now); None when there is nothing to replace."""
    moves = [c for c in answer.goal if c.kind in MOVES and not c.negated and len(c.args) == 2]
    targets = {str(c.args[1]) for c in moves}
    if len(targets) != 1:
        return None
    [was] = targets
    if said(was, request):
        return None
    places = sorted(table.containers | table.places)
    words = set(re.findall(r"[a-z]+", request.lower()))
    named = [p for p in places if p != was and words & {w for w in p.split("_") if len(w) >= 3}]
    if not named and HOME in words:
        home = _home_holding(answer, moves, was, table)
        return (home, was, HOME) if home is not None else None
    if len(named) != 1:
        return None
    [now] = named
    if any(table.where.get(str(c.args[0])) == now for c in moves) or _visited_empty(answer.calls, now, table):
        # where the items are now, or a place the calls visit with nothing in the gripper, plays another part:
        # where they come from ("move the sweet off the tray and into the sack", the sack a name the robot does
        # not know). Visited holding something, it is where that goes ("now move over to the tray", the cube in
        # hand, stated as CUBE on TABLE)
        return None
    kind = "inside" if now in table.containers else "on"
    goal = tuple(Condition(kind, (c.args[0], now)) if c in moves else c for c in answer.goal)
    calls = tuple(Call(c.action, tuple(now if str(a) == was else a for a in c.args)) for c in answer.calls)
    return PlannedCalls(calls, goal), was, now


def _home_holding(answer: PlannedCalls, moves: list[Condition], was: str,
                  table: TableCopy) -> PlannedCalls | None:
    """The answer as going home with the held item, when all it does is set that item down at `was`: its calls
    are `goto(was)` and `release()` only, and its moves are about the held item alone; None otherwise."""
    held = table.held
    if held is None or {str(c.args[0]) for c in moves} != {held}:
        return None
    if not answer.calls or any((c.action, tuple(map(str, c.args))) not in {("goto", (was,)), ("release", ())}
                               for c in answer.calls):
        return None
    goal = (*(c for c in answer.goal if c not in moves), Condition("holds", (held,)))
    return PlannedCalls((Call("go_home", ()),), goal)


def _visited_empty(calls: tuple[Call, ...], place: str, table: TableCopy) -> bool:
    """Whether a call names `place` while the gripper holds nothing (counting picks and releases in order)."""
    holding = table.held is not None
    for call in calls:
        if place in map(str, call.args) and not holding:
            return True
        if call.action in ("pickup", "grasp"):
            holding = True
        elif call.action == "release":
            holding = False
    return False


def _spelt(request: str, table: TableCopy) -> list[str]:
    """The containers and places the request says by a word of their name, spelt as it is."""
    words = set(re.findall(r"[a-z]+", request.lower()))
    return [p for p in sorted(table.containers | table.places) if words & {w for w in p.split("_") if len(w) >= 3}]


def two_places(answer: PlannedCalls, request: str, table: TableCopy) -> tuple[str, str] | None:
    """(the place the calls go to, the other) where the request names exactly two places, the calls go to one of
    them, neither the calls nor the goal use the other, and no item the plan is about (nor the held one) stands
    there — a place things come from is no correction ("take the cube off the tray and put it in the box").
    None otherwise: there is nothing to ask (`planners/place_meant.py`)."""
    named = _spelt(request, table)
    if len(named) != 2:
        return None
    visited = [p for p in named if any(c.action == "goto" and [str(a) for a in c.args] == [p] for c in answer.calls)]
    if len(visited) != 1:
        return None
    [was] = visited
    [other] = [p for p in named if p != was]
    used = {str(a) for c in (*answer.calls, *answer.goal) for a in c.args}
    about = {str(a) for c in (*answer.calls, *answer.goal) for a in c.args if str(a) in table.items}
    if other in used or any(table.where.get(i) == other for i in about | {table.held}):
        return None
    return was, other


def with_place(answer: PlannedCalls, was: str, now: str, table: TableCopy) -> PlannedCalls:
    """The answer with the place `was` written as `now`, in its calls and its goal."""
    kind = "inside" if now in table.containers else "on"
    goal = tuple(Condition(kind if c.kind in MOVES else c.kind, tuple(now if str(a) == was else a for a in c.args),
                           c.negated) for c in answer.goal)
    calls = tuple(Call(c.action, tuple(now if str(a) == was else a for a in c.args)) for c in answer.calls)
    return PlannedCalls(calls, goal)

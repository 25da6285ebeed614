"""The place a plan puts things, checked against the places the person named.

The model sometimes writes the table for another place the request names (measured: "put the candy on the tray"
answered `'candy' on 'table'` with `goto('table')`: the examples say "on the table", not "on the tray"). When
every destination of the goal is one place the request never names (`said`, slips allowed), and the request says
exactly one other place by a word of its name, spelt as it is (a slip is not enough: "place the bottal in the
boks" does not say the plate), that is neither where those items already are nor one the calls visit, that place
is meant: the goal and the calls are written with it. Read against the model's answer and the scene's names,
never as patterns over the words alone.
"""

from __future__ import annotations

import re

from ..planners.toolcall import PlannedCalls, said
from ..program import Call, Condition
from .table_copy import TableCopy

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
    if len(named) != 1:
        return None
    [now] = named
    if any(table.where.get(str(c.args[0])) == now for c in moves) or any(now in map(str, c.args)
                                                                          for c in answer.calls):
        # where the items are now, or a place the calls already visit, plays another part: where they come from
        # ("move the sweet off the tray and into the sack", the sack a name the robot does not know)
        return None
    kind = "inside" if now in table.containers else "on"
    goal = tuple(Condition(kind, (c.args[0], now)) if c in moves else c for c in answer.goal)
    calls = tuple(Call(c.action, tuple(now if str(a) == was else a for a in c.args)) for c in answer.calls)
    return PlannedCalls(calls, goal), was, now

"""The item a plan acts on, checked against the two items a request names (`planners/item_meant.py`): where the
request names exactly two items (`said`, slips allowed, but not in the words of the called behaviours' names:
"tuck" is one letter from the duck), the calls act on one, neither the calls nor the goal use
the other and the gripper holds neither, the model is asked which one the words mean in the end ("picking up the
banana — no wait, sorry, the bottle"). Read against the model's answer and the scene's names."""

from __future__ import annotations

from ..planners.toolcall import PlannedCalls, said
from ..program import Call, Condition
from .table_copy import TableCopy


def two_items(answer: PlannedCalls, request: str, table: TableCopy) -> tuple[str, str] | None:
    """(the item the calls act on, the other) where there is something to ask, else None (module docstring)."""
    # a word of a called behaviour's name is not an item's ("now tuck the boll" for a taught `tuck` says no duck)
    verbs = "_".join(c.action for c in answer.calls)
    named = sorted(i for i in table.items if said(i, request, besides=verbs))
    if len(named) != 2 or table.held in named:
        return None
    used = {str(a) for c in (*answer.calls, *answer.goal) for a in c.args}
    acted = [i for i in named if any(i in [str(a) for a in c.args] for c in answer.calls)]
    if len(acted) != 1:
        return None
    [was] = acted
    [other] = [i for i in named if i != was]
    return None if other in used else (was, other)


def with_item(answer: PlannedCalls, was: str, now: str) -> PlannedCalls:
    """The answer with the item `was` written as `now`, in its calls and its goal."""
    calls = tuple(Call(c.action, tuple(now if str(a) == was else a for a in c.args)) for c in answer.calls)
    goal = tuple(Condition(c.kind, tuple(now if str(a) == was else a for a in c.args), c.negated)
                 for c in answer.goal)
    return PlannedCalls(calls, goal)

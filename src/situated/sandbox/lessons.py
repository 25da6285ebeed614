"""Lessons that generalize: which objects become a taught behaviour's parameters, and a re-run of the behaviour on
a copy of the table with other objects before it is kept.

- The objects the request named ("pack the *ball*") are the parameters. A named object the shown steps never use
  stands for the first object of the same kind (item or container) the steps use that the request did not
  name: the person asked to pack the ball and showed it with the candy. Only steps that worked are recorded
  (`SandboxSession.confirm`), so a failed try and its retry leave the retry.
- What the steps did implicitly is made explicit (`ground`): a named object already in the gripper when the
  lesson began is picked up first, and a `grasp()` that took a named object becomes `pickup(it)`, so the
  behaviour also works on an object that is still on the table.
- The lesson's effect is what it changed for its parameters (the ball went from the table into the gift bag);
  the behaviour is re-run on the table as it was when the lesson began, with another object of the same kind for
  each parameter, and must have the same effect on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..actions import ActionSpace
from ..program import Call, Condition, Var, call_text, condition_text
from .checking import try_plan
from .table_copy import TABLE, TableCopy


@dataclass(frozen=True)
class Generalized:
    """A lesson's parameters (the named objects, in order) and its steps in terms of them."""

    objects: tuple[str, ...]
    steps: tuple[Call, ...]


def kinds_of(table: TableCopy) -> dict[str, str]:
    return {**dict.fromkeys(table.items, "item"), **dict.fromkeys(table.containers, "container")}


def ground(steps: Sequence[Call], start: TableCopy, named: Sequence[str]) -> list[Call]:
    """The steps with the objects they act on implicitly made explicit: a named object in the gripper when the
    lesson began is picked up first, and a `grasp()` that took a named object (the arm was above it) becomes
    `pickup(that object)`."""
    table = start.copy()
    out = [Call("pickup", (table.held,))] if table.held in named else []
    for call in steps:
        table.step(call)
        if call.action == "grasp" and table.held in named:
            out.append(Call("pickup", (table.held,)))
        else:
            out.append(call)
    return out


def only_item(steps: Sequence[Call], start: TableCopy) -> str | None:
    """The one item the steps go to, pick up or hold, when there is exactly one: the lesson's example when the
    request named none ("teach you to serve", shown on the banana). Steps about several items are a recipe with
    its own items ("make a snack": fetch the banana, fetch the strawberry), not an example; None then."""
    table = start.copy()
    items = set(table.items)
    touched: list[str] = []
    for call in steps:
        touched += [str(a) for a in call.args if str(a) in items]
        table.step(call)
        if table.held in items:
            touched.append(table.held)
    return touched[0] if len(set(touched)) == 1 else None


def generalize(named: Sequence[str], steps: Sequence[Call], start: TableCopy) -> Generalized:
    """The parameters and steps of a lesson (see the module docstring)."""
    kinds = kinds_of(start)
    named = [o for o in dict.fromkeys(named) if kinds.get(o) in ("item", "container")]
    if not named and (example := only_item(steps, start)) is not None:
        named = [example]   # "let me show you how to serve": shown on the banana, serve(fruit)
    steps = ground(steps, start, named)
    used = list(dict.fromkeys(str(a) for c in steps for a in c.args))
    stand_in: dict[str, str] = {}
    for obj in named:
        if obj in used:
            continue
        other = next((u for u in used if u not in named and u not in stand_in and kinds.get(u) == kinds[obj]), None)
        if other is not None:
            stand_in[other] = obj
    out = [Call(c.action, tuple(stand_in.get(str(a), a) for a in c.args)) for c in steps]
    now_used = {str(a) for c in out for a in c.args}
    return Generalized(tuple(o for o in named if o in now_used), tuple(out))


def effect(start: TableCopy, end: TableCopy, objects: Sequence[str]) -> tuple[Condition, ...]:
    """What a lesson changed for its parameters: where each one ended up, if that is not where it was."""
    out = []
    for obj in objects:
        if end.held == obj and start.held != obj:
            out.append(Condition("holds", (obj,)))
        elif end.where.get(obj) is not None and end.where.get(obj) != start.where.get(obj):
            place = end.where[obj]
            out.append(Condition("inside" if place in end.containers else "on", (obj, place)))
    return tuple(out)


def substitute(conditions: Sequence[Condition], mapping: Mapping[str, str]) -> tuple[Condition, ...]:
    return tuple(Condition(c.kind, tuple(mapping.get(str(a), a) for a in c.args), c.negated) for c in conditions)


def rerun(name: str, objects: Sequence[str], body: Sequence[Call], space: ActionSpace, start: TableCopy,
          changed: Sequence[Condition]) -> str:
    """Re-run behaviour `name` (already in `space`) on `start` with another object for each parameter: '' when
    it has the lesson's effect on them, else what went wrong, in words."""
    if not objects:
        return ""
    if start.held in objects:  # the lesson's own object, already in the hand: another one starts on the table
        start = start.copy()
        start.where[start.held], start.held = TABLE, None
    kinds = kinds_of(start)
    fixed = {str(a) for c in body for a in c.args if not isinstance(a, Var)}
    mapping: dict[str, str] = {}
    for obj in objects:
        choices = sorted(o for o, k in kinds.items() if k == kinds.get(obj) and o not in fixed
                         and o not in objects and o not in mapping.values() and o != start.held)
        goal = substitute([c for c in changed if obj in map(str, c.args)], {obj: "?"})
        fresh = [o for o in choices if not goal or not start.holds(substitute(goal, {"?": o})[0])]
        if not fresh:
            return ""  # nothing else of that kind to try it on
        mapping[obj] = fresh[0]
    call = Call(name, tuple(mapping[o] for o in objects))
    expected = substitute(changed, mapping)
    trial = try_plan([call], space, start, expected)
    if not trial.ok:
        return f"{call_text(call)} would fail ({trial.failed})"
    if trial.unmet:
        return f"{call_text(call)} would not make {', '.join(condition_text(c) for c in trial.unmet)}"
    return ""

"""Plans tried on a private copy of the table before the person sees them, and a bounded search for the steps a
stated goal needs.

`try_plan` runs calls (behaviours expanded, as the arm would run them) on a `TableCopy` and reports the first
failed step with its reason, which goal conditions hold afterwards and what changed. `search` looks for the
shortest sequence of API calls that makes the goal true from the copy's state: one condition at a time, breadth
first over the seed skills, taught behaviours and motions applied to the objects that matter (those of the goal,
the one in the gripper and those the model's own calls named), at most `MAX_DEPTH` calls per condition and
`MAX_NODES` states in all — so it costs milliseconds, never a model call.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import product

from ..actions import ActionSpace, Behaviour
from ..errors import ValidationError
from ..interpreter import Limits, interpret
from ..program import Call, Condition, condition_text
from ..trace import StepEvent
from .behaviours import MAX_EXPANDED_CALLS, expand
from .table_copy import SEED_SKILLS, TableCopy

LIMITS = Limits(subgoal_steps=MAX_EXPANDED_CALLS, operations=4 * MAX_EXPANDED_CALLS, stop_on_failure=True)
MAX_DEPTH = 4
"""Most calls the search adds for one goal condition."""
MAX_NODES = 20_000
"""Most states the search visits for one plan."""


@dataclass(frozen=True)
class Trial:
    """A plan run on a copy: whether every step worked, the first failure, the goal conditions still unmet and the
    facts that changed; `after` is the copy's state at the end."""

    ok: bool
    failed: str
    """The failed call (plan language) and its reason: `grasp(): already holding 'ball'` ('' if none failed)."""
    unmet: tuple[Condition, ...]
    changes: frozenset[str]
    after: TableCopy

    @property
    def achieves(self) -> bool:
        return self.ok and not self.unmet


def try_plan(calls: Sequence[Call], space: ActionSpace, table: TableCopy,
             goal: Sequence[Condition] = ()) -> Trial:
    """Run `calls` on a copy of `table` (which is left as it was)."""
    copy = table.copy()
    before = copy.facts()
    try:
        expansion = expand(calls, space)
    except ValidationError as err:
        return Trial(False, str(err), tuple(goal), frozenset(), copy)
    trace = interpret(expansion.program, copy, limits=LIMITS)
    failed = next((e for e in trace.events if isinstance(e, StepEvent) and not e.ok), None)
    reason = "" if failed is None else f"{failed.call}: {failed.reason.split(': ', 1)[-1]}"
    unmet = tuple(c for c in goal if not copy.holds(c))
    return Trial(failed is None, reason, unmet, before ^ copy.facts(), copy)


def unmet_text(unmet: Iterable[Condition]) -> str:
    return ", ".join(condition_text(c) for c in unmet)


class _Stepper:
    """Calls applied to copies, behaviours expanded once each."""

    def __init__(self, space: ActionSpace) -> None:
        self.space = space
        self.cache: dict[Call, tuple[Call, ...] | None] = {}

    def skills(self, call: Call) -> tuple[Call, ...] | None:
        if call not in self.cache:
            try:
                program = expand([call], self.space).program
                self.cache[call] = tuple(s for s in program.body if isinstance(s, Call))
            except ValidationError:
                self.cache[call] = None
        return self.cache[call]

    def apply(self, call: Call, table: TableCopy) -> TableCopy | None:
        skills = self.skills(call)
        if skills is None:
            return None
        copy = table.copy()
        for skill in skills:
            if not copy.step(skill).ok:
                return None
        return copy


def candidate_calls(space: ActionSpace, objects: Sequence[str]) -> list[Call]:
    """Every call of the API over `objects`: seed skills first (a bare grasp, then going home last), then taught
    behaviours and motions (at most two parameters)."""
    out: list[Call] = []
    for action in space.actions:
        arity = len(action.params)
        if arity > 2:
            continue
        for args in product(objects, repeat=arity):
            if arity == 2 and args[0] == args[1]:
                continue
            out.append(Call(action.name, tuple(args)))
    # going home to drop something is a last resort: a place is named where one will do; a bare grasp() takes what
    # the copy puts under the gripper, which the arm may have left (measured: "it goes in the box" after a release
    # on the plate closed on nothing), so pickup(item), which goes to the item first, comes before it
    out.sort(key=lambda c: (c.action not in SEED_SKILLS, isinstance(space.get(c.action), Behaviour),
                            c.action == "go_home", c.action == "grasp"))
    return out


def search(goal: Sequence[Condition], space: ActionSpace, table: TableCopy,
           objects: Iterable[str] = ()) -> tuple[Call, ...] | None:
    """The shortest calls found that make every goal condition true from `table`, or None (see the module
    docstring). Conditions already true are kept true."""
    relevant = list(dict.fromkeys([*(str(a) for c in goal for a in c.args), *objects,
                                   *([table.held] if table.held else [])]))
    relevant = [n for n in relevant if table.known(n)]
    stepper = _Stepper(space)
    moves = candidate_calls(space, relevant)
    plan: list[Call] = []
    state = table.copy()
    budget = [MAX_NODES]
    for k, condition in enumerate(goal):
        keep = [c for c in goal[:k] if state.holds(c)]
        found = _breadth_first(condition, keep, state, moves, stepper, budget)
        if found is None:
            return None
        calls, state = found
        plan += calls
    return tuple(plan) if all(state.holds(c) for c in goal) else None


def _breadth_first(condition: Condition, keep: Sequence[Condition], start: TableCopy, moves: Sequence[Call],
                   stepper: _Stepper, budget: list[int]) -> tuple[list[Call], TableCopy] | None:
    def done(table: TableCopy) -> bool:
        return table.holds(condition) and all(table.holds(c) for c in keep)

    if done(start):
        return [], start
    seen = {start.key()}
    queue: deque[tuple[TableCopy, list[Call]]] = deque([(start, [])])
    while queue:
        table, calls = queue.popleft()
        if len(calls) >= MAX_DEPTH:
            continue
        for move in moves:
            budget[0] -= 1
            if budget[0] < 0:
                return None
            after = stepper.apply(move, table)
            if after is None or after.key() in seen:
                continue
            if done(after):
                return [*calls, move], after
            seen.add(after.key())
            queue.append((after, [*calls, move]))
    return None


def without_regrasps(calls: Sequence[Call], space: ActionSpace, table: TableCopy,
                     goal: Sequence[Condition] = ()) -> tuple[Call, ...]:
    """`calls` without each `release()` directly followed by `pickup(x)` of the very item it let go (measured: "put
    cube in tray" with the cube in hand planned `release(), pickup('cube'), goto('tray'), release()`, and a lesson
    recorded the pair), when the plan without the pair still reaches `goal` and leaves the copy of the table in the
    same state: putting an item down to pick it up again changes nothing."""
    out = list(calls)
    end = try_plan(out, space, table, goal)
    if not end.achieves:
        return tuple(calls)
    i = 0
    while i < len(out) - 1:
        first, second = out[i], out[i + 1]
        if (first.action == "release" and not first.args and second.action == "pickup" and second.args
                and try_plan(out[:i], space, table).after.held == str(second.args[0])):
            fewer = out[:i] + out[i + 2:]
            trial = try_plan(fewer, space, table, goal)
            if trial.achieves and trial.after.key() == end.after.key():
                out = fewer
                continue
        i += 1
    return tuple(out)


def without_held_pickup(calls: Sequence[Call], held: str | None) -> tuple[Call, ...]:
    """`calls` without the pickups of the item the gripper already holds, before anything is released."""
    out, released = [], False
    for call in calls:
        if call.action == "pickup" and held is not None and not released and [str(a) for a in call.args] == [held]:
            continue
        released = released or call.action == "release"
        out.append(call)
    return tuple(out)


GO_HOME = Call("go_home", ())


def with_home_kept(found: Sequence[Call], calls: Sequence[Call], space: ActionSpace, table: TableCopy,
                   goal: Sequence[Condition] = ()) -> tuple[Call, ...]:
    """A search's calls `found`, followed by `go_home()` where the model's `calls` end with it and `found` does
    not, when the goal still holds after it. A goal cannot say where the arm ends, so a search for it never plans
    the move home the request asked for (measured on a held-out session: "apple to plate, then home." and "Drop
    that into the bowl and then head home." were planned without it)."""
    if calls and calls[-1] == GO_HOME and (not found or found[-1] != GO_HOME):
        more = (*found, GO_HOME)
        if try_plan(more, space, table, goal).achieves:
            return more
    return tuple(found)

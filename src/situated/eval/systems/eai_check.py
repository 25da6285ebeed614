"""Checking an EAI plan on a private copy of the task's scene (the grounded variant's verifier): VirtualHome
semantics from our household simulator, no derived states (as EAI's executor), and the task's node, edge and
action goals after each step.

With `hints=True` the private scene also says what would help, found by a bounded search over the task's own
actions and the objects involved (never from EAI's ground-truth programs): the steps a failing step needs first
(`Check.enabler`: "TURNTO television" before "LOOKAT television"), and for each unmet goal the action that
makes it hold ("television (410) is ON (SWITCHON television (410) makes it hold)")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from ...datasets.eai_actions import EaiTask, EdgeGoal, NodeGoal
from ...envs.household import HouseholdEnv, InstanceCall, SceneGraph
from ...planners.eai import Check, Checker, Step, task_actions

ZERO_ARG_REASON = "EAI's evaluator skips actions without objects, so it would never be executed"
REPEAT_REASON = "it repeats the step before it and changes nothing"
ENABLER_DEPTH = 2
"""Steps tried before a failing step to let it run (`Check.enabler`)."""
HINT_DEPTH = 3
"""Steps searched from the plan's end for the action that makes an unmet goal hold."""
HINT_BUDGET = 3000
"""Actions tried per search at most (each on a copy of the scene, about a millisecond)."""


def goal_text(task: EaiTask, goal: NodeGoal | EdgeGoal | str) -> str:
    """A goal in words, objects with their ids: `washing_machine (1001) is ON`."""

    def name(i: int) -> str:
        try:
            return task.name_of(i)
        except KeyError:
            return str(i)

    if isinstance(goal, NodeGoal):
        return f"{goal.name} ({goal.id}) is {goal.state}"
    if isinstance(goal, EdgeGoal):
        return f"{name(goal.from_id)} ({goal.from_id}) is {goal.relation} to {name(goal.to_id)} ({goal.to_id})"
    return f"the actions must include {' or '.join(str(goal).split('|'))}"


def _action_goals_unmet(goals: Sequence[str], executed: Sequence[Step]) -> list[str]:
    """EAI's `check_order_with_or_score`: each goal's options searched in order in the executed script text."""
    text = " ".join(s.script() for s in executed)
    start = 0
    for k, goal in enumerate(goals):
        hits = [(i, len(o)) for o in (o.upper().replace(" ", "") for o in goal.split("|"))
                if (i := text.find(o, start)) != -1]
        if not hits:
            return list(goals[k:])
        index, length = hits[0]
        start = index + length
    return []


def _unmet(task: EaiTask, env: HouseholdEnv, executed: Sequence[Step], hints: bool = False) -> list[str]:
    """The goals that do not hold after `executed`, in words; `hints`: node and edge goals followed by the
    action that makes them hold (`_hint`)."""
    g = env.graph

    def text(goal: NodeGoal | EdgeGoal, holds: Callable[[HouseholdEnv], bool]) -> str:
        return goal_text(task, goal) + (_hint(task, env, goal, holds, executed) if hints else "")

    unmet = [text(n, partial(_has_state, n)) for n in task.node_goals if n.state not in g.states(n.id)]
    unmet += [text(e, partial(_has_edge, e)) for e in task.edge_goals
              if not g.has_edge(e.from_id, e.relation, e.to_id)]
    return unmet + [goal_text(task, a) for a in _action_goals_unmet(task.action_goals, executed)]


def _call(step: Step) -> InstanceCall:
    """The step as a call of `HouseholdEnv.step`, its objects given by node id."""
    return InstanceCall(step.action.lower(), step.names, 0, 0, step.ids)


def check_plan(task: EaiTask, steps: Sequence[Step], graph: dict | SceneGraph | None = None, *,
               hints: bool = False) -> Check:
    """Run `steps` on a private copy of the task's initial graph (VirtualHome semantics, no derived states, as
    EAI's executor) and check the task's node, edge and action goals after each step.

    A step fails where the simulator says no, where it takes no objects (EAI's parser would drop it), and where
    it repeats the step before it without any effect (a small model's loop). `hints`: see the module.
    """
    env = HouseholdEnv(task.initial_graph() if graph is None else graph, derived_states=False)
    for k, step in enumerate(steps):
        if not step.ids:
            return Check(k, ZERO_ARG_REASON)
        result = env.step(_call(step))
        if not result.ok:   # a failed action leaves the scene as it was
            return Check(k, result.reason, enabler=enabler(task, env, step, steps[:k]) if hints else ())
        if k and step == steps[k - 1] and not result.changes:
            return Check(k, REPEAT_REASON)
        if not _unmet(task, env, steps[: k + 1]):
            return Check(done_at=k + 1)
    return Check(unmet=tuple(_unmet(task, env, steps, hints)))


def _has_state(goal: NodeGoal, env: HouseholdEnv) -> bool:
    return goal.state in env.graph.states(goal.id)


def _has_edge(goal: EdgeGoal, env: HouseholdEnv) -> bool:
    return env.graph.has_edge(goal.from_id, goal.relation, goal.to_id)


def scene_checker(task: EaiTask, *, hints: bool = False) -> Checker:
    """The checker `plan_grounded` takes for `task`: `check_plan` on the task's initial graph, read once."""
    graph = SceneGraph.from_dict(task.initial_graph(), source=str(task.graph_path))
    return partial(check_plan, task, graph=graph, hints=hints)


# ------------------------------------------------------------------------------------------------ hints

def _calls(task: EaiTask, env: HouseholdEnv, ids: Sequence[int], used: Sequence[Step] = ()) -> list[Step]:
    """Every call of the task's actions over the listed objects among `ids` and what they are inside (not
    rooms): one-object actions on each, two-object actions on each ordered pair; the actions the plan already
    `used` first (the model's own way: WALK before FIND), then in the prompt's order."""
    listed = {o.id for o in task.objects} - {env.character}
    g = env.graph
    around = list(dict.fromkeys([*ids, *(b for i in ids if i in g for b in g.targets(i, "INSIDE")
                                         if not g.is_room(b))]))
    objects = [i for i in around if i in listed]
    calls = []
    own = {s.action for s in used}
    for action in sorted(task_actions(task, "1.0.5"), key=lambda a: a.name not in own):
        if action.arity == 1:
            calls += [Step(action.name, (task.name_of(i),), (i,)) for i in objects]
        elif action.arity == 2:
            calls += [Step(action.name, (task.name_of(i), task.name_of(j)), (i, j))
                      for i in objects for j in objects if i != j]
    return calls


def _search(env: HouseholdEnv, calls: Sequence[Step],
            done: Callable[[HouseholdEnv, frozenset[str]], bool], depth: int) -> tuple[Step, ...] | None:
    """The shortest sequence of `calls` (at most `depth`, breadth first, `HINT_BUDGET` tries) after which
    `done(scene, changes so far)` holds on a copy of `env`; each step must run and change something. None when
    none is found."""
    frontier: list[tuple[tuple[Step, ...], HouseholdEnv, frozenset[str]]] = [((), env, frozenset())]
    tries = 0
    for _ in range(depth):
        following = []
        for done_so_far, state, changes in frontier:
            for call in calls:
                if tries >= HINT_BUDGET:
                    return None
                tries += 1
                trial = state.fork()
                result = trial.step(_call(call))
                if not result.ok or not result.changes:
                    continue
                now = changes | set(result.changes)
                if done(trial, now):
                    return (*done_so_far, call)
                following.append(((*done_so_far, call), trial, now))
        frontier = following
    return None


def _undoes(change: str) -> str:
    """The change that undoes `change` (`+ tv ON` ↔ `- tv ON`)."""
    return ("- " if change.startswith("+") else "+ ") + change[2:]


def enabler(task: EaiTask, env: HouseholdEnv, step: Step, used: Sequence[Step] = ()) -> tuple[Step, ...]:
    """The fewest steps (at most `ENABLER_DEPTH`) over the step's objects after which the failing `step` runs
    in `env` without undoing any of their changes, the actions `used` so far tried first; () when none is found.

    So a step whose effect already holds finds no enabler: SWITCHOFF before a SWITCHON of a light that is on,
    or CLOSE before an OPEN, would only be undone by the step."""

    def runs(trial: HouseholdEnv, changes: frozenset[str]) -> bool:
        result = trial.fork().step(_call(step))
        return result.ok and not any(_undoes(c) in changes for c in result.changes)

    return _search(env, _calls(task, env, step.ids, used), runs, ENABLER_DEPTH) or ()


def _hint(task: EaiTask, env: HouseholdEnv, goal: NodeGoal | EdgeGoal, holds: Callable[[HouseholdEnv], bool],
          used: Sequence[Step]) -> str:
    """` (ACTION name (id) makes it hold)`: the last step of the shortest search that reaches the goal from
    `env` (at most `HINT_DEPTH` steps over its objects); "" when none is found."""
    ids = [goal.id] if isinstance(goal, NodeGoal) else [goal.from_id, goal.to_id]
    found = _search(env, _calls(task, env, ids, used), lambda e, _: holds(e), HINT_DEPTH)
    if not found:
        return ""
    last = found[-1]
    objects = " ".join(f"{n} ({i})" for n, i in zip(last.names, last.ids, strict=True))
    return f" ({last.action} {objects} makes it hold)"

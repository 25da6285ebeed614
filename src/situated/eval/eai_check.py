"""Checking an EAI plan on a private copy of the task's scene (the grounded variant's verifier): VirtualHome
semantics from our household simulator, no derived states (as EAI's executor), and the task's node, edge and
action goals after each step."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from ..datasets.eai_actions import EaiTask, EdgeGoal, NodeGoal
from ..envs.household import HouseholdEnv, SceneGraph
from ..planners.eai import Check, Checker, Step

ZERO_ARG_REASON = "EAI's evaluator skips actions without objects, so it would never be executed"
REPEAT_REASON = "it repeats the step before it and changes nothing"


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


def _unmet(task: EaiTask, env: HouseholdEnv, executed: Sequence[Step]) -> list[str]:
    g = env.graph
    unmet = [goal_text(task, n) for n in task.node_goals if n.state not in g.states(n.id)]
    unmet += [goal_text(task, e) for e in task.edge_goals if not g.has_edge(e.from_id, e.relation, e.to_id)]
    return unmet + [goal_text(task, a) for a in _action_goals_unmet(task.action_goals, executed)]


def check_plan(task: EaiTask, steps: Sequence[Step], graph: dict | SceneGraph | None = None) -> Check:
    """Run `steps` on a private copy of the task's initial graph (VirtualHome semantics, no derived states, as
    EAI's executor) and check the task's node, edge and action goals after each step.

    A step fails where the simulator says no, where it takes no objects (EAI's parser would drop it), and where
    it repeats the step before it without any effect (a small model's loop).
    """
    env = HouseholdEnv(task.initial_graph() if graph is None else graph, derived_states=False)
    for k, step in enumerate(steps):
        if not step.ids:
            return Check(k, ZERO_ARG_REASON)
        result = env.step_ids(step.action.lower(), step.ids)
        if not result.ok:
            return Check(k, result.reason)
        if k and step == steps[k - 1] and not result.changes:
            return Check(k, REPEAT_REASON)
        if not _unmet(task, env, steps[: k + 1]):
            return Check(done_at=k + 1)
    return Check(unmet=tuple(_unmet(task, env, steps)))


def scene_checker(task: EaiTask) -> Checker:
    """The checker `plan_grounded` takes for `task`: `check_plan` on the task's initial graph, read once."""
    graph = SceneGraph.from_dict(task.initial_graph(), source=str(task.graph_path))
    return partial(check_plan, task, graph=graph)

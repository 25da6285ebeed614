"""Replay ground-truth VirtualHome scripts through the household simulator and score them (SR / GCR / Exec)."""

from __future__ import annotations

from collections.abc import Sequence

from ...datasets.progprompt import HouseholdTask
from ...envs.household import HouseholdEnv
from ...envs.household.conditions import class_conditions
from ...envs.household.script import parse_script
from ...errors import DataError
from ..episode import Episode
from .household_metrics import as_metrics, score_episode


def replay_task(task: HouseholdTask, *, seed: int = 0, run: int = 0, derived_states: bool = True) -> Episode:
    """Run one task's grounded script from its initial graph and score the result against its final graph.

    `derived_states=False` leaves out ProgPrompt's HEATED/WASHED/USED rules, as VirtualHome's executor does.
    """
    if task.initial_graph is None or task.final_graph is None:
        raise DataError(f"{task.source}: task {task.name!r} has no initial or final graph to replay against "
                        "(give --initial-graph for splits released without one)")
    env = HouseholdEnv(task.initial_graph, seed=seed, derived_states=derived_states)
    env.reset()
    initial = env.conditions()
    executed = attempted = 0
    for step in parse_script(task.script, source=task.source):
        attempted += 1
        executed += env.step(step.call()).ok
    score = score_episode(task.name, run, initial, class_conditions(task.final_graph), env.conditions(),
                          executed, attempted)
    return Episode(task.task_id, task.name, run, as_metrics(score),
                   details={"attempted": attempted, "executed": executed, "missing": list(score.missing)})


def replay_split(tasks: Sequence[HouseholdTask], *, seed: int = 0, derived_states: bool = True) -> list[Episode]:
    """Replay every task of a split, in order."""
    return [replay_task(t, seed=seed, derived_states=derived_states) for t in tasks]

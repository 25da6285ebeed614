"""Environment 0's test tasks in the project's apartment, for REPORTING only (never for choosing a setting).

ProgPrompt's `test_unseen` tasks (watch tv, microwave salmon, ...) are not in the released data with graphs. The
project has them in its own environment-0-style apartment: `examples/scenes/apartment.json`, the tasks and their
goal conditions in `examples/tasks/apartment_tasks.json` and one reference plan per task in `examples/plans/`
(`microwave_salmon.py`). Each reference plan is replayed on the apartment as an episode runs it
(`progprompt_dev.replay_plan`); every step must succeed and every goal must hold at its end, else a DataError names
the file. The replay's final graph is the task's ground truth, scored as the released tasks are. The reference
plans are never prompt examples: prompts draw from the 34 training plans.
"""

from __future__ import annotations

import re
from pathlib import Path

from situated import files
from situated.datasets.progprompt import HouseholdTask
from situated.datasets.progprompt_dev import WRITTEN_DIR, replay_plan
from situated.envs.household import HouseholdEnv
from situated.errors import DataError, ParseError
from situated.program import parse

SPLIT = "apartment"
TEST_UNSEEN = ("watch tv", "turn off light", "brush teeth", "throw away apple", "make toast", "eat chips on the sofa",
               "put salmon in the fridge", "wash the plate", "bring coffeepot and cupcake to the coffee table",
               "microwave salmon")
"""ProgPrompt's 10 test_unseen tasks (the paper's Table 1); other tasks of the file (the project's own, with
loops) are left out, so the figures sit beside the paper's."""
EXAMPLES_DIR = WRITTEN_DIR.parent
"""`examples/` of a source checkout."""


def load_apartment_tasks(examples_dir: Path = EXAMPLES_DIR) -> list[HouseholdTask]:
    """The apartment's TEST_UNSEEN tasks in the tasks file's order, each with the replay of its reference plan as
    final graph; DataError when one is missing, its plan fails or a goal does not hold after it."""
    scene = examples_dir / "scenes" / "apartment.json"
    tasks_file = examples_dir / "tasks" / "apartment_tasks.json"
    graph = files.read_json(scene, what="scene graph")
    rows = files.read_json(tasks_file, what="tasks file")
    if not isinstance(rows, list) or not rows:
        raise DataError(f"{tasks_file}: expected a non-empty list of {{'task', 'goal'}} objects")
    HouseholdEnv(graph)  # DataError naming the field when the scene is malformed
    tasks = []
    for i, row in enumerate(rows):
        where = f"{tasks_file}: item {i}"
        if not isinstance(row, dict) or not isinstance(row.get("task"), str) or not isinstance(row.get("goal"), list):
            raise DataError(f"{where}: expected an object with a 'task' string and a 'goal' list")
        name = row["task"]
        if name not in TEST_UNSEEN:
            continue
        plan_file = examples_dir / "plans" / f"{re.sub(r'[^0-9a-z]+', '_', name.lower()).strip('_')}.py"
        try:
            program = parse(files.read_text(plan_file, what="reference plan"), source=str(plan_file))
        except ParseError as exc:
            raise DataError(str(exc)) from None
        env = replay_plan(program, graph, str(plan_file))
        unmet = [g for g in row["goal"] if g not in env.conditions()]
        if unmet:
            raise DataError(f"{where}: goal {unmet[0]!r} does not hold after {plan_file.name}")
        tasks.append(HouseholdTask(name, SPLIT, len(tasks), (), tuple(env.script), graph, env.snapshot(),
                                   str(plan_file)))
    missing = sorted(set(TEST_UNSEEN) - {t.name for t in tasks})
    if missing:
        raise DataError(f"{tasks_file}: no task {missing[0]!r}")
    return tasks

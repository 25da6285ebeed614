"""ProgPrompt's development set: the tasks the project may choose its settings on (docs/progprompt.md).

Three parts, all in the scenes of environments 1 and 2 (never environment 0, whose test tasks are for reporting):

- `released`: env1's and env2's 20 annotated tasks with their released final graphs (`progprompt.load_split`);
- `written`: household tasks written for this project, `examples/progprompt_dev/env{1,2}.jsonl` (format in that
  folder's README.md): a task text, goal conditions in the plan language and a reference plan. The reference plan
  is replayed on the environment's first initial graph; every step must succeed and every goal must hold at its
  end (and not at its start), else a DataError names the line. Its final graph is the replay's;
- `train`: the 34 training plans, each re-grounded in every environment whose graph has all the objects it names,
  when all its steps succeed there and it changes something besides where the character is. Goals are the plan's
  net effects on the simulator (its final graph). A plan that is the same task as one of the environment's
  released tasks (`bring my book to the sofa`) is left out, so no task is counted twice.

A reference plan is replayed statement by statement: calls are run, assertions checked symbolically and their
recovery calls run when they fail, at most 10 steps per sub-goal (as an episode's interpreter does; loops and
`if` blocks are not allowed here). Every
task's `split` says its part and environment (`env1`, `written-env1`, `train-env1`); its `index` counts over the
whole set, so task ids are unique.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from situated import files
from situated.datasets.progprompt import HouseholdTask, load_example_plans, load_split
from situated.envs.base import StepResult
from situated.envs.household import HouseholdEnv, class_conditions
from situated.errors import DataError, ParseError
from situated.files import at
from situated.program import Assert, Call, Comment, Condition, Program, Statement, condition_text, parse
from situated.program.effects import read_goals

ENVIRONMENTS = ("env1", "env2")
PARTS = ("released", "written", "train")
WRITTEN_DIR = Path(__file__).resolve().parents[3] / "examples" / "progprompt_dev"
"""The written tasks in a source checkout (`examples/progprompt_dev/`)."""
TRAIN_PLANS = Path("pythonic_plans") / "train_complete_plan_set.json"
SUBGOAL_STEPS = 10
"""ProgPrompt's cap on attempted steps per sub-goal (`interpreter.Limits.subgoal_steps`, which episodes use)."""
_FIELDS = frozenset({"task", "goals", "plan"})
_FILLER = frozenset({"the", "a", "an", "my", "some", "to", "in", "on", "of"})


@dataclass(frozen=True)
class DevTask:
    """One task of the development set: the household task an episode runs, where it comes from and, for the
    written and training parts, its goals and reference plan."""

    task: HouseholdTask
    part: str
    environment: str
    goals: tuple[Condition, ...] = ()
    plan: Program | None = None


def load_dev_set(data_dir: Path, written_dir: Path = WRITTEN_DIR, *,
                 parts: Sequence[str] = PARTS) -> list[DevTask]:
    """The development set from the ProgPrompt data (`data_dir`) and the written tasks (`written_dir`),
    released tasks first, then written, then training plans, env1 before env2; `parts` selects some."""
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise DataError(f"unknown development-set part {unknown[0]!r} (choose from {', '.join(PARTS)})")
    data_dir = Path(data_dir)
    released = {env: load_split(data_dir, env) for env in ENVIRONMENTS}
    tasks: list[DevTask] = []
    if "released" in parts:
        tasks += [DevTask(t, "released", env) for env in ENVIRONMENTS for t in released[env]]
    if "written" in parts:
        for env in ENVIRONMENTS:
            tasks += load_written(Path(written_dir) / f"{env}.jsonl", released[env][0].initial_graph, env)
    if "train" in parts:
        plans = load_example_plans(data_dir / TRAIN_PLANS)
        for env in ENVIRONMENTS:
            tasks += reground_plans(plans, released[env][0].initial_graph, env,
                                    exclude=[t.name for t in released[env]])
    _check_unique(tasks)
    return [replace(d, task=replace(d.task, index=i)) for i, d in enumerate(tasks)]


def load_written(path: Path, graph: dict | None, environment: str) -> list[DevTask]:
    """The tasks of one written-task file (JSON lines; examples/progprompt_dev/README.md), each replayed on
    `graph`; DataError `FILE: line N: ...` when a line is malformed or its reference plan does not reach its goals."""
    if graph is None:
        raise DataError(f"{path}: environment {environment} has no initial graph to replay the tasks on")
    tasks = []
    for number, value in files.read_json_lines(path, what="development tasks"):
        where = at(str(path), number)
        name, goals, plan = _read_line(value, where)
        start = HouseholdEnv(graph, seed=0)
        already = [g for g in goals if start.holds(g)]
        if already:
            raise DataError(f"{at(where, field='goals')}: {condition_text(already[0])} already holds at the start")
        env = replay_plan(plan, graph, where)
        unmet = [g for g in goals if not env.holds(g)]
        if unmet:
            raise DataError(f"{at(where, field='goals')}: {condition_text(unmet[0])} does not hold after the "
                            "reference plan")
        task = HouseholdTask(name, f"written-{environment}", 0, (), tuple(env.script), graph, env.snapshot(), where)
        tasks.append(DevTask(task, "written", environment, goals, plan))
    if not tasks:
        raise DataError(f"{path}: no tasks")
    return tasks


def reground_plans(plans: dict[str, str], graph: dict | None, environment: str, *,
                   exclude: Iterable[str] = ()) -> list[DevTask]:
    """The training plans that re-ground in `graph` (module docstring), as tasks named after their function
    (`wash_mug` -> `wash mug`); plans that are the same task as one in `exclude` are left out."""
    if graph is None:
        raise DataError(f"environment {environment} has no initial graph to re-ground the training plans in")
    skip = {_task_key(n) for n in exclude}
    objects = set(HouseholdEnv(graph).object_names())
    tasks = []
    for function, text in plans.items():
        name = function.replace("_", " ")
        program = parse(text, source=f"plan {function}")
        if _task_key(name) in skip or not _plan_objects(program) <= objects or not _straight(program):
            continue
        try:
            env = replay_plan(program, graph, f"plan {function}")
        except DataError:
            continue  # a step fails in this scene: not a reference plan here
        moved = class_conditions(env.graph, positions=False) - class_conditions(graph, positions=False)
        if not any(not fact.startswith("character INSIDE ") for fact in moved):
            continue  # it only walks the character somewhere (e.g. the book is on the shelf already)
        source = f"{TRAIN_PLANS.as_posix()}: plan {function} in {environment}"
        task = HouseholdTask(name, f"train-{environment}", 0, (), tuple(env.script), graph, env.snapshot(), source)
        tasks.append(DevTask(task, "train", environment, (), program))
    return tasks


# ------------------------------------------------------------------------------------------------ reading

def _read_line(value: object, where: str) -> tuple[str, tuple[Condition, ...], Program]:
    if not isinstance(value, dict):
        raise DataError(f"{where}: expected an object with task, goals and plan")
    missing = sorted(_FIELDS - value.keys())
    extra = sorted(value.keys() - _FIELDS)
    if missing or extra:
        raise DataError(f"{where}: field {(missing or extra)[0]}: {'missing' if missing else 'unknown field'}")
    name, goals, plan = value["task"], value["goals"], value["plan"]
    if not isinstance(name, str) or not re.search(r"[a-z]", name) or name != name.strip():
        raise DataError(f"{at(where, field='task')}: expected a task text in lower case")
    if not isinstance(goals, list) or not goals or not all(isinstance(g, str) for g in goals):
        raise DataError(f"{at(where, field='goals')}: expected a non-empty list of conditions")
    if not isinstance(plan, list) or not plan or not all(isinstance(s, str) and "\n" not in s for s in plan):
        raise DataError(f"{at(where, field='plan')}: expected a non-empty list of plan lines")
    try:
        conditions = read_goals(", ".join(goals), source="goals")
    except ParseError as exc:
        raise DataError(f"{at(where, field='goals')}: {exc}") from None
    function = re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")
    text = f"def {function}():\n" + "".join(f"\t{line}\n" for line in plan)
    try:
        program = parse(text, source="plan")
    except ParseError as exc:
        raise DataError(f"{at(where, field='plan')}: {exc}") from None
    if not _straight(program):
        raise DataError(f"{at(where, field='plan')}: only calls, comments and assertions (no loops or if)")
    return name, conditions, program


def _straight(program: Program) -> bool:
    return all(isinstance(s, Call | Comment | Assert) for s in program.body)


def _plan_objects(program: Program) -> set[str]:
    """Every object a plan's calls name (recovery calls included)."""
    calls = [c for s in program.body for c in (s.recovery if isinstance(s, Assert) else (s,)) if isinstance(c, Call)]
    return {str(a) for c in calls for a in c.args}


# ------------------------------------------------------------------------------------------------ replay

class _ScriptEnv(HouseholdEnv):
    """A household environment that writes each successful grounded action as a VirtualHome script line."""

    def __init__(self, graph: dict) -> None:
        super().__init__(graph, seed=0)
        self.script: list[str] = []

    def _step_ids(self, action: str, ids: tuple[int, ...]) -> StepResult:
        # every step, checked and grounded by HouseholdEnv.step, ends here with its node ids
        result = super()._step_ids(action, ids)
        if result.ok:
            args = "".join(f" <{self.graph.class_name(i)}> ({i})" for i in ids)
            self.script.append(f"<char0> [{action}]{args}")
        return result


def replay_plan(program: Program, graph: dict, where: str) -> _ScriptEnv:
    """`program` run on `graph` as an episode runs it (calls; assertions with their recovery calls run when they
    fail; at most SUBGOAL_STEPS attempted steps per comment-opened sub-goal): the environment as the plan leaves
    it, with the grounded script lines it ran. DataError naming the plan line (1 = the first line after the
    header) when an action fails or a sub-goal has more steps than the cap."""
    env = _ScriptEnv(graph)
    env.reset()
    steps = 0
    for statement in program.body:
        if isinstance(statement, Comment):
            steps = 0
        for call in _calls_run(statement, env):
            steps += 1
            if steps > SUBGOAL_STEPS:
                raise DataError(f"{at(where, field='plan')}: line {call.line - 1}: more than {SUBGOAL_STEPS} "
                                "steps in one sub-goal (an episode would skip it)")
            result = env.step(call)
            if not result.ok:
                raise DataError(f"{at(where, field='plan')}: line {call.line - 1}: step fails: {result.reason}")
    return env


def _calls_run(statement: Statement, env: HouseholdEnv) -> tuple[Call, ...]:
    if isinstance(statement, Call):
        return (statement,)
    if isinstance(statement, Assert) and not env.holds(statement.condition):
        return statement.recovery
    return ()


def _task_key(name: str) -> str:
    """Letters and digits of a task name without filler words (`turn_off_the_table_lamp` = `turn off tablelamp`)."""
    return "".join(w for w in re.findall(r"[a-z0-9]+", name.lower().replace("_", " ")) if w not in _FILLER)


def _check_unique(tasks: list[DevTask]) -> None:
    seen: dict[tuple[str, str], str] = {}
    for dev in tasks:
        key = (dev.environment, _task_key(dev.task.name))
        if key in seen:
            raise DataError(f"{dev.task.source}: task {dev.task.name!r} is the same task as {seen[key]} in "
                            f"{dev.environment}")
        seen[key] = f"{dev.task.name!r} ({dev.task.source})"

"""Tabletop episodes (ProgPrompt's real-robot variant, §V-C): plan from what the camera sees, run it in the
simulated arm's world, score SR / Exec / Plan SR — and evaluation of a task file, with and without distractors.

One episode: a `TabletopEnv` holds the task's objects (plus its distractors in the run with distractors), laid
out by `seed + run`; the planner writes a plan over `env.object_names()` (perception) with the scene's
affordances; the interpreter runs it. Metrics:

- `success` (SR): every goal condition holds in the simulated world at the end.
- `exec` (Exec): executed / attempted steps (dropped invalid calls count as attempted). A pick-and-place that
  the physics defeats (a slip, a blocked move, an item that lands outside) is a step that did not execute, so
  unlike the paper's Exec (which counts whether each step was executable) it also counts gripper failures.
- `plan_success` (Plan SR): the goal holds after running the same plan on `PickPlaceModel`, a symbolic world in
  which every `grab_and_putin(item, container)` succeeds and puts the item in the container — whether the plan
  would have succeeded had every pick-and-place succeeded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...datasets.tabletop import TabletopTask
from ...envs.base import StepResult
from ...envs.tabletop.scene import layout
from ...interpreter import Limits, interpret
from ...planners.base import Planner
from ...planners.progprompt_tabletop import TabletopPlanner
from ...program import Call, Condition, Program, condition_text, format_program
from ..episode import Episode
from ..episode_runner import Progress, cost_of, run_episodes
from ..executors import EpisodeFn, Executor, ModelSpec
from ..store import ResultsStore, fingerprint
from ..summary import summarize
from .base import Metric, keys

if TYPE_CHECKING:
    from ...envs.tabletop import TabletopEnv

METRICS = (Metric("success", "SR"), Metric("exec", "Exec"), Metric("plan_success", "Plan SR"))
"""The tabletop metrics of an episode, as reports show them."""
TABLETOP_METRICS: tuple[str, ...] = keys(METRICS)
DEFAULT_LIMITS = Limits()
PRIMITIVE = "grab_and_putin"


@dataclass(frozen=True)
class TabletopCase:
    """One task in one setting: with its distractors or without; what the runner counts as a task."""

    task: TabletopTask
    distractors: bool

    @property
    def task_id(self) -> str:
        return self.task.task_id + ("+distractors" if self.distractors else "")

    @property
    def instruction(self) -> str:
        return self.task.instruction

    @property
    def names(self) -> tuple[str, ...]:
        """The scene's objects: the task's, then its distractors when on."""
        return self.task.objects + (self.task.distractors if self.distractors else ())


def tabletop_cases(tasks: Iterable[TabletopTask]) -> list[TabletopCase]:
    """Each task without its distractors, then with them (a task without distractors runs once)."""
    return [case for task in tasks for case in
            (TabletopCase(task, False), *((TabletopCase(task, True),) if task.distractors else ()))]


class PickPlaceModel:
    """A symbolic tabletop (an Environment) in which every `grab_and_putin(item, container)` of the scene's
    objects succeeds and leaves the item in the container; for Plan SR."""

    def __init__(self, affordances: Mapping[str, Set[str]], inside: Mapping[str, str] | None = None) -> None:
        self.items = frozenset(n for n, props in affordances.items() if "GRABBABLE" in props)
        self.containers = frozenset(n for n, props in affordances.items() if "CONTAINER" in props)
        self.initial = dict(inside or {})
        self.where = dict(self.initial)

    @classmethod
    def of_scene(cls, affordances: Mapping[str, Set[str]], facts: Iterable[str]) -> PickPlaceModel:
        """The model of a scene: its objects' affordances and its `X INSIDE Y` facts (`env.conditions()`)."""
        inside = {}
        for fact in facts:
            parts = fact.split()
            if len(parts) == 3 and parts[1] == "INSIDE":
                inside[parts[0]] = parts[2]
        return cls(affordances, inside)

    def reset(self, task: object = None) -> str:
        self.where = dict(self.initial)
        return self.describe()

    def step(self, call: Call) -> StepResult:
        if call.action != PRIMITIVE or len(call.args) != 2:
            return StepResult(False, f"the pick-and-place model knows only {PRIMITIVE}(item, container)")
        item, container = (str(a) for a in call.args)
        if item not in self.items:
            return StepResult(False, f"{PRIMITIVE}: {item!r} is not an item of the scene")
        if container not in self.containers:
            return StepResult(False, f"{PRIMITIVE}: {container!r} is not a container of the scene")
        before = self.where.get(item)
        self.where[item] = container
        if before == container:
            return StepResult(True)
        ended = f"- {item} INSIDE {before}" if before else f"- {item} ON table"
        return StepResult(True, "", (f"+ {item} INSIDE {container}", ended))

    def holds(self, condition: Condition) -> bool:
        args = [str(a) for a in condition.args]
        held = False
        if condition.kind in ("inside", "on") and len(args) == 2:
            held = (args[0] in self.items and args[0] not in self.where) if args[1] == "table" \
                else self.where.get(args[0]) == args[1]
        return held != condition.negated

    def describe(self, near: str | None = None) -> str:
        shown = [(i, c) for i, c in sorted(self.where.items()) if near is None or near in (i, c)]
        return "; ".join(f"{item} in {container}" for item, container in shown) or "everything on the table"

    def snapshot(self) -> dict[str, Any]:
        return {"inside": dict(sorted(self.where.items()))}


def plan_succeeds(program: Program, model: PickPlaceModel, goal: Sequence[Condition], *,
                  limits: Limits = DEFAULT_LIMITS) -> bool:
    """Plan SR of one plan: run it on the pick-and-place model (reset first) and check the goal."""
    model.reset()
    interpret(program, model, limits=limits)
    return all(model.holds(g) for g in goal)


def case_episode(case: TabletopCase, run: int, planner: Planner, env: TabletopEnv, *,
                 limits: Limits = DEFAULT_LIMITS, layout_seed: int | None = None) -> Episode:
    """Plan, run and score one episode on `env` (already reset, holding `case.names`)."""
    seen = env.object_names()
    affordances = env.object_properties()
    model = PickPlaceModel.of_scene(affordances, env.conditions())
    result = planner.plan(case.instruction, seen, affordances=affordances)
    trace = interpret(result.program, env, limits=limits)
    goal = case.task.goal
    missing = [condition_text(g) for g in goal if not env.holds(g)]
    attempted = trace.attempted + result.dropped
    plan_ok = plan_succeeds(result.program, model, goal, limits=limits)
    metrics = {"success": float(not missing), "exec": trace.executed / attempted if attempted else 0.0,
               "plan_success": float(plan_ok)}
    details: dict[str, Any] = {
        "task_index": case.task.index, "distractors": case.distractors,
        "distractor_objects": list(case.task.distractors) if case.distractors else [], "objects": list(case.names),
        "seen": list(seen), "layout_seed": layout_seed, "plan": result.text,
        "program": format_program(result.program), "attempted": attempted, "executed": trace.executed,
        "dropped": result.dropped, "problems": list(result.raw_problems),
        "failures": [f"line {e.line}: {e.call}: {e.reason}" for e in trace.steps if not e.ok],
        "missing": missing, "final": sorted(env.conditions()),
    }
    return Episode(case.task_id, case.instruction, run, metrics, trace, cost_of(result.completions), details)


def make_env(case: TabletopCase, layout_seed: int, slip_probability: float = 0.0) -> TabletopEnv:
    """The simulated scene of a case, laid out with `layout_seed` (pybullet is imported here)."""
    from ...envs.tabletop import TabletopEnv

    return TabletopEnv(list(case.names), seed=layout_seed, slip_probability=slip_probability)


def tabletop_episode(case: TabletopCase, run: int, planner: Planner, *, seed: int = 0,
                     slip_probability: float = 0.0, limits: Limits = DEFAULT_LIMITS) -> Episode:
    """One episode of `case` (the `run`-th): a fresh scene laid out with `seed + run`, closed afterwards."""
    env = make_env(case, seed + run, slip_probability)
    try:
        env.reset()
        return case_episode(case, run, planner, env, limits=limits, layout_seed=seed + run)
    finally:
        env.close()


def check_layouts(cases: Sequence[TabletopCase], runs: int, seed: int = 0) -> None:
    """DataError (naming the task's file and index) when a case's objects cannot be laid out for some run: found
    before any model is asked (layouts are plain Python, no simulator)."""
    for case in cases:
        field = "distractors" if case.distractors else "objects"
        where = f"{case.task.source}: task {case.task.index}: field '{field}'"
        for run in range(runs):
            layout(case.names, seed + run, source=where)


def tabletop_config(tasks: Sequence[TabletopTask], **settings: Any) -> dict[str, Any]:
    """The configuration key of an evaluation: every setting that changes results and a digest of the tasks."""
    digest = fingerprint([(t.instruction, t.objects, t.distractors, t.goal_text) for t in tasks])
    return {**settings, "tasks": digest}


def evaluate_tabletop(tasks: Sequence[TabletopTask], planner_factory: Callable[[], Planner], *, runs: int = 1,
                      out: Path | None, config: Mapping[str, Any], seed: int = 0, slip_probability: float = 0.0,
                      limits: Limits = DEFAULT_LIMITS, on_progress: Progress | None = None) -> list[Episode]:
    """Evaluate on every task with and without its distractors × `runs`, resuming from `out` (a results store;
    None keeps episodes in memory); `config` (see `tabletop_config`) must match what `out` was written with."""
    cases = tabletop_cases(tasks)
    check_layouts(cases, runs, seed)

    def make() -> Callable[[TabletopCase, int], Episode]:
        planner = planner_factory()
        return lambda case, run: tabletop_episode(case, run, planner, seed=seed, slip_probability=slip_probability,
                                                  limits=limits)

    settings = {**config, "seed": seed, "slip_probability": slip_probability}
    with ResultsStore(out, settings, system="tabletop") as store:
        return run_episodes(cases, runs, make, store, on_progress=on_progress)


@dataclass(frozen=True)
class TabletopJob:
    """A tabletop evaluation's episodes as data, for any executor: how to open the model and the planner's and
    episodes' settings. `build()` (in the worker, once) opens the model and makes the planner; each episode
    builds its own simulated scene."""

    model: ModelSpec
    n_examples: int = 3
    grammar: bool = True
    seed: int = 0
    slip_probability: float = 0.0
    limits: Limits = DEFAULT_LIMITS

    def build(self) -> EpisodeFn:
        planner = TabletopPlanner(self.model.open(), None, n_examples=self.n_examples, comments=True,
                                  constrained=self.grammar, seed=self.seed)
        return lambda case, run: tabletop_episode(case, run, planner, seed=self.seed,
                                                  slip_probability=self.slip_probability, limits=self.limits)


def evaluate_tabletop_job(tasks: Sequence[TabletopTask], job: TabletopJob, executor: Executor, *, runs: int = 1,
                          out: Path | None, config: Mapping[str, Any],
                          on_progress: Progress | None = None) -> list[Episode]:
    """`evaluate_tabletop` with `executor` (this process, worker processes or Ray): the same store, the same
    configuration key, so either resumes the other's run."""
    cases = tabletop_cases(tasks)
    check_layouts(cases, runs, job.seed)
    settings = {**config, "seed": job.seed, "slip_probability": job.slip_probability}
    with ResultsStore(out, settings, system="tabletop") as store:
        return run_episodes(cases, runs, job, store, executor=executor, on_progress=on_progress)


def tabletop_summary(episodes: Sequence[Episode]) -> dict[str, Any]:
    """SR / Exec / Plan SR over all episodes (per-run means, then the mean over runs), the counts, and the same
    three with and without distractors: the last line of `situated eval tabletop --json`."""
    s = summarize(episodes, TABLETOP_METRICS)
    out: dict[str, Any] = {"sr": round(s["success"].mean, 4), "exec": round(s["exec"].mean, 4),
                           "plan_sr": round(s["plan_success"].mean, 4),
                           "tasks": len({e.task.removesuffix("+distractors") for e in episodes}), "runs": s.runs}
    for label, on in (("distractors", True), ("no_distractors", False)):
        part = [e for e in episodes if bool(e.details.get("distractors")) == on]
        if part:
            p = summarize(part, TABLETOP_METRICS)
            out |= {f"sr_{label}": round(p["success"].mean, 4), f"exec_{label}": round(p["exec"].mean, 4),
                    f"plan_sr_{label}": round(p["plan_success"].mean, 4)}
    out |= {"sr_std": round(s["success"].std, 4), "episodes": s.episodes,
            "tokens": sum(e.cost.tokens for e in episodes)}
    return out

"""Household episodes (ProgPrompt, LangPrompt): plan, run with feedback, score — and evaluation of a split.

One episode: the environment starts from the task's initial graph; the planner writes a plan over that scene's
objects (with grounded decoding, each draft is checked on a private copy of the scene: `simulator_verifier`);
the interpreter runs it, and after a failed action the planner may write a new remainder (`run_plan` with
`replan > 0`); the final state is scored against the ground-truth final graph (SR / GCR / Exec).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from ...datasets.progprompt import HouseholdTask
from ...envs.base import ConditionCheck, Environment, symbolic_check
from ...envs.household import HouseholdEnv
from ...errors import DataError, SituatedError
from ...interpreter import Limits, interpret
from ...planners.assertion_check import ASSERT_CHECKS, assertion_check
from ...planners.base import Planner, PlanResult
from ...planners.factory import household_planner_factory
from ...planners.feedback import Verifier, failure_comment
from ...planners.progprompt_prompt import ABLATIONS
from ...program import Condition, Program
from ...trace import StepEvent, Trace
from ..episode import Episode
from ..episode_runner import Progress, cost_of, run_episodes
from ..executors import EpisodeFn, Executor, ModelSpec
from ..store import ResultsStore, fingerprint
from .household_metrics import abandoned, as_metrics, score_episode
from .household_sampling import SampledLLM

DEFAULT_LIMITS = Limits()



class SimulatorVerifier:
    """The verifier of grounded decoding: resets `env` (a private copy of the scene, never the one the episode
    runs on), runs the plan there with symbolic assertion checks and reports the failed actions; `unmet` asks
    the copy which goals do not hold where the last plan left it."""

    def __init__(self, env: Environment, *, limits: Limits | None = None) -> None:
        self.env = env
        self.limits = replace(limits or DEFAULT_LIMITS, stop_on_failure=False)

    def __call__(self, program: Program) -> list[StepEvent]:
        return [e for e in self.steps(program) if not e.ok]

    def steps(self, program: Program) -> list[StepEvent]:
        self.env.reset()
        return list(interpret(program, self.env, limits=self.limits).steps)

    def unmet(self, goals: Sequence[Condition]) -> list[Condition]:
        return [g for g in goals if not self.env.holds(g)]


def simulator_verifier(env: Environment, *, limits: Limits | None = None) -> Verifier:
    """A verifier for grounded decoding on `env`, a private copy of the episode's scene (`SimulatorVerifier`)."""
    return SimulatorVerifier(env, limits=limits)


class Replanner(Protocol):
    def replan(self, task_name: str, objects: Sequence[str], done: str, failure: str, *,
               affordances: Mapping[str, Set[str]] | None = None, verify: Verifier | None = None) -> PlanResult: ...


@dataclass(frozen=True)
class Execution:
    """What running a plan (with replanning) produced: the trace, the final text and every plan asked."""

    trace: Trace
    text: str
    plans: tuple[PlanResult, ...]

    @property
    def replans(self) -> int:
        return len(self.plans) - 1

    @property
    def dropped(self) -> int:
        return sum(p.dropped for p in self.plans)

    @property
    def repairs(self) -> int:
        return sum(p.repairs for p in self.plans)

    @property
    def abandoned(self) -> int:
        """Rewrites that made a plan executable by giving up a task step (`household_metrics.abandoned`)."""
        return sum(abandoned(p.rewrites, p.program) for p in self.plans)


def run_plan(first: PlanResult, env: Environment, *, planner: Replanner | None = None, task_name: str = "",
             objects: Sequence[str] = (), replan: int = 0, condition_check: ConditionCheck = symbolic_check,
             limits: Limits = DEFAULT_LIMITS, affordances: Mapping[str, Set[str]] | None = None,
             verify: Verifier | None = None) -> Execution:
    """Run `first.program` on `env` (already reset), replanning up to `replan` times after failed actions:
    the lines run so far plus a comment naming the failure start the function again and the planner writes a
    new remainder, which runs on the same environment from there. The last remainder runs to its end."""
    if replan > 0 and planner is None:
        raise SituatedError("replanning needs a planner that can replan")
    events = []
    plans = [first]
    program, text = first.program, first.text
    for attempt in range(replan + 1):
        last = attempt == replan
        trace = interpret(program, env, limits=replace(limits, stop_on_failure=not last),
                          condition_check=condition_check)
        events += trace.events
        failure = trace.first_failure
        if last or failure is None or planner is None:
            break
        done = "\n".join(text.split("\n")[: failure.line])
        result = planner.replan(task_name, objects, done, failure_comment(failure.call, failure.reason),
                                affordances=affordances, verify=verify)
        plans.append(result)
        first_new = done.count("\n") + 2  # the line of the failure comment
        program = Program(tuple(s for s in result.program.body if s.line >= first_new), result.program.name)
        text = result.text
    return Execution(Trace(events), text, tuple(plans))


def plan_and_run(planner: Planner, task_name: str, env: HouseholdEnv, *, verifier_env: HouseholdEnv | None = None,
                 condition_check: ConditionCheck = symbolic_check, replan: int = 0,
                 limits: Limits = DEFAULT_LIMITS) -> Execution:
    """Plan `task_name` on `env`'s scene (already reset) and run it there. With `verifier_env` (a private copy
    of the same scene) and a planner that repairs, drafts are checked on the copy first (grounded decoding)."""
    objects = env.object_names()
    affordances = env.object_properties()
    verify = None
    if verifier_env is not None and planner.max_repairs > 0:
        verify = simulator_verifier(verifier_env, limits=limits)
        first = planner.plan(task_name, objects, affordances=affordances, verify=verify)
    else:
        first = planner.plan(task_name, objects, affordances=affordances)
    replanner = planner if planner.can_replan else None
    if replan > 0 and replanner is None:
        raise SituatedError(f"{type(planner).__name__} cannot replan")
    return run_plan(first, env, planner=replanner, task_name=task_name, objects=objects, replan=replan,
                    condition_check=condition_check, limits=limits, affordances=affordances, verify=verify)


def check_task(task: HouseholdTask) -> None:
    """DataError when a task lacks the graphs an episode needs."""
    if task.initial_graph is None:
        raise DataError(f"task {task.name!r} ({task.source or task.split}) has no initial graph; "
                        "give one with --initial-graph")
    if task.final_graph is None:
        raise DataError(f"task {task.name!r} ({task.source or task.split}) has no ground-truth final graph")


def household_episode(task: HouseholdTask, run: int, planner: Planner, *,
                      condition_check: ConditionCheck = symbolic_check, replan: int = 0, seed: int = 0,
                      limits: Limits = DEFAULT_LIMITS) -> Episode:
    """Plan, run and score one episode of `task` (the `run`-th; grounding is seeded with seed + run)."""
    check_task(task)
    env = HouseholdEnv(task.initial_graph, seed=seed + run)
    env.reset()
    initial = env.conditions()
    final_gt = HouseholdEnv(task.final_graph, seed=seed).conditions()
    done = plan_and_run(planner, task.name, env, verifier_env=HouseholdEnv(task.initial_graph, seed=seed + run),
                        condition_check=condition_check, replan=replan, limits=limits)
    trace = done.trace
    attempted = trace.attempted + done.dropped  # dropped invalid calls count as failed attempts
    score = score_episode(task.name, run, initial, final_gt, env.conditions(), trace.executed, attempted)
    details: dict[str, Any] = {
        "split": task.split, "task_index": task.index, "attempted": attempted, "executed": trace.executed,
        "dropped": done.dropped, "unknown": sum(p.unknown for p in done.plans),
        "problems": [q for p in done.plans for q in p.raw_problems], "replans": done.replans,
        "repairs": done.repairs, "abandoned": done.abandoned, "rejected": [r for p in done.plans for r in p.rejected],
        "missing": list(score.missing), "program": done.text, "plans": [p.text for p in done.plans],
    }
    walks = [w for p in done.plans for w in p.walks]
    if walks:  # only then, so episodes stored before room walks existed read the same
        details["walks"] = walks
    cost = cost_of([c for p in done.plans for c in p.completions])
    return Episode(task.task_id, task.name, run, as_metrics(score), trace, cost, details)


def household_episode_fn(planner_factory: Callable[[], Planner],
                         condition_check: Callable[[Planner], ConditionCheck], **options: Any,
                         ) -> Callable[[], Callable[[HouseholdTask, int], Episode]]:
    """For the runner: each worker gets its own planner (and assertion check) and runs household episodes."""

    def make() -> Callable[[HouseholdTask, int], Episode]:
        planner = planner_factory()
        check = condition_check(planner)
        return lambda task, run: household_episode(task, run, planner, condition_check=check, **options)

    return make


@dataclass(frozen=True)
class HouseholdJob:
    """A household evaluation's episodes as data, for any executor: how to open the model, the planner's
    settings and the episode's. `build()` (in the worker, once) opens the model, makes the ProgPrompt (or
    LangPrompt) planner and its assertion check, and returns the episode function."""

    model: ModelSpec
    examples: tuple[tuple[str, str], ...]
    """Example plans as (function name, program text) pairs."""
    n_examples: int = 3
    ablation: str = "full"
    grammar: bool = True
    langprompt: bool = False
    repairs: int = 0
    assert_check: str = "symbolic"
    replan: int = 0
    seed: int = 0
    limits: Limits = DEFAULT_LIMITS
    retriever: str | None = None
    """Example plans retrieved per task by this retriever (minilm or bm25); None: the first `n_examples`."""
    goals: bool = False
    """Goal-aware grounded decoding (the model states the goals; unmet ones are continued)."""
    plan_tokens: int | None = None
    """Token budget per plan, repairs included (None: the planner's default)."""
    temperature: float = 0.0
    """Sample every model call at this temperature, seeded by seed, run and prompt (0: greedy)."""
    scene_examples: bool = False
    """Prompt examples naming the fewest objects the task's scene lacks first (ProgPromptPrompt)."""
    preconditions: bool = False
    """A failing call's missing steps searched for on the private copy first (`planners.preconditions`)."""
    keep_steps: bool = False
    """The same search only where the model's rewrite would give a task step up (`--keep-steps`)."""
    room_walks: bool = False
    """A walk to the room written before each move into another room (`--room-walks`, `planners.room_walks`)."""
    open_first: bool = False
    """The search only for calls that fail for want of something opened (`--open-first`)."""
    skip_done: bool = False
    """A call whose effect already holds on the private copy is dropped, not rewritten (`--skip-done`)."""

    def __post_init__(self) -> None:
        if self.ablation not in ABLATIONS:
            raise SituatedError(f"--ablation must be one of {', '.join(ABLATIONS)}, not {self.ablation!r}")
        if self.assert_check not in ASSERT_CHECKS:
            raise SituatedError(f"--assert-check must be one of {', '.join(ASSERT_CHECKS)}, "
                                f"not {self.assert_check!r}")
        if self.repairs < 0 or self.replan < 0:
            raise SituatedError(f"--repairs and --replan must be >= 0, got {self.repairs} and {self.replan}")

    def planner_factory(self, llm: Any) -> Callable[[], Planner]:
        return household_planner_factory(llm, dict(self.examples), n_examples=self.n_examples,
                                         ablation=self.ablation, grammar=self.grammar, langprompt=self.langprompt,
                                         seed=self.seed, max_repairs=self.repairs, retriever=self.retriever,
                                         goals=self.goals, plan_tokens=self.plan_tokens,
                                         scene_examples=self.scene_examples, preconditions=self.preconditions,
                                         keep_steps=self.keep_steps, room_walks=self.room_walks,
                                         open_first=self.open_first, skip_done=self.skip_done)

    def build(self) -> EpisodeFn:
        llm = SampledLLM(self.model.open(), self.temperature, self.seed)
        planner = self.planner_factory(llm)()
        check = assertion_check(self.assert_check, planner.llm)

        def episode(task: HouseholdTask, run: int) -> Episode:
            llm.run = run  # the run's sampling seeds (no effect when greedy)
            return household_episode(task, run, planner, condition_check=check, replan=self.replan,
                                     seed=self.seed, limits=self.limits)

        return episode


def household_config(tasks: Sequence[HouseholdTask], **settings: Any) -> dict[str, Any]:
    """The configuration key of a household evaluation: every setting that changes results, plus digests of
    the tasks (scripts and graphs) so that a rerun over other data is not taken for a resume."""
    return {**settings, "tasks": fingerprint([(t.task_id, t.script, t.initial_graph, t.final_graph) for t in tasks])}


def evaluate_household(tasks: Sequence[HouseholdTask], planner_factory: Callable[[], Planner], *, runs: int = 1,
                       out: Path | None, config: Mapping[str, Any], jobs: int = 1,
                       condition_check: Callable[[Planner], ConditionCheck] = lambda planner: symbolic_check,
                       replan: int = 0, seed: int = 0, limits: Limits = DEFAULT_LIMITS,
                       on_progress: Progress | None = None) -> list[Episode]:
    """Evaluate planners made by `planner_factory` (one per worker) on `tasks` × `runs`, resuming from `out`
    (a results store; None keeps episodes in memory). `config` (see `household_config`) must match what `out`
    was written with."""
    if replan < 0:
        raise SituatedError(f"replan must be >= 0, got {replan}")
    for task in tasks:
        check_task(task)
    make = household_episode_fn(planner_factory, condition_check, replan=replan, seed=seed, limits=limits)
    with ResultsStore(out, {**config, "replan": replan, "seed": seed}, system="household") as store:
        return run_episodes(tasks, runs, make, store, jobs=jobs, on_progress=on_progress)


def evaluate_household_job(tasks: Sequence[HouseholdTask], job: HouseholdJob, executor: Executor, *, runs: int = 1,
                           out: Path | None, config: Mapping[str, Any],
                           on_progress: Progress | None = None) -> list[Episode]:
    """Evaluate `job` on `tasks` × `runs` with `executor` (in this process, worker processes or Ray), resuming
    from `out` (None: in memory). The store's configuration is `config` plus the job's replan and seed, as
    `evaluate_household` writes it, so either can resume the other's run."""
    for task in tasks:
        check_task(task)
    with ResultsStore(out, {**config, "replan": job.replan, "seed": job.seed}, system="household") as store:
        return run_episodes(tasks, runs, job, store, executor=executor, on_progress=on_progress)

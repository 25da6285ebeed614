"""`situated plan` as a library call: one task planned by a model on one scene (a household scene graph or a
tabletop scene), run with the same interpreter, and what a user is shown afterwards: the plan, its trace, the
state changes and which goal conditions hold."""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...datasets.progprompt import load_example_plans
from ...errors import DataError
from ...interpreter import interpret
from ...planners.base import PlanResult
from ...trace import Trace
from ..model_source import ModelSource
from .household_episodes import plan_and_run, run_plan
from .scenes import OpenedScene, is_tabletop, open_scene

DEFAULT_EXAMPLES_DIR = Path("examples/plans")


@dataclass(frozen=True)
class PlanSettings:
    """The options of `situated plan` (see its help) that decide what is planned and run."""

    task: str
    scene: Path
    model: str = "llamacpp:qwen2.5-coder-1.5b"
    tasks: Path | None = None
    examples_file: Path | None = None
    examples: int = 3
    ablation: str = "full"
    no_grammar: bool = False
    assert_check: str = "symbolic"
    replan: int = 0
    repairs: int = 0
    seed: int = 0


@dataclass(frozen=True)
class PlannedRun:
    """What `situated plan` shows: the first plan, the trace of running it (replans included), the scene's
    conditions before and after, each goal condition with whether it holds (None: no goals given)."""

    opened: OpenedScene | None  # the tabletop scene (its camera renders it); None for a household scene
    plan: PlanResult
    trace: Trace
    replans: int
    before: Set[str]
    after: Set[str]
    goals: tuple[tuple[str, bool], ...] | None
    seen: tuple[str, ...] = ()  # the objects the planner was shown (the tabletop camera's)

    @property
    def ended_shown(self) -> bool:
        """Whether the changes list conditions that ended (the tabletop's moves end as many as they start)."""
        return bool(self.seen)


def examples_path(path: Path | None, data_dir: Path | None = None) -> Path:
    """The example plans to use: the given file or folder, else the data's plan set, else examples/plans."""
    if path is not None:
        return path
    shared = data_dir / "pythonic_plans" / "train_complete_plan_set.json" if data_dir else None
    path = shared if shared is not None and shared.is_file() else DEFAULT_EXAMPLES_DIR
    if not path.exists():
        raise DataError(f"no example plans at {path}; give --examples-file")
    return path


def check_render(scene: Path, render: Path | None) -> None:
    if render is not None and not is_tabletop(scene):
        raise DataError(f"--render {render}: only a tabletop scene has a camera (use --scene tabletop:...)")


def plan_on_scene(s: PlanSettings, models: ModelSource) -> PlannedRun:
    """Plan `s.task` on `s.scene` with the model, run the plan (replanning up to `s.replan` times), check goals."""
    if is_tabletop(s.scene):
        return _plan_on_tabletop(s, models)
    from ...datasets.task_goals import goals_for
    from ...envs.household import HouseholdEnv
    from ...planners.assertion_check import assertion_check
    from ...planners.factory import household_planner_factory

    goals = goals_for(s.tasks, s.task) if s.tasks is not None else None
    env = HouseholdEnv.from_file(s.scene, seed=s.seed)
    env.reset()
    plans = load_example_plans(examples_path(s.examples_file))
    llm = models.open(s.model)
    planner = household_planner_factory(llm, plans, n_examples=s.examples, ablation=s.ablation,
                                        grammar=not s.no_grammar, seed=s.seed, max_repairs=s.repairs)()
    before = env.conditions()
    done = plan_and_run(planner, s.task, env, verifier_env=HouseholdEnv.from_file(s.scene, seed=s.seed),
                        condition_check=assertion_check(s.assert_check, llm), replan=s.replan)
    after = env.conditions()
    held = None if goals is None else tuple((goal, goal in after) for goal in goals)
    return PlannedRun(None, done.plans[0], done.trace, done.replans, before, after, held)


def _tabletop_goals(tasks: Path, task: str) -> Any:
    from ...datasets.tabletop import load_tabletop_tasks, task_slug

    wanted = task_slug(task)
    return next((t for t in load_tabletop_tasks(tasks) if t.task_id == wanted), None)


def _plan_on_tabletop(s: PlanSettings, models: ModelSource) -> PlannedRun:
    """Plan over what the tabletop camera sees (objects and affordances), run it, check the task file's goal."""
    from ...planners.progprompt_tabletop import TabletopPlanner

    goal = _tabletop_goals(s.tasks, s.task) if s.tasks is not None else None
    opened = open_scene(str(s.scene), seed=s.seed)
    env = opened.env
    plans = load_example_plans(s.examples_file) if s.examples_file is not None else None
    planner = TabletopPlanner(models.open(s.model), plans, n_examples=s.examples,
                              comments=s.ablation in ("full", "no-feedback"), constrained=not s.no_grammar,
                              seed=s.seed)
    objects, affordances = env.object_names(), env.object_properties()
    before = env.conditions()
    first = planner.plan(s.task, objects, affordances=affordances)
    if s.replan:
        done = run_plan(first, env, planner=planner, task_name=s.task, objects=objects, replan=s.replan,
                        affordances=affordances)
        trace, replans = done.trace, done.replans
    else:
        trace, replans = interpret(first.program, env), 0
    held = None if goal is None else tuple(zip(goal.goal_text, (env.holds(g) for g in goal.goal), strict=True))
    return PlannedRun(opened, first, trace, replans, before, env.conditions(), held, tuple(objects))

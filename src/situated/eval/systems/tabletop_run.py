"""`situated eval tabletop` as a library call: the settings, their rules, the resume key and default store, and
`prepare_tabletop(settings, models) -> TabletopRun`, whose `run` evaluates every task with and without its
distractors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...datasets.tabletop import load_tabletop_tasks
from ...errors import SituatedError
from ...planners.progprompt_tabletop import TABLETOP_EXAMPLES, TabletopPrompt
from ..episode import Episode
from ..episode_runner import Progress
from ..executors import Executor
from ..model_source import ModelSource
from ..settings import check_counts, check_limit, model_label
from ..store import fingerprint
from .tabletop_episodes import TabletopJob, check_layouts, evaluate_tabletop_job, tabletop_cases, tabletop_config


@dataclass(frozen=True)
class TabletopSettings:
    """The options of `situated eval tabletop` (see its help) that decide what runs."""

    tasks: Path
    model: str = "llamacpp:qwen2.5-coder-1.5b"
    runs: int = 1
    seed: int = 0
    out: Path | None = None
    base_url: str | None = None
    limit: int | None = None
    examples: int = 3
    slip: float = 0.0
    no_grammar: bool = False


def check_tabletop(s: TabletopSettings) -> None:
    if s.runs < 1:
        raise SituatedError(f"--runs must be >= 1, got {s.runs}")
    check_limit(s.limit)
    if not 0.0 <= s.slip <= 1.0:
        raise SituatedError(f"--slip must lie in [0, 1], got {s.slip}")
    check_counts(("--examples", s.examples, 0))


@dataclass(frozen=True)
class TabletopRun:
    """A prepared `situated eval tabletop` run."""

    settings: TabletopSettings
    tasks: tuple
    job: TabletopJob
    executor: Executor
    config: dict[str, Any]
    out: Path

    def run(self, on_progress: Progress | None = None) -> list[Episode]:
        return evaluate_tabletop_job(self.tasks, self.job, self.executor, runs=self.settings.runs, out=self.out,
                                     config=self.config, on_progress=on_progress)


def prepare_tabletop(s: TabletopSettings, models: ModelSource) -> TabletopRun:
    """Check the settings and the task file (every object placeable) before a model is opened; the store is
    `--out` or runs/tabletop-<model>."""
    check_tabletop(s)
    all_tasks = load_tabletop_tasks(s.tasks)
    chosen = tuple(all_tasks[:s.limit] if s.limit is not None else all_tasks)
    config = tabletop_config(all_tasks, model=s.model, base_url=s.base_url, planner="progprompt_tabletop",
                             examples=s.examples, example_plans=fingerprint(dict(TABLETOP_EXAMPLES)),
                             grammar=not s.no_grammar)
    check_layouts(tabletop_cases(chosen), s.runs, s.seed)  # objects that cannot be placed: before loading a model
    models.check_cassette([s.tasks])
    TabletopPrompt(None, n_examples=s.examples, seed=s.seed)  # bad settings (too many examples) fail here, at once
    executor, spec = models.for_episodes(s.model)
    job = TabletopJob(spec, n_examples=s.examples, grammar=not s.no_grammar, seed=s.seed, slip_probability=s.slip)
    return TabletopRun(s, chosen, job, executor, config, s.out or Path("runs") / f"tabletop-{model_label(s.model)}")

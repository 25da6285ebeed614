"""`situated eval tabletop`: ProgPrompt's real-robot tasks in the simulated arm's world (SR / Exec / Plan SR), each
task with and without its distractors."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..datasets.tabletop import load_tabletop_tasks
from ..errors import SituatedError
from ..eval.episode import Episode
from ..eval.settings import check_counts
from ..eval.store import fingerprint
from ..eval.summary import by_task, stat
from ..eval.systems.tabletop_episodes import (
    TABLETOP_METRICS,
    TabletopJob,
    check_layouts,
    evaluate_tabletop_job,
    tabletop_cases,
    tabletop_config,
    tabletop_summary,
)
from ..planners.progprompt_tabletop import TABLETOP_EXAMPLES, TabletopPrompt
from .models import BaseUrlOpt, ExecutorOpt, JobsOpt, RayAddressOpt, ThreadsOpt, check_cassette, evaluation_model
from .progprompt import _eval_app
from .progress import episode_progress
from .render import input_files

DEFAULT_MODEL = "llamacpp:qwen2.5-coder-1.5b"

eval_app = _eval_app()


def _cell(values: Sequence[float]) -> str:
    return f"{values[0]:.2f}" if len(values) == 1 else str(stat(values))


def tabletop_table(episodes: Sequence[Episode], title: str) -> Table:
    """Per task and setting: SR, Exec, Plan SR (mean ± std over runs), steps, and the first failed step (or
    else the first goal condition left unmet)."""
    table = Table(title=title)
    for column in ("#", "task", "distractors", "SR", "Exec", "Plan SR", "steps", "what went wrong"):
        table.add_column(column)
    for _, rows in by_task(episodes):
        first = rows[0]
        added = first.details.get("distractor_objects", [])
        failures = [f for r in rows for f in r.details.get("failures", [])] or [
            f"not {m}" for r in rows for m in r.details.get("missing", [])]
        table.add_row(str(first.details.get("task_index", "")), first.instruction,
                      ", ".join(added) if first.details.get("distractors") else "none",
                      *(_cell([r.metrics[m] for r in rows]) for m in TABLETOP_METRICS),
                      str(round(sum(r.details.get("attempted", 0) for r in rows) / len(rows), 1)),
                      escape(failures[0][:70]) + (f" (+{len(failures) - 1})" if len(failures) > 1 else "")
                      if failures else "")
    return table


@eval_app.command("tabletop")
def eval_tabletop(
    tasks: Annotated[Path, typer.Option("--tasks", help="Tabletop task file (JSON; see docs/tabletop.md).")],
    model: Annotated[str, typer.Option("--model", help="Model URI.")] = DEFAULT_MODEL,
    runs: Annotated[int, typer.Option(help="Runs per task and setting (layout seed: --seed + run).")] = 1,
    seed: Annotated[int, typer.Option(help="Seed of the first run's layouts (and of decoding).")] = 0,
    out: Annotated[Path | None, typer.Option(help="Output folder (episodes.jsonl); reruns resume.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="End with one JSON line of the scores.")] = False,
    threads: ThreadsOpt = None,
    base_url: BaseUrlOpt = None,
    cassette: Annotated[Path | None, typer.Option(help="Record/replay LLM calls in this file.")] = None,
    cassette_mode: Annotated[str, typer.Option("--cassette-mode", help="replay, record or auto.")] = "replay",
    limit: Annotated[int | None, typer.Option(help="Evaluate only the first N tasks of the file.")] = None,
    examples: Annotated[int, typer.Option("--examples", help="Number of example plans in the prompt.")] = 3,
    slip: Annotated[float, typer.Option(help="Probability that a grasp slips (seeded).")] = 0.0,
    no_grammar: Annotated[bool, typer.Option("--no-grammar", help="Decode without the grammar.")] = False,
    executor: ExecutorOpt = "local",
    jobs: JobsOpt = 1,
    ray_address: RayAddressOpt = None,
) -> None:
    """Evaluate ProgPrompt's tabletop variant: each task with and without its distractors; SR / Exec / Plan SR."""
    if runs < 1:
        raise SituatedError(f"--runs must be >= 1, got {runs}")
    if limit is not None and limit < 1:
        raise SituatedError(f"--limit must be >= 1, got {limit}")
    if not 0.0 <= slip <= 1.0:
        raise SituatedError(f"--slip must lie in [0, 1], got {slip}")
    check_counts(("--examples", examples, 0), ("--threads", threads, 1), ("--jobs", jobs, 1))
    all_tasks = load_tabletop_tasks(tasks)
    chosen = all_tasks[:limit] if limit is not None else all_tasks
    out = out or Path("runs") / f"tabletop-{model.replace(':', '_').replace('/', '_')}"
    config = tabletop_config(all_tasks, model=model, base_url=base_url, planner="progprompt_tabletop",
                             examples=examples, example_plans=fingerprint(dict(TABLETOP_EXAMPLES)),
                             grammar=not no_grammar)
    check_layouts(tabletop_cases(chosen), runs, seed)  # objects that cannot be placed: before loading a model
    check_cassette(cassette, cassette_mode, input_files(tasks))
    err = Console(stderr=True)
    TabletopPrompt(None, n_examples=examples, seed=seed)  # bad settings (too many examples) fail here, at once
    runner, spec = evaluation_model(model, executor=executor, jobs=jobs, ray_address=ray_address, cassette=cassette,
                                    cassette_mode=cassette_mode, threads=threads, base_url=base_url, console=err)
    job = TabletopJob(spec, n_examples=examples, grammar=not no_grammar, seed=seed, slip_probability=slip)
    with episode_progress(err, f"tabletop × {runs}", quiet=as_json) as on_progress:
        episodes = evaluate_tabletop_job(chosen, job, runner, runs=runs, out=out, config=config,
                                         on_progress=on_progress)
    console = Console(highlight=False)
    console.print(tabletop_table(episodes, f"ProgPrompt tabletop with {model} ({runs} run{'s' if runs > 1 else ''})"))
    summary = tabletop_summary(episodes)
    console.print(f"SR {summary['sr']:.2f}  Exec {summary['exec']:.2f}  Plan SR {summary['plan_sr']:.2f}  → {out}")
    if as_json:
        print(json.dumps(summary))

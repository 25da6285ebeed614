"""`situated eval tabletop`: ProgPrompt's real-robot tasks in the simulated arm's world (SR / Exec / Plan SR), each
task with and without its distractors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ..eval.report.terminal import tabletop_line, tabletop_table
from ..eval.settings import check_counts, settings_from
from ..eval.systems.tabletop_episodes import tabletop_summary
from ..eval.systems.tabletop_run import TabletopSettings, prepare_tabletop
from .models import BaseUrlOpt, CommandModels, ExecutorOpt, JobsOpt, RayAddressOpt, ThreadsOpt
from .progprompt import _eval_app
from .progress import episode_progress

DEFAULT_MODEL = "llamacpp:qwen2.5-coder-1.5b"

eval_app = _eval_app()

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
    check_counts(("--threads", threads, 1), ("--jobs", jobs, 1))
    run = prepare_tabletop(settings_from(TabletopSettings, locals()), settings_from(CommandModels, locals()))
    with episode_progress(Console(stderr=True), f"tabletop × {runs}", quiet=as_json) as on_progress:
        episodes = run.run(on_progress=on_progress)
    console = Console(highlight=False)
    console.print(tabletop_table(episodes, f"ProgPrompt tabletop with {model} ({runs} run{'s' if runs > 1 else ''})"))
    summary = tabletop_summary(episodes)
    console.print(f"{tabletop_line(summary)}  → {run.out}")
    if as_json:
        print(json.dumps(summary))

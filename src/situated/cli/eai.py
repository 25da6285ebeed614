"""`situated eval eai`: the Embodied Agent Interface's VirtualHome action sequencing, scored by EAI's evaluator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

from rich.console import Console
from typer import Option

from ..eval.report.terminal import eai_table
from ..eval.settings import check_counts, settings_from
from ..eval.systems.eai_run import EaiSettings, prepare_eai
from .models import BaseUrlOpt, CommandModels, ExecutorOpt, JobsOpt, RayAddressOpt, ThreadsOpt
from .progprompt import DEFAULT_MODEL, eval_app
from .progress import episode_progress

TaskOpt = Annotated[str, Option("--task", help="EAI task: action_sequencing.")]
ModelOpt = Annotated[str, Option("--model", help="Model URI.")]
ProtocolOpt = Annotated[str, Option("--protocol", help=(
    "1.0.5 (name+id answers, this environment's evaluator) or 1.0.4 (names only, the published table; needs "
    "benchmarks/eai_setup_104.sh)."))]
RepairsOpt = Annotated[int, Option(help=(
    "0: open loop, the benchmark's own setting; N > 0: grounded, rewrites checked on a private copy of the scene "
    "(beyond the benchmark)."))]
ApproachOpt = Annotated[bool, Option("--approach", help=(
    "A grammar that lets the model act only on objects it walked to first or grabbed (the prompt's own rule; with "
    "--repairs: the first answer, not the rewrites)."))]
HintsOpt = Annotated[bool, Option("--hints", help=(
    "With --repairs: the private scene also inserts the steps a failing step needs (WALK, TURNTO, OPEN ...) and "
    "names the action that makes each unmet goal hold."))]
ShotsOpt = Annotated[int, Option("--shots", help=(
    "Project-written worked examples (0-2) before each prompt, as earlier turns; 0: EAI's prompt alone, as "
    "published."))]
AlsoOpt = Annotated[str | None, Option("--also-score", help=(
    "Also score the same answers, rewritten for the other protocol, with its evaluator (1.0.4: names only, the "
    "published table's evaluator; no model call)."))]
LimitOpt = Annotated[int | None, Option(help="Only the first N of the 305 scored tasks.")]
CassetteOpt = Annotated[Path | None, Option(help="Record/replay LLM calls in this file.")]
CassetteModeOpt = Annotated[str, Option("--cassette-mode", help="replay, record or auto.")]
OutOpt = Annotated[Path | None, Option(help="Output folder (results store); reruns resume.")]
SeedOpt = Annotated[int, Option(help="Seed.")]
JsonOpt = Annotated[bool, Option("--json", help="End with one JSON line of EAI's metrics.")]


@eval_app.command("eai")
def eval_eai(
    task: TaskOpt = "action_sequencing", model: ModelOpt = DEFAULT_MODEL, protocol: ProtocolOpt = "1.0.5",
    repairs: RepairsOpt = 0, approach: ApproachOpt = False, hints: HintsOpt = False, shots: ShotsOpt = 0,
    also_score: AlsoOpt = None, limit: LimitOpt = None, base_url: BaseUrlOpt = None, threads: ThreadsOpt = None,
    cassette: CassetteOpt = None, cassette_mode: CassetteModeOpt = "replay", out: OutOpt = None, seed: SeedOpt = 0,
    executor: ExecutorOpt = "local", jobs: JobsOpt = 1, ray_address: RayAddressOpt = None, as_json: JsonOpt = False,
) -> None:
    """Evaluate a model on EAI's VirtualHome action sequencing with EAI's own evaluator (SR, ESR, errors)."""
    check_counts(("--threads", threads, 1), ("--jobs", jobs, 1))
    settings = settings_from(EaiSettings, locals())
    run = prepare_eai(settings, settings_from(CommandModels, locals()))
    with episode_progress(Console(stderr=True), f"EAI {protocol} {settings.title}", quiet=as_json) as progress:
        outcome = run.run(on_progress=progress)
    m = outcome.verdict.metrics
    rows = [(f"{protocol} (the run's)", m)]
    if outcome.also is not None:
        rows.append((f"{outcome.also.protocol} (same answers, rewritten)", outcome.also.verdict.metrics))
    console = Console(highlight=False)
    console.print(eai_table(rows, f"EAI action sequencing, {settings.title}, {model} ({m['tasks']} tasks)"))
    summary = outcome.summary(settings, run.out)
    console.print(f"EAI's evaluator: SR {m['sr']}  ESR {m['esr']}  ({m['evaluator']}; {summary['calls']} model "
                  f"calls, {summary['tokens']} generated tokens) → {run.out}")
    if outcome.also is not None:
        a = outcome.also.verdict.metrics
        console.print(f"The same answers under {outcome.also.protocol}: SR {a['sr']}  ESR {a['esr']}  "
                      f"({a['evaluator']}; {outcome.also.kept} answers not rewritable, scored as written)")
    if as_json:
        print(json.dumps(summary))

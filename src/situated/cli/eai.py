"""`situated eval eai`: the Embodied Agent Interface's VirtualHome action sequencing, scored by EAI's evaluator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ..errors import SituatedError
from .models import BaseUrlOpt, ExecutorOpt, JobsOpt, RayAddressOpt, ThreadsOpt, check_cassette, evaluation_model
from .progprompt import DEFAULT_MODEL, eval_app
from .progress import episode_progress

TASKS = ("action_sequencing",)
SHOTS_CONTEXT = 16384
"""Context of an embedded model when worked examples precede the prompt (`--shots`)."""
BREAKDOWN = ("parsing", "hallucination", "predicate_argument_number", "wrong_order", "missing_step", "affordance",
             "additional_step")


@eval_app.command("eai")
def eval_eai(
    task: Annotated[str, typer.Option("--task", help="EAI task: action_sequencing.")] = "action_sequencing",
    model: Annotated[str, typer.Option("--model", help="Model URI.")] = DEFAULT_MODEL,
    protocol: Annotated[str, typer.Option(
        "--protocol", help="1.0.5 (name+id answers, this environment's evaluator) or 1.0.4 (names only, the "
                           "published table; needs benchmarks/eai_setup_104.sh).")] = "1.0.5",
    repairs: Annotated[int, typer.Option(
        help="0: open loop, the benchmark's own setting; N > 0: grounded, rewrites checked on a private copy of "
             "the scene (beyond the benchmark).")] = 0,
    approach: Annotated[bool, typer.Option(
        "--approach", help="A grammar that lets the model act only on objects it walked to first or grabbed "
                           "(the prompt's own rule; with --repairs: the first answer, not the rewrites).")] = False,
    hints: Annotated[bool, typer.Option(
        "--hints", help="With --repairs: the private scene also inserts the steps a failing step needs (WALK, "
                        "TURNTO, OPEN ...) and names the action that makes each unmet goal hold.")] = False,
    shots: Annotated[int, typer.Option(
        "--shots", help="Project-written worked examples (0-2) before each prompt, as earlier turns; 0: EAI's "
                        "prompt alone, as published.")] = 0,
    also_score: Annotated[str | None, typer.Option(
        "--also-score", help="Also score the same answers, rewritten for the other protocol, with its evaluator "
                             "(1.0.4: names only, the published table's evaluator; no model call).")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N of the 305 scored tasks.")] = None,
    base_url: BaseUrlOpt = None,
    threads: ThreadsOpt = None,
    cassette: Annotated[Path | None, typer.Option(help="Record/replay LLM calls in this file.")] = None,
    cassette_mode: Annotated[str, typer.Option("--cassette-mode", help="replay, record or auto.")] = "replay",
    out: Annotated[Path | None, typer.Option(help="Output folder (results store); reruns resume.")] = None,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    executor: ExecutorOpt = "local",
    jobs: JobsOpt = 1,
    ray_address: RayAddressOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="End with one JSON line of EAI's metrics.")] = False,
) -> None:
    """Evaluate a model on EAI's VirtualHome action sequencing with EAI's own evaluator (SR, ESR, errors)."""
    from ..datasets.eai_actions import check_protocol, load_tasks
    from ..eval.systems.eai_episodes import eai_config, evaluate_eai, mode, rescore

    if task not in TASKS:
        raise SituatedError(f"--task must be one of {', '.join(TASKS)}, not {task!r}")
    check_protocol(protocol)
    if also_score is not None:
        check_protocol(also_score)
        if also_score == protocol:
            raise SituatedError(f"--also-score {also_score} is the run's own --protocol")
        from ..eval.systems.eai_evaluator import evaluator_python

        evaluator_python(also_score)   # before any model call: says how to set up a missing evaluator
    if limit is not None and limit < 1:
        raise SituatedError(f"--limit must be >= 1, got {limit}")
    if repairs < 0:
        raise SituatedError(f"--repairs must be >= 0, got {repairs}")
    if hints and repairs == 0:
        raise SituatedError("--hints come from the grounded check: give --repairs N (N > 0) with it")
    from ..planners.eai_examples import EXAMPLES

    if not 0 <= shots <= len(EXAMPLES):
        raise SituatedError(f"--shots must be between 0 and {len(EXAMPLES)}, got {shots}")
    all_tasks = load_tasks()
    tasks = all_tasks[:limit] if limit is not None else all_tasks
    kind = {(0, 0): "open", (0, 1): "approach", (1, 0): "grounded", (1, 1): "grounded-approach"}[
        (int(repairs > 0), int(approach))]
    kind += "-hints" if hints else ""
    kind += f"-{shots}shot" if shots else ""
    label = f"eai-{protocol}-{kind}-{model.replace(':', '_').replace('/', '_')}"
    out = out or Path("runs") / label
    err = Console(stderr=True)
    # the examples add about 4,600 tokens to prompts of up to about 3,600 (+ the answer): more than 8,192
    check_cassette(cassette, cassette_mode)
    runner, spec = evaluation_model(model, executor=executor, jobs=jobs, ray_address=ray_address, cassette=cassette,
                                    cassette_mode=cassette_mode, threads=threads, base_url=base_url, console=err,
                                    n_ctx=SHOTS_CONTEXT if shots else None)
    config = eai_config(all_tasks, model=model, base_url=base_url, task=task, seed=seed)
    title = mode(repairs) + (" + approach" if approach else "") + (" + hints" if hints else "") \
        + (f", {shots}-shot" if shots else "")
    with episode_progress(err, f"EAI {protocol} {title}", quiet=as_json) as on_progress:
        episodes, verdict = evaluate_eai(tasks, spec, protocol, repairs=repairs, out=out, config=config,
                                         workdir=out / "evaluator", on_progress=on_progress, seed=seed,
                                         approach=approach, hints=hints, shots=shots, executor=runner)
    m = verdict.metrics
    also = rescore(episodes, tasks, protocol, also_score, workdir=out / f"evaluator-{also_score}") \
        if also_score is not None else None
    table = Table(title=f"EAI action sequencing, {title}, {model} ({m['tasks']} tasks)")
    for column in ("evaluator", "SR %", "ESR %", *(name.replace("_", " ") + " %" for name in BREAKDOWN)):
        table.add_column(column, justify="right")
    rows = [(f"{protocol} (the run's)", m)]
    if also is not None:
        rows.append((f"{also.protocol} (same answers, rewritten)", also.verdict.metrics))
    for name, metrics in rows:
        table.add_row(name, *(("-" if metrics.get(k) is None else f"{metrics[k]:.1f}")
                              for k in ("sr", "esr", *BREAKDOWN)))
    console = Console(highlight=False)
    console.print(table)
    tokens = sum(e.cost.tokens for e in episodes)
    calls = sum(e.cost.calls for e in episodes)
    console.print(f"EAI's evaluator: SR {m['sr']}  ESR {m['esr']}  ({m['evaluator']}; {calls} model calls, "
                  f"{tokens} generated tokens) → {out}")
    if also is not None:
        a = also.verdict.metrics
        console.print(f"The same answers under {also.protocol}: SR {a['sr']}  ESR {a['esr']}  ({a['evaluator']}; "
                      f"{also.kept} answers not rewritable, scored as written)")
    if as_json:
        print(json.dumps({**m, "mode": mode(repairs), "approach": approach, "hints": hints, "shots": shots,
                          "model": model,
                          "calls": calls, "tokens": tokens,
                          "prompt_tokens": sum(e.cost.prompt_tokens for e in episodes),
                          "seconds": round(sum(e.cost.seconds for e in episodes), 1), "out": str(out),
                          **({"also_scored": {**also.verdict.metrics, "kept_as_written": also.kept}}
                             if also is not None else {})}))

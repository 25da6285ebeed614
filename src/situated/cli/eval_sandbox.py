"""`situated eval sandbox`: run scripted sandbox sessions and report expectations met, per-utterance model time
(p50/p95), skill failures and model cost (the library function is `situated.sandbox.evaluation.evaluate`)."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from . import app
from .models import BaseUrlOpt, ThreadsOpt, open_model

DEFAULT_MODEL = "llamacpp:qwen2.5-coder-1.5b"


def _eval_group() -> typer.Typer:
    """The `eval` command group (made here if no other module has made it yet)."""
    for group in app.registered_groups:
        if group.name == "eval" and group.typer_instance is not None:
            return group.typer_instance
    group = typer.Typer(name="eval", help="Evaluate planners on benchmark data.", no_args_is_help=True)
    app.add_typer(group, name="eval")
    return group


def _session_line(result: Any) -> str:
    times = result.utterance_seconds
    return (f"{result.name} ({result.scene}): {result.met}/{result.expectations} expectations met, "
            f"{result.skill_failures} skill failures, {result.model_calls} model calls, "
            f"max {max(times, default=0.0):.1f} s per utterance"
            + "".join(f"\n  not met: {u}" for u in result.unmet))


@_eval_group().command("sandbox")
def eval_sandbox(
    sessions: Annotated[Path, typer.Option("--sessions", help="A folder of .session files (or one file).")],
    model: Annotated[str, typer.Option("--model", help="Model URI.")] = DEFAULT_MODEL,
    threads: ThreadsOpt = None,
    base_url: BaseUrlOpt = None,
    cassette: Annotated[Path | None, typer.Option("--cassette", help="Record/replay model calls here.")] = None,
    cassette_mode: Annotated[str, typer.Option("--cassette-mode", help="replay, record or auto.")] = "replay",
    scene: Annotated[str, typer.Option("--scene", help="Scene of files that name none.")] = "gift_bag",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the scenes' layout.")] = 0,
    work: Annotated[Path | None, typer.Option("--work", help="Keep the sessions' libraries here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="End with one JSON line: totals and sessions.")] = False,
    condition: Annotated[str | None, typer.Option("--condition", help="teaching or no-teaching for every session "
                                                  "(default: each file's '# condition:', else teaching).")] = None,
) -> None:
    """Run situated-session/1 files and report expectations met, latency, skill failures and model cost."""
    from ..sandbox.evaluation import evaluate, session_files
    from ..sandbox.study import one_condition

    started = time.perf_counter()
    condition = None if condition is None else one_condition(condition)
    paths = session_files(sessions)
    llm = open_model(model, cassette=cassette, cassette_mode=cassette_mode, threads=threads, base_url=base_url,
                     conversation=True)
    with tempfile.TemporaryDirectory(prefix="situated-sandbox-") as temp:
        folder = work or Path(temp)
        folder.mkdir(parents=True, exist_ok=True)
        report = evaluate(paths, llm, folder, default_scene=scene, seed=seed, model=model, started=started,
                          on_session=lambda r: print(_session_line(r), flush=True), condition=condition)
    totals = report.totals()
    print(f"{totals['met']}/{totals['expectations']} expectations met over {totals['sessions']} sessions; "
          f"model time per utterance p50 {totals['latency_p50']} s, p95 {totals['latency_p95']} s (after each "
          f"session's first: p50 {totals['latency_later_p50']} s, p95 {totals['latency_later_p95']} s); first "
          f"utterance {totals['first_utterance_seconds']} s; {totals['skill_failures']} skill failures; "
          f"{totals['model_calls']} model calls, {totals['prompt_tokens'] + totals['completion_tokens']} tokens")
    if as_json:
        print(json.dumps(report.to_dict()))

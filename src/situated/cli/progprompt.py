"""`situated plan` (one task on a scene) and `situated eval progprompt` (a split: SR / GCR / Exec)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from ..actions import PROGPROMPT_SPACE
from ..envs.household import HouseholdEnv
from ..errors import DataError, SituatedError
from ..eval.metrics import Stat
from ..eval.runner import EPISODES_FILE, episodes_by_task, evaluate, read_episodes
from ..interpreter import Limits
from ..llm.base import LLM
from ..planners.assertion_check import ASSERT_CHECKS, assertion_check
from ..planners.grounded import DEFAULT_REPAIRS, simulator_verifier
from ..planners.langprompt import LangPromptPlanner
from ..planners.progprompt import ABLATIONS, ProgPromptPlanner
from ..planners.replan import execute
from ..program import format as format_program
from . import app
from .models import BaseUrlOpt, ThreadsOpt, open_model
from .render import TraceWriter

DEFAULT_MODEL = "llamacpp:qwen2.5-coder-1.5b"
DEFAULT_EXAMPLES_DIR = Path("examples/plans")


def _eval_app() -> typer.Typer:
    """The `eval` command group, shared with other systems' evaluation commands."""
    for group in app.registered_groups:
        if group.name == "eval" and group.typer_instance is not None:
            return group.typer_instance
    sub = typer.Typer(name="eval", help="Evaluate planners on benchmark data.", no_args_is_help=True)
    app.add_typer(sub, name="eval")
    return sub


eval_app = _eval_app()


def _examples(path: Path | None, data_dir: Path | None = None) -> dict[str, str]:
    from ..datasets.progprompt import load_example_plans

    if path is None:
        shared = data_dir / "pythonic_plans" / "train_complete_plan_set.json" if data_dir else None
        path = shared if shared is not None and shared.is_file() else DEFAULT_EXAMPLES_DIR
        if not path.exists():
            raise DataError(f"no example plans at {path}; give --examples-file")
    return load_example_plans(path)


def _planner_factory(llm: LLM, examples: dict[str, str], *, n_examples: int, ablation: str, grammar: bool,
                     langprompt: bool, seed: int, repairs: int = 0) -> Callable[[], Any]:
    if ablation not in ABLATIONS:
        raise SituatedError(f"--ablation must be one of {', '.join(ABLATIONS)}, not {ablation!r}")

    def make() -> Any:
        if langprompt:
            return LangPromptPlanner(llm, PROGPROMPT_SPACE, examples, n_examples=n_examples, seed=seed)
        return ProgPromptPlanner(llm, PROGPROMPT_SPACE, examples, n_examples=n_examples, seed=seed,
                                 ablation=ablation, constrained=grammar, repairs=repairs)

    make()  # fail early on bad settings (too many examples, ...)
    return make


def _goals(tasks_file: Path | None, task: str) -> list[str] | None:
    if tasks_file is None:
        return None
    try:
        rows = json.loads(tasks_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{tasks_file}: cannot read tasks ({exc})") from None
    if not isinstance(rows, list):
        raise DataError(f"{tasks_file}: expected a list of {{'task', 'goal'}} objects")
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("task"), str):
            raise DataError(f"{tasks_file}: item {i}: expected an object with a 'task' string")
        if row["task"].strip().lower() == task.strip().lower():
            goal = row.get("goal", [])
            if not isinstance(goal, list) or not all(isinstance(g, str) for g in goal):
                raise DataError(f"{tasks_file}: item {i} field 'goal': expected a list of condition strings")
            return goal
    return None


@app.command("plan")
def plan_command(
    task: Annotated[str, typer.Argument(help="The task, e.g. \"microwave salmon\".")],
    scene: Annotated[Path, typer.Option("--scene", help="A VirtualHome-format scene graph (JSON).")],
    model: Annotated[str, typer.Option("--model", help="Model URI.")] = DEFAULT_MODEL,
    base_url: BaseUrlOpt = None,
    threads: ThreadsOpt = None,
    tasks: Annotated[Path | None, typer.Option("--tasks", help="Tasks file with goal conditions.")] = None,
    examples_file: Annotated[Path | None, typer.Option(
        "--examples-file", help="Example plans (JSON plan set or folder).")] = None,
    examples: Annotated[int, typer.Option("--examples", help="Number of example plans in the prompt.")] = 3,
    ablation: Annotated[str, typer.Option(help="full, no-comments, no-feedback or neither.")] = "full",
    no_grammar: Annotated[bool, typer.Option("--no-grammar", help="Decode without the grammar.")] = False,
    assert_check: Annotated[str, typer.Option("--assert-check", help="symbolic or llm.")] = "symbolic",
    replan: Annotated[int, typer.Option(help="Replan up to N times after a failed action.")] = 0,
    repairs: Annotated[int, typer.Option(
        help="Grounded decoding: rewrite the plan up to N times from an action a private copy of the scene "
             "rejects (0: the paper's open-loop decoding).")] = DEFAULT_REPAIRS,
    cassette: Annotated[Path | None, typer.Option(help="Record/replay LLM calls in this file.")] = None,
    cassette_mode: Annotated[str, typer.Option("--cassette-mode", help="replay, record or auto.")] = "auto",
    seed: Annotated[int, typer.Option(help="Seed for grounding and example sampling.")] = 0,
    trace: Annotated[Path | None, typer.Option("--trace", help="Write the trace here as JSON lines.")] = None,
) -> None:
    """Write a plan for TASK with an LLM, run it on the scene and show which goal conditions hold."""
    console = Console(highlight=False)
    goals = _goals(tasks, task)
    env = HouseholdEnv.from_file(scene, seed=seed)
    env.reset()
    objects = env.object_names()
    plans = _examples(examples_file)
    llm = open_model(model, cassette=cassette, cassette_mode=cassette_mode, threads=threads, base_url=base_url)
    planner = _planner_factory(llm, plans, n_examples=examples, ablation=ablation, grammar=not no_grammar,
                               langprompt=False, seed=seed, repairs=repairs)()
    check = assertion_check(assert_check, llm)
    verify = simulator_verifier(HouseholdEnv.from_file(scene, seed=seed)) if repairs > 0 else None
    with console.status("planning..."):
        result = planner.plan(task, objects, affordances=env.object_properties(), verify=verify)
    console.print(f"[bold]plan[/bold] ({result.tokens} tokens, {result.seconds:.1f} s)")
    console.print(escape(format_program(result.program)), highlight=False)
    for problem in result.problems:
        console.print(f"[yellow]dropped: {escape(problem)}[/yellow]")
    for rejected in result.rejected:
        console.print(f"[yellow]rewritten from {escape(rejected)}[/yellow]")
    before = env.conditions()
    writer = TraceWriter(console, trace)
    try:
        done = execute(result, env, planner=planner, task_name=task, objects=objects, replan=replan,
                       check=check, limits=Limits(), affordances=env.object_properties(), verify=verify)
        for event in done.trace:
            writer(event)
    finally:
        writer.close()
    after = env.conditions()
    run_trace = done.trace
    console.print(f"\n{run_trace.executed}/{run_trace.attempted} steps executed "
                  f"(Exec {run_trace.exec_rate:.2f})"
                  + (f", {done.replans} replans" if done.replans else ""))
    if goals is None:
        for cond in sorted(after - before):
            console.print(f"  [green]+ {escape(cond)}[/green]")
        return
    held = [g for g in goals if g in after]
    for goal in goals:
        console.print(f"  {'[green]✓' if goal in after else '[red]✗'} {escape(goal)}[/]")
    console.print(f"goal conditions: {len(held)}/{len(goals)}")


def _stat_text(values: list[float]) -> str:
    mean = sum(values) / len(values)
    return str(Stat(mean, (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5))


@eval_app.command("progprompt")
def eval_progprompt(
    data: Annotated[Path, typer.Option("--data", help="ProgPrompt data directory (shared/data/progprompt).")],
    split: Annotated[str, typer.Option("--split", help="env1, env2, or a split with --initial-graph.")],
    initial_graph: Annotated[Path | None, typer.Option("--initial-graph",
                                                       help="Initial graph for splits without one.")] = None,
    model: Annotated[str, typer.Option("--model", help="Model URI.")] = DEFAULT_MODEL,
    base_url: BaseUrlOpt = None,
    threads: ThreadsOpt = None,
    runs: Annotated[int, typer.Option(help="Runs per task.")] = 1,
    limit: Annotated[int | None, typer.Option(help="Evaluate only the first N tasks of the split.")] = None,
    ablation: Annotated[str, typer.Option(help="full, no-comments, no-feedback or neither.")] = "full",
    examples: Annotated[int, typer.Option("--examples", help="Number of example plans in the prompt.")] = 3,
    examples_file: Annotated[Path | None, typer.Option(
        "--examples-file", help="Example plans (default: the data's plan set).")] = None,
    assert_check: Annotated[str, typer.Option("--assert-check", help="symbolic or llm.")] = "symbolic",
    replan: Annotated[int, typer.Option(help="Replan up to N times after a failed action.")] = 0,
    repairs: Annotated[int, typer.Option(
        help="Grounded decoding: rewrite the plan up to N times from an action a private copy of the scene "
             "rejects (0: the paper's open-loop decoding).")] = DEFAULT_REPAIRS,
    no_grammar: Annotated[bool, typer.Option("--no-grammar", help="Decode without the grammar.")] = False,
    langprompt: Annotated[bool, typer.Option("--langprompt", help="Run the LangPrompt baseline.")] = False,
    cassette: Annotated[Path | None, typer.Option(help="Record/replay LLM calls in this file.")] = None,
    cassette_mode: Annotated[str, typer.Option("--cassette-mode", help="replay, record or auto.")] = "replay",
    out: Annotated[Path | None, typer.Option(help="Output folder (episodes.jsonl); reruns resume.")] = None,
    jobs: Annotated[int, typer.Option(help="Parallel episodes (servers only; 1 for an embedded model).")] = 1,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="End with one JSON line of the scores.")] = False,
) -> None:
    """Evaluate ProgPrompt (or LangPrompt) on a split: a per-task table and SR / GCR / Exec over runs."""
    from ..datasets.progprompt import load_split

    if assert_check not in ASSERT_CHECKS:
        raise SituatedError(f"--assert-check must be one of {', '.join(ASSERT_CHECKS)}, not {assert_check!r}")
    if jobs > 1 and model.startswith("llamacpp:"):
        raise SituatedError("--jobs must be 1 with an embedded model (one model per process)")
    if langprompt and replan:
        raise SituatedError("--replan needs ProgPrompt (LangPrompt plans are not programs)")
    if repairs < 0:
        raise SituatedError(f"--repairs must be >= 0, got {repairs}")
    repairs = 0 if langprompt else repairs  # LangPrompt is the paper's open-loop baseline
    tasks = load_split(data, split, initial_graph=initial_graph)
    if limit is not None:
        if limit < 1:
            raise SituatedError(f"--limit must be >= 1, got {limit}")
        tasks = tasks[:limit]
    plans = _examples(examples_file, data)
    variant = "langprompt" if langprompt else (f"progprompt-{ablation}{'-nogrammar' if no_grammar else ''}"
                                               f"{f'-grounded{repairs}' if repairs else ''}")
    out = out or Path("runs") / f"{split}-{variant}-{model.replace(':', '_').replace('/', '_')}"
    settings = {"model": model, "planner": "langprompt" if langprompt else "progprompt", "ablation": ablation,
                "examples": examples, "grammar": not no_grammar, "split": split, "repairs": repairs}
    err = Console(stderr=True)
    llm = open_model(model, cassette=cassette, cassette_mode=cassette_mode, threads=threads, base_url=base_url,
                     console=err)
    factory = _planner_factory(llm, plans, n_examples=examples, ablation=ablation, grammar=not no_grammar,
                               langprompt=langprompt, seed=seed, repairs=repairs)
    already = len(read_episodes(out / EPISODES_FILE))
    with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeRemainingColumn(),
                  console=err, transient=True) as progress:
        total = len(tasks) * runs
        bar = progress.add_task(f"{split} × {runs}", total=total, completed=min(already, total))

        def on_progress(done: int, total: int, record: dict[str, Any]) -> None:
            progress.update(bar, completed=done, description=f"{split}: {record['task']}")

        summary = evaluate(tasks, factory, runs=runs, out_dir=out, jobs=jobs, assert_check=assert_check,
                           replan=replan, seed=seed, on_progress=on_progress, settings=settings)
    records = [r for r in read_episodes(out / EPISODES_FILE) if r["run"] < runs
               and any(t.index == r["task_index"] for t in tasks)]
    console = Console(highlight=False)
    table = Table(title=f"{variant} on {split} with {model} ({runs} run{'s' if runs > 1 else ''})")
    for col in ("#", "task", "SR", "GCR", "Exec", "steps", "unknown", "dropped"):
        table.add_column(col)
    for name, rows in episodes_by_task(records):
        table.add_row(str(rows[0]["task_index"]), name, _stat_text([float(r["success"]) for r in rows]),
                      _stat_text([r["gcr"] for r in rows]), _stat_text([r["exec"] for r in rows]),
                      str(round(sum(r["attempted"] for r in rows) / len(rows), 1)),
                      str(sum(r["unknown"] for r in rows)), str(sum(r["dropped"] for r in rows)))
    console.print(table)
    unknown = sum(r["unknown"] for r in records)
    dropped = sum(r["dropped"] for r in records)
    console.print(f"SR {summary.sr}  GCR {summary.gcr}  Exec {summary.exec}  "
                  f"unknown actions/objects {unknown}  dropped calls {dropped}  → {out / EPISODES_FILE}")
    if as_json:
        d = summary.to_dict()
        print(json.dumps({"sr": d["sr"], "sr_std": d["sr_std"], "gcr": d["gcr"], "exec": d["exec"],
                          "tasks": d["tasks"], "runs": d["runs"], "gcr_std": d["gcr_std"],
                          "exec_std": d["exec_std"], "precision": d["precision"], "unknown": unknown,
                          "dropped": dropped, "replans": sum(r["replans"] for r in records),
                          "repairs": sum(r.get("repairs", 0) for r in records),
                          "tokens": sum(r["tokens"] for r in records), "split": split, "model": model,
                          "variant": variant, "out": str(out)}))

"""`situated plan` (one task on a scene) and `situated eval progprompt` (a split: SR / GCR / Exec)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from typer import Option

from ..eval.report.terminal import household_line, household_table
from ..eval.settings import check_counts, settings_from
from ..eval.systems.household_run import HouseholdSettings, prepare_household
from ..eval.systems.scene_plan import PlannedRun, PlanSettings, check_render, plan_on_scene
from ..planners.feedback import DEFAULT_REPAIRS
from ..program import format_program
from . import app
from .models import BaseUrlOpt, CommandModels, ExecutorOpt, JobsOpt, RayAddressOpt, ThreadsOpt
from .progress import episode_progress
from .render import ForceOpt, TraceWriter, check_outputs, input_files, print_changes, scene_file
from .tabletop_scene import save_render

DEFAULT_MODEL = "llamacpp:qwen2.5-coder-1.5b"
SHOWN_PROBLEMS = 20
"""Dropped lines listed after a plan (a model can write thousands of bad lines)."""
CASSETTE_HELP = "Record/replay LLM calls in this JSON-lines file (record and auto append to it)."
REPAIRS_HELP = ("Grounded decoding: rewrite the plan up to N times from an action a private copy of the scene "
                "rejects (0: the paper's open-loop decoding).")


def _eval_app() -> typer.Typer:
    """The `eval` command group, shared with other systems' evaluation commands."""
    for group in app.registered_groups:
        if group.name == "eval" and group.typer_instance is not None:
            return group.typer_instance
    sub = typer.Typer(name="eval", help="Evaluate planners on benchmark data.", no_args_is_help=True)
    app.add_typer(sub, name="eval")
    return sub


eval_app = _eval_app()

TaskArg = Annotated[str, typer.Argument(help="The task, e.g. \"microwave salmon\".")]
SceneOpt = Annotated[Path, Option("--scene", help="A VirtualHome-format scene graph (JSON), or tabletop:NAME|FILE for "
                                                  "a tabletop scene (gift_bag, fruit_bowl, sorting).")]
ModelOpt = Annotated[str, Option("--model", help="Model URI.")]
TasksOpt = Annotated[Path | None, Option("--tasks", help="Tasks file with goal conditions.")]
PlanExamplesFileOpt = Annotated[Path | None, Option("--examples-file", help="Example plans (JSON plan set or "
                                                                           "folder).")]
PlanExamplesOpt = Annotated[int, Option("--examples", min=0, help="Number of example plans in the prompt.")]
AblationOpt = Annotated[str, Option(help="full, no-comments, no-feedback or neither.")]
NoGrammarOpt = Annotated[bool, Option("--no-grammar", help="Decode without the grammar.")]
AssertCheckOpt = Annotated[str, Option("--assert-check", help="symbolic or llm.")]
PlanReplanOpt = Annotated[int, Option(min=0, help="Replan up to N times after a failed action.")]
PlanRepairsOpt = Annotated[int, Option(min=0, help=REPAIRS_HELP)]
PlanCassetteOpt = Annotated[Path | None, Option(help=CASSETTE_HELP)]
CassetteModeOpt = Annotated[str, Option("--cassette-mode", help="replay, record or auto.")]
PlanSeedOpt = Annotated[int, Option(help="Seed for grounding and example sampling.")]
TraceOpt = Annotated[Path | None, Option("--trace", help="Write the trace here as JSON lines.")]
RenderOpt = Annotated[Path | None, Option("--render", help="Tabletop: save the camera's final image (PNG).")]


@app.command("plan")
def plan_command(
    task: TaskArg, scene: SceneOpt, model: ModelOpt = DEFAULT_MODEL, base_url: BaseUrlOpt = None,
    threads: ThreadsOpt = None, tasks: TasksOpt = None, examples_file: PlanExamplesFileOpt = None,
    examples: PlanExamplesOpt = 3, ablation: AblationOpt = "full", no_grammar: NoGrammarOpt = False,
    assert_check: AssertCheckOpt = "symbolic", replan: PlanReplanOpt = 0, repairs: PlanRepairsOpt = DEFAULT_REPAIRS,
    cassette: PlanCassetteOpt = None, cassette_mode: CassetteModeOpt = "auto", seed: PlanSeedOpt = 0,
    trace: TraceOpt = None, render: RenderOpt = None, force: ForceOpt = False,
) -> None:
    """Write a plan for TASK with an LLM, run it on the scene and show which goal conditions hold."""
    check_counts(("--threads", threads, 1))
    inputs = input_files(scene_file(scene), tasks, examples_file)
    check_outputs([trace, render], [*inputs, *input_files(cassette)], force)
    models = settings_from(CommandModels, locals())
    models.check_cassette([*inputs, *(p for p in (trace, render) if p is not None)])
    check_render(scene, render)
    console = Console(highlight=False)
    done = plan_on_scene(settings_from(PlanSettings, locals()), models)
    _show_plan(console, done)
    with TraceWriter(console, trace) as writer:
        for event in done.trace:
            writer(event)
    _show_outcome(console, done)
    if done.opened is not None:
        save_render(done.opened, render, console)


def _show_plan(console: Console, done: PlannedRun) -> None:
    plan = done.plan
    seen = f" over what the camera sees: {', '.join(done.seen)}" if done.seen else ""
    console.print(f"[bold]plan[/bold] ({plan.tokens} tokens, {plan.seconds:.1f} s){seen}")
    console.print(escape(format_program(plan.program)), highlight=False)
    for problem in plan.problems[:SHOWN_PROBLEMS]:
        console.print(f"[yellow]dropped: {escape(problem)}[/yellow]")
    if len(plan.problems) > SHOWN_PROBLEMS:
        console.print(f"[yellow]dropped: {len(plan.problems) - SHOWN_PROBLEMS} more lines[/yellow]")
    for rejected in plan.rejected[:SHOWN_PROBLEMS]:
        console.print(f"[yellow]rewritten from {escape(rejected)}[/yellow]")


def _show_outcome(console: Console, done: PlannedRun) -> None:
    result = done.trace
    console.print(f"\n{result.executed}/{result.attempted} steps executed (Exec {result.exec_rate:.2f})"
                  + (f", {done.replans} replans" if done.replans else ""))
    if done.goals is None:
        print_changes(console, done.before, done.after, ended=done.ended_shown)
        return
    for text, held in done.goals:
        console.print(f"  {'[green]✓' if held else '[red]✗'} {escape(text)}[/]")
    console.print(f"goal conditions: {sum(held for _, held in done.goals)}/{len(done.goals)}")


DataOpt = Annotated[Path, Option("--data", help="ProgPrompt data directory (shared/data/progprompt).")]
SplitOpt = Annotated[str, Option("--split", help=(
    "env1, env2, apartment (the paper's test_unseen tasks in the project's apartment; for reporting only), or a "
    "split with --initial-graph."))]
InitialGraphOpt = Annotated[Path | None, Option("--initial-graph", help="Initial graph for splits without one.")]
RunsOpt = Annotated[int, Option(help="Runs per task.")]
LimitOpt = Annotated[int | None, Option(help="Evaluate only the first N tasks of the split.")]
ExamplesOpt = Annotated[str | None, Option("--examples", help=(
    "retrieved (default: the --k plans nearest to the task, by --retriever; never the task's own plan), fixed (the "
    "first --k plans, the paper's set-up; the default with --langprompt) or a number N (fixed, N plans)."))]
KOpt = Annotated[int | None, Option("--k", help="Example plans in the prompt (default 5 retrieved, 3 fixed).")]
RetrieverOpt = Annotated[str, Option("--retriever", help="--examples retrieved: minilm (sentence embeddings, int8 "
                                                         "ONNX) or bm25.")]
GoalsOpt = Annotated[bool, Option("--goals/--no-goals", help=(
    "Goal-aware grounded decoding: the model first states the task's goals as assertions; a plan that leaves one "
    "unmet on the private copy is continued."))]
SceneExamplesOpt = Annotated[bool | None, Option("--scene-examples/--any-examples", help=(
    "Choose the example plans for the task's scene first: those naming the fewest objects the scene lacks (none "
    "where the pool allows), in the fixed or retrieved order among equals; --any-examples: by nearness (or the "
    "fixed order) alone. Default: scene first with retrieved examples, not with fixed ones (the paper's)."))]
PreconditionsOpt = Annotated[bool, Option("--preconditions/--no-preconditions", help=(
    "Grounded decoding: before the model rewrites a call that fails on the private copy, search for the one or two "
    "steps over its objects (find, walk, open, ...) that let it run, and write them before it."))]
KeepStepsOpt = Annotated[bool, Option("--keep-steps/--no-keep-steps", help=(
    "Grounded decoding: where the model's rewrite of a failing call would give the task step up (a move, or the "
    "plan's end), search for the steps that let the call run instead and keep it."))]
OpenFirstOpt = Annotated[bool, Option("--open-first/--no-open-first", help=(
    "Grounded decoding: a call that fails for want of something opened (a closed container to put into or take "
    "out of) gets the steps that open it written before it, as --preconditions does for every failure. On by "
    "default (chosen on the development set)."))]
SkipDoneOpt = Annotated[bool, Option("--skip-done/--no-skip-done", help=(
    "Grounded decoding: a call whose effect already holds on the private copy (grabbing what is held, opening "
    "what is open) is dropped and the rest of the plan kept as written, instead of asking the model for another "
    "step there."))]
RoomWalksOpt = Annotated[bool, Option("--room-walks/--no-room-walks", help=(
    "Grounded decoding: before each move into another room, write a walk to that room (ProgPrompt's plans go room "
    "by room; VirtualHome leaves what the character carries in the room it walked out of). On by default."))]
PlanTokensOpt = Annotated[int | None, Option("--plan-tokens", help=(
    "Most tokens one plan may cost, repairs included (default 4 × the answer limit)."))]
ExamplesFileOpt = Annotated[Path | None, Option("--examples-file", help="Example plans (default: the data's plan "
                                                                        "set).")]
ReplanOpt = Annotated[int, Option(help="Replan up to N times after a failed action.")]
RepairsOpt = Annotated[int, Option(help=REPAIRS_HELP)]
LangPromptOpt = Annotated[bool, Option("--langprompt", help="Run the LangPrompt baseline.")]
CassetteOpt = Annotated[Path | None, Option(help="Record/replay LLM calls in this file.")]
OutOpt = Annotated[Path | None, Option(help="Output folder (episodes.jsonl); reruns resume.")]
SeedOpt = Annotated[int, Option(help="Seed.")]
JsonOpt = Annotated[bool, Option("--json", help="End with one JSON line of the scores.")]
TemperatureOpt = Annotated[float, Option("--temperature", help=(
    "Sample every model call at T, seeded by --seed, run and prompt (runs differ, a rerun repeats them); "
    "0 (default): greedy."))]


@eval_app.command("progprompt")
def eval_progprompt(
    data: DataOpt, split: SplitOpt, initial_graph: InitialGraphOpt = None, model: ModelOpt = DEFAULT_MODEL,
    base_url: BaseUrlOpt = None, threads: ThreadsOpt = None, runs: RunsOpt = 1, limit: LimitOpt = None,
    ablation: AblationOpt = "full", examples: ExamplesOpt = None, k: KOpt = None, retriever: RetrieverOpt = "minilm",
    goals: GoalsOpt = False, scene_examples: SceneExamplesOpt = None, preconditions: PreconditionsOpt = False,
    keep_steps: KeepStepsOpt = False, room_walks: RoomWalksOpt = True, open_first: OpenFirstOpt = True,
    skip_done: SkipDoneOpt = False, plan_tokens: PlanTokensOpt = None,
    examples_file: ExamplesFileOpt = None,
    assert_check: AssertCheckOpt = "symbolic", replan: ReplanOpt = 0, repairs: RepairsOpt = DEFAULT_REPAIRS,
    no_grammar: NoGrammarOpt = False, langprompt: LangPromptOpt = False, cassette: CassetteOpt = None,
    cassette_mode: CassetteModeOpt = "replay", out: OutOpt = None, executor: ExecutorOpt = "local",
    jobs: JobsOpt = 1, ray_address: RayAddressOpt = None, seed: SeedOpt = 0, temperature: TemperatureOpt = 0.0,
    as_json: JsonOpt = False,
) -> None:
    """Evaluate ProgPrompt (or LangPrompt) on a split: a per-task table and SR / GCR / Exec over runs."""
    check_counts(("--jobs", jobs, 1), ("--threads", threads, 1))
    run = prepare_household(settings_from(HouseholdSettings, locals()), settings_from(CommandModels, locals()))
    with episode_progress(Console(stderr=True), f"{split} × {runs}", quiet=as_json) as on_progress:
        episodes = run.run(on_progress=on_progress)
    console = Console(highlight=False)
    sampled = f", T {temperature:g}" if temperature else ", greedy"
    console.print(household_table(episodes, f"{run.variant} on {split} with {model} "
                                            f"({runs} run{'s' if runs > 1 else ''}{sampled})"))
    console.print(f"{household_line(episodes)}  → {run.out}")
    summary = run.summary(episodes)
    console.print(interval_line(summary))
    if as_json:
        print(json.dumps(summary))


def interval_line(summary: dict) -> str:
    """The summary's 95 % bootstrap intervals over tasks and its abandoned steps per split, as one line."""
    shown = "  ".join(f"{name} {summary[key][0]:.3f}-{summary[key][1]:.3f}"
                      for name, key in (("SR", "sr_ci"), ("GCR", "gcr_ci"), ("Exec", "exec_ci")))
    splits = ", ".join(f"{split} {n}" for split, n in summary["abandoned_per_split"].items())
    return f"95 % intervals over tasks: {shown}  abandoned per split: {splits}"

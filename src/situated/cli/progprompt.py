"""`situated plan` (one task on a scene) and `situated eval progprompt` (a split: SR / GCR / Exec)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from ..datasets.progprompt import load_example_plans
from ..envs.household import HouseholdEnv
from ..errors import DataError, SituatedError
from ..eval.report.terminal import household_line, household_table
from ..eval.settings import check_counts
from ..eval.store import fingerprint
from ..eval.systems.household import household_summary
from ..eval.systems.household_episodes import HouseholdJob, evaluate_household_job, household_config, plan_and_run
from ..eval.systems.scenes import is_tabletop
from ..planners.assertion_check import ASSERT_CHECKS, assertion_check
from ..planners.factory import household_planner_factory
from ..planners.feedback import DEFAULT_REPAIRS
from ..program import format_program
from . import app
from .models import (
    BaseUrlOpt,
    ExecutorOpt,
    JobsOpt,
    RayAddressOpt,
    ThreadsOpt,
    check_cassette,
    evaluation_model,
    open_model,
)
from .progress import episode_progress
from .render import (
    ForceOpt,
    TraceWriter,
    check_outputs,
    input_files,
    print_changes,
    scene_file,
)

DEFAULT_MODEL = "llamacpp:qwen2.5-coder-1.5b"
DEFAULT_EXAMPLES_DIR = Path("examples/plans")
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


def _examples_path(path: Path | None, data_dir: Path | None = None) -> Path:
    """The example plans to use: the given file or folder, else the data's plan set, else examples/plans."""
    if path is not None:
        return path
    shared = data_dir / "pythonic_plans" / "train_complete_plan_set.json" if data_dir else None
    path = shared if shared is not None and shared.is_file() else DEFAULT_EXAMPLES_DIR
    if not path.exists():
        raise DataError(f"no example plans at {path}; give --examples-file")
    return path


@app.command("plan")
def plan_command(
    task: Annotated[str, typer.Argument(help="The task, e.g. \"microwave salmon\".")],
    scene: Annotated[Path, typer.Option("--scene", help="A VirtualHome-format scene graph (JSON), or "
                                        "tabletop:NAME|FILE for a tabletop scene (gift_bag, fruit_bowl, sorting).")],
    model: Annotated[str, typer.Option("--model", help="Model URI.")] = DEFAULT_MODEL,
    base_url: BaseUrlOpt = None,
    threads: ThreadsOpt = None,
    tasks: Annotated[Path | None, typer.Option("--tasks", help="Tasks file with goal conditions.")] = None,
    examples_file: Annotated[Path | None, typer.Option(
        "--examples-file", help="Example plans (JSON plan set or folder).")] = None,
    examples: Annotated[int, typer.Option("--examples", min=0, help="Number of example plans in the prompt.")] = 3,
    ablation: Annotated[str, typer.Option(help="full, no-comments, no-feedback or neither.")] = "full",
    no_grammar: Annotated[bool, typer.Option("--no-grammar", help="Decode without the grammar.")] = False,
    assert_check: Annotated[str, typer.Option("--assert-check", help="symbolic or llm.")] = "symbolic",
    replan: Annotated[int, typer.Option(min=0, help="Replan up to N times after a failed action.")] = 0,
    repairs: Annotated[int, typer.Option(min=0, help=REPAIRS_HELP)] = DEFAULT_REPAIRS,
    cassette: Annotated[Path | None, typer.Option(help=CASSETTE_HELP)] = None,
    cassette_mode: Annotated[str, typer.Option("--cassette-mode", help="replay, record or auto.")] = "auto",
    seed: Annotated[int, typer.Option(help="Seed for grounding and example sampling.")] = 0,
    trace: Annotated[Path | None, typer.Option("--trace", help="Write the trace here as JSON lines.")] = None,
    render: Annotated[Path | None, typer.Option("--render", help="Tabletop: save the camera's final image (PNG).")
                      ] = None,
    force: ForceOpt = False,
) -> None:
    """Write a plan for TASK with an LLM, run it on the scene and show which goal conditions hold."""
    from ..datasets.task_goals import goals_for

    check_counts(("--threads", threads, 1))
    inputs = input_files(scene_file(scene), tasks, examples_file)
    check_outputs([trace, render], [*inputs, *input_files(cassette)], force)
    check_cassette(cassette, cassette_mode, [*inputs, *(p for p in (trace, render) if p is not None)])

    if is_tabletop(scene):  # the tabletop variant (cli/tabletop_scene.py)
        from .tabletop_scene import plan_on_tabletop

        return plan_on_tabletop(task, str(scene), model=model, base_url=base_url, threads=threads, tasks=tasks,
                                examples_file=examples_file, examples=examples, grammar=not no_grammar,
                                comments=ablation in ("full", "no-feedback"), replan=replan, cassette=cassette,
                                cassette_mode=cassette_mode, seed=seed, trace=trace, render=render)
    if render is not None:
        raise SituatedError(f"--render {render}: only a tabletop scene has a camera (use --scene tabletop:...)")
    console = Console(highlight=False)
    goals = goals_for(tasks, task) if tasks is not None else None
    env = HouseholdEnv.from_file(scene, seed=seed)
    env.reset()
    plans = load_example_plans(_examples_path(examples_file))
    llm = open_model(model, cassette=cassette, cassette_mode=cassette_mode, threads=threads, base_url=base_url)
    planner = household_planner_factory(llm, plans, n_examples=examples, ablation=ablation, grammar=not no_grammar,
                                        seed=seed, max_repairs=repairs)()
    before = env.conditions()
    with console.status("planning..."):
        done = plan_and_run(planner, task, env, verifier_env=HouseholdEnv.from_file(scene, seed=seed),
                            condition_check=assertion_check(assert_check, llm), replan=replan)
    result = done.plans[0]
    console.print(f"[bold]plan[/bold] ({result.tokens} tokens, {result.seconds:.1f} s)")
    console.print(escape(format_program(result.program)), highlight=False)
    for problem in result.problems[:SHOWN_PROBLEMS]:
        console.print(f"[yellow]dropped: {escape(problem)}[/yellow]")
    if len(result.problems) > SHOWN_PROBLEMS:
        console.print(f"[yellow]dropped: {len(result.problems) - SHOWN_PROBLEMS} more lines[/yellow]")
    for rejected in result.rejected[:SHOWN_PROBLEMS]:
        console.print(f"[yellow]rewritten from {escape(rejected)}[/yellow]")
    with TraceWriter(console, trace) as writer:
        for event in done.trace:
            writer(event)
    after = env.conditions()
    console.print(f"\n{done.trace.executed}/{done.trace.attempted} steps executed (Exec {done.trace.exec_rate:.2f})"
                  + (f", {done.replans} replans" if done.replans else ""))
    if goals is None:
        print_changes(console, before, after)
        return
    for goal in goals:
        console.print(f"  {'[green]✓' if goal in after else '[red]✗'} {escape(goal)}[/]")
    console.print(f"goal conditions: {sum(g in after for g in goals)}/{len(goals)}")


DEFAULT_K = {"fixed": 3, "retrieved": 5}
"""Example plans per prompt when --k is not given: the paper's 3 fixed ones, or the 5 nearest (docs/progprompt.md:
SR 0.60 vs 0.50 on env1 and 0.70 vs 0.40 on env2 with the 1.5B model, fewer tokens)."""


def example_choice(examples: str | None, k: int | None, retriever: str, *,
                   langprompt: bool = False) -> tuple[int, str | None]:
    """(number of example plans, retriever name or None) from `--examples fixed|retrieved|N`, `--k`, `--retriever`.

    Default: retrieved (k 5) for ProgPrompt; fixed (k 3, the paper's) for the LangPrompt baseline."""
    from ..planners.retrieval import RETRIEVERS

    examples = examples if examples is not None else "fixed" if langprompt else "retrieved"
    if examples.isdigit():
        return int(examples), None
    if examples not in DEFAULT_K:
        raise SituatedError(f"--examples must be fixed, retrieved or a number, not {examples!r}")
    k = DEFAULT_K[examples] if k is None else k
    if examples == "fixed":
        return k, None
    if retriever not in RETRIEVERS:
        raise SituatedError(f"--retriever must be one of {', '.join(RETRIEVERS)}, not {retriever!r}")
    if k < 1:
        raise SituatedError(f"--examples retrieved needs --k >= 1, got {k}")
    return k, retriever


def levers(**settings: object) -> dict[str, object]:
    """Settings of the levers beyond the paper that are on: a run without them keeps the configuration key of
    the runs before they existed, so their results stores still resume."""
    return {name: value for name, value in settings.items() if value is not None}


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
    examples: Annotated[str | None, typer.Option("--examples", help=(
        "retrieved (default: the --k plans nearest to the task, by --retriever; never the task's own plan), "
        "fixed (the first --k plans, the paper's set-up; the default with --langprompt) or a number N (fixed, "
        "N plans)."))] = None,
    k: Annotated[int | None, typer.Option("--k", help="Example plans in the prompt (default 5 retrieved, "
                                                       "3 fixed).")] = None,
    retriever: Annotated[str, typer.Option(
        "--retriever", help="--examples retrieved: minilm (sentence embeddings, int8 ONNX) or bm25.")] = "minilm",
    goals: Annotated[bool, typer.Option("--goals/--no-goals", help=(
        "Goal-aware grounded decoding: the model first states the task's goals as assertions; a plan that "
        "leaves one unmet on the private copy is continued."))] = False,
    plan_tokens: Annotated[int | None, typer.Option("--plan-tokens", help=(
        "Most tokens one plan may cost, repairs included (default 4 × the answer limit)."))] = None,
    examples_file: Annotated[Path | None, typer.Option(
        "--examples-file", help="Example plans (default: the data's plan set).")] = None,
    assert_check: Annotated[str, typer.Option("--assert-check", help="symbolic or llm.")] = "symbolic",
    replan: Annotated[int, typer.Option(help="Replan up to N times after a failed action.")] = 0,
    repairs: Annotated[int, typer.Option(help=REPAIRS_HELP)] = DEFAULT_REPAIRS,
    no_grammar: Annotated[bool, typer.Option("--no-grammar", help="Decode without the grammar.")] = False,
    langprompt: Annotated[bool, typer.Option("--langprompt", help="Run the LangPrompt baseline.")] = False,
    cassette: Annotated[Path | None, typer.Option(help="Record/replay LLM calls in this file.")] = None,
    cassette_mode: Annotated[str, typer.Option("--cassette-mode", help="replay, record or auto.")] = "replay",
    out: Annotated[Path | None, typer.Option(help="Output folder (episodes.jsonl); reruns resume.")] = None,
    executor: ExecutorOpt = "local",
    jobs: JobsOpt = 1,
    ray_address: RayAddressOpt = None,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="End with one JSON line of the scores.")] = False,
) -> None:
    """Evaluate ProgPrompt (or LangPrompt) on a split: a per-task table and SR / GCR / Exec over runs."""
    from ..datasets.progprompt import load_split

    if assert_check not in ASSERT_CHECKS:
        raise SituatedError(f"--assert-check must be one of {', '.join(ASSERT_CHECKS)}, not {assert_check!r}")
    if langprompt and replan:
        raise SituatedError("--replan needs ProgPrompt (LangPrompt plans are not programs)")
    if limit is not None and limit < 1:
        raise SituatedError(f"--limit must be >= 1, got {limit}")
    k, retrieved = example_choice(examples, k, retriever, langprompt=langprompt)
    check_counts(("--runs", runs, 1), ("--k", k, 0), ("--replan", replan, 0), ("--repairs", repairs, 0),
                 ("--jobs", jobs, 1), ("--threads", threads, 1), ("--plan-tokens", plan_tokens, 1))
    if goals and langprompt:
        raise SituatedError("--goals needs ProgPrompt (LangPrompt plans are not programs)")
    if goals and repairs == 0:
        raise SituatedError("--goals needs grounded decoding (--repairs >= 1): stated goals are checked on its copy")
    repairs = 0 if langprompt else repairs  # LangPrompt is the paper's open-loop baseline
    all_tasks = load_split(data, split, initial_graph=initial_graph)
    tasks = all_tasks[:limit] if limit is not None else all_tasks
    examples_path = _examples_path(examples_file, data)
    plans = load_example_plans(examples_path)
    variant = "langprompt" if langprompt else (f"progprompt-{ablation}{'-nogrammar' if no_grammar else ''}"
                                               f"{f'-grounded{repairs}' if repairs else ''}"
                                               f"{f'-{retrieved}{k}' if retrieved else ''}{'-goals' if goals else ''}")
    out = out or Path("runs") / f"{split}-{variant}-{model.replace(':', '_').replace('/', '_')}"
    config = household_config(
        all_tasks, model=model, base_url=base_url, planner="langprompt" if langprompt else "progprompt",
        ablation=ablation, examples=k, example_plans=fingerprint(plans), grammar=not no_grammar,
        split=split, data=str(data.resolve()), initial_graph=str(initial_graph.resolve()) if initial_graph else None,
        repairs=repairs, assert_check=assert_check,
        **levers(retriever=retrieved, goals=goals or None, plan_tokens=plan_tokens))
    check_cassette(cassette, cassette_mode, input_files(initial_graph, examples_path, *(data / d for d in (
        "new_env", "final_states", split))))
    err = Console(stderr=True)
    runner, spec = evaluation_model(model, executor=executor, jobs=jobs, ray_address=ray_address, cassette=cassette,
                                    cassette_mode=cassette_mode, threads=threads, base_url=base_url, console=err)
    job = HouseholdJob(spec, tuple(plans.items()), n_examples=k, ablation=ablation, grammar=not no_grammar,
                       langprompt=langprompt, repairs=repairs, assert_check=assert_check, replan=replan, seed=seed,
                       retriever=retrieved, goals=goals, plan_tokens=plan_tokens)
    with episode_progress(err, f"{split} × {runs}", quiet=as_json) as on_progress:
        episodes = evaluate_household_job(tasks, job, runner, runs=runs, out=out, config=config,
                                          on_progress=on_progress)
    console = Console(highlight=False)
    console.print(household_table(episodes, f"{variant} on {split} with {model} ({runs} run{'s' if runs > 1 else ''})"))
    console.print(f"{household_line(episodes)}  → {out}")
    if as_json:
        print(json.dumps({**household_summary(episodes), "split": split, "model": model, "variant": variant,
                          "out": str(out)}))

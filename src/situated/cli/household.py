"""`situated run` and `situated replay`: household plans and ground-truth replays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from .. import files
from ..eval.report.terminal import replay_line, replay_table
from ..eval.systems.household import replay_summary
from ..eval.systems.household_replay import replay_split
from ..eval.systems.scenes import open_scene
from ..interpreter import Limits, interpret
from ..program import require_valid
from . import app
from .render import ForceOpt, TraceWriter, check_outputs, input_files, print_changes, scene_file
from .tabletop_scene import SCENE_HELP, RenderOpt, save_render


def read_plan(path: Path) -> bytes:
    """The bytes of a plan file (a regular file of at most 16 MiB: see `files.read_bytes`); DataError otherwise.
    The parser decodes them, naming the line and column of a byte that is not UTF-8."""
    return files.read_bytes(path, what="plan", limit=PLAN_LIMIT)


PLAN_LIMIT = 16 << 20


@app.command("run")
def run_command(
    plan: Annotated[Path, typer.Argument(help="A plan program in ProgPrompt's Pythonic format.")],
    scene: Annotated[Path, typer.Option("--scene", help=SCENE_HELP)],
    trace: Annotated[Path | None, typer.Option("--trace", help="Write the trace here as JSON lines.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for grounding ambiguous object names (tabletop: the layout).")] = 0,
    step_cap: Annotated[int, typer.Option(min=1, help="Attempted steps allowed per sub-goal (at least 1).")] = 10,
    render: RenderOpt = None,
    force: ForceOpt = False,
) -> None:
    """Run a plan program on a scene and show each step, its outcome and the state changes."""
    check_outputs([trace, render], input_files(plan, scene_file(scene)), force)
    opened = open_scene(scene, seed=seed)
    program = opened.read_program(read_plan(plan), str(plan))
    require_valid(program, opened.space, opened.names)
    env = opened.env
    console = Console(highlight=False)
    before = env.conditions()
    with TraceWriter(console, trace) as writer:
        result = interpret(program, env, limits=Limits(subgoal_steps=step_cap), on_event=writer)
    after = env.conditions()
    console.print(f"\n[bold]{program.name or plan.stem}[/bold]: {result.executed}/{result.attempted} steps executed "
                  f"(Exec {result.exec_rate:.2f}); {len(after - before)} conditions became true, "
                  f"{len(before - after)} ended.")
    print_changes(console, before, after, ended=True)
    save_render(opened, render, console)


@app.command("replay")
def replay_command(
    data_dir: Annotated[Path, typer.Argument(help="ProgPrompt data directory (e.g. ../shared/data/progprompt).")],
    split: Annotated[str, typer.Option(help="env1, env2, train, test_seen, test_unseen, ...")],
    initial_graph: Annotated[Path | None, typer.Option("--initial-graph",
                                                       help="Initial graph for splits released without one.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for grounding.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="End with one JSON line of the scores.")] = False,
) -> None:
    """Replay the ground-truth programs of a split and score them with SR / GCR / Exec."""
    from ..datasets.progprompt import load_split

    tasks = load_split(data_dir, split, initial_graph=initial_graph)
    episodes = replay_split(tasks, seed=seed)
    console = Console(highlight=False)
    console.print(replay_table(episodes, f"replay of {split} ({len(tasks)} tasks)"))
    console.print(replay_line(episodes))
    if as_json:
        print(json.dumps(replay_summary(split, episodes)))

"""`situated run` and `situated replay`: household plans and ground-truth replays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ..actions import VIRTUALHOME_SPACE
from ..envs.household import HouseholdEnv
from ..errors import DataError
from ..eval.replay import replay_split
from ..interpreter import Limits, run
from ..program import check, parse
from . import app
from .render import TraceWriter


def read_plan(path: Path) -> bytes:
    """The bytes of a plan file; DataError when it cannot be read."""
    try:
        return path.read_bytes()
    except OSError as err:
        raise DataError(f"{path}: cannot read plan ({err.strerror or err})") from None


@app.command("run")
def run_command(
    plan: Annotated[Path, typer.Argument(help="A plan program in ProgPrompt's Pythonic format.")],
    scene: Annotated[Path, typer.Option("--scene", help="A VirtualHome-format scene graph (JSON).")],
    trace: Annotated[Path | None, typer.Option("--trace", help="Write the trace here as JSON lines.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for grounding ambiguous object names.")] = 0,
    step_cap: Annotated[int, typer.Option(help="Attempted steps allowed per sub-goal.")] = 10,
) -> None:
    """Run a plan program on a scene and show each step, its outcome and the state changes."""
    program = parse(read_plan(plan), source=str(plan))
    env = HouseholdEnv.from_file(scene, seed=seed)
    check(program, VIRTUALHOME_SPACE, env.object_names())
    env.reset()
    console = Console(highlight=False)
    before = env.conditions()
    writer = TraceWriter(console, trace)
    try:
        result = run(program, env, limits=Limits(subgoal_steps=step_cap), on_event=writer)
    finally:
        writer.close()
    after = env.conditions()
    console.print(
        f"\n[bold]{program.name or plan.stem}[/bold]: {result.executed}/{result.attempted} steps executed "
        f"(Exec {result.exec_rate:.2f}); {len(after - before)} conditions became true, {len(before - after)} ended."
    )
    for cond in sorted(after - before):
        console.print(f"  [green]+ {cond}[/green]")
    for cond in sorted(before - after):
        console.print(f"  [red]- {cond}[/red]")


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
    scores = replay_split(tasks, seed=seed)
    console = Console(highlight=False)
    table = Table(title=f"replay of {split} ({len(tasks)} tasks)")
    for col in ("#", "task", "steps", "Exec", "GCR", "success"):
        table.add_column(col)
    for i, s in enumerate(scores):
        table.add_row(str(i), s.task, str(s.attempted), f"{s.exec_rate:.2f}", f"{s.gcr:.3f}",
                      "[green]yes[/green]" if s.success else "[red]no[/red]")
    console.print(table)
    n = len(scores)
    sr = sum(s.success for s in scores) / n
    gcr_mean = sum(s.gcr for s in scores) / n
    exec_mean = sum(s.exec_rate for s in scores) / n
    console.print(f"SR {sr:.3f}  GCR {gcr_mean:.3f}  Exec {exec_mean:.3f}")
    if as_json:
        print(json.dumps({"split": split, "tasks": n, "sr": round(sr, 4), "gcr": round(gcr_mean, 4),
                          "exec": round(exec_mean, 4)}))

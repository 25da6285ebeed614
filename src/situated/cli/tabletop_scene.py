"""The tabletop side of `situated plan` and `situated run` (`--scene tabletop:NAME|FILE`): planning over what the
camera sees, goal conditions from a tabletop task file, and the camera's final image (`--render`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from ..datasets.progprompt import load_example_plans
from ..datasets.tabletop import TabletopTask, load_tabletop_tasks, task_slug
from ..errors import DataError
from ..eval.systems.scenes import OpenedScene, open_scene
from ..interpreter import interpret
from ..llm.base import LLM
from ..planners.progprompt_tabletop import TabletopPlanner
from ..program import format_program
from .models import open_model
from .render import TraceWriter, print_changes

SCENE_HELP = ("A VirtualHome-format scene graph (JSON), or tabletop:NAME for a built-in tabletop scene "
              "(gift_bag, fruit_bowl, sorting) or tabletop:FILE for a tabletop scene file.")
RenderOpt = Annotated[Path | None, typer.Option("--render", help="Save the tabletop camera's final image (PNG).")]


def save_render(opened: OpenedScene, path: Path | None, console: Console) -> None:
    """Write the tabletop camera's image of the scene as it is now to `path` (nothing when None)."""
    if path is None:
        return
    if opened.kind != "tabletop":
        raise DataError(f"--render {path}: only a tabletop scene has a camera (use --scene tabletop:...)")
    try:
        written = opened.env.save_image(path)
    except OSError as err:
        raise DataError(f"{path}: cannot write the image ({err.strerror or err})") from None
    console.print(f"camera image → {written}")


def tabletop_planner(llm: LLM, examples_file: Path | None, examples: int, *, comments: bool, grammar: bool,
                     seed: int) -> TabletopPlanner:
    """The tabletop planner the commands use: the built-in example plans, or those of a folder of `.py` plans
    in prompt form (`def name():`, then `objects = [...]`, then the plan)."""
    plans = load_example_plans(examples_file) if examples_file is not None else None
    return TabletopPlanner(llm, plans, n_examples=examples, comments=comments, constrained=grammar, seed=seed)


def _goals(tasks: Path, task: str) -> TabletopTask | None:
    wanted = task_slug(task)
    return next((t for t in load_tabletop_tasks(tasks) if t.task_id == wanted), None)


def plan_on_tabletop(task: str, scene: str, *, model: str, base_url: str | None, threads: int | None,
                     tasks: Path | None, examples_file: Path | None, examples: int, comments: bool, grammar: bool,
                     replan: int, cassette: Path | None, cassette_mode: str, seed: int, trace: Path | None,
                     render: Path | None) -> None:
    """`situated plan TASK --scene tabletop:...`: plan over what the camera sees, run it, show the goal."""
    from ..eval.systems.household_episodes import run_plan

    console = Console(highlight=False)
    goal = _goals(tasks, task) if tasks is not None else None
    opened = open_scene(scene, seed=seed)
    env = opened.env
    llm = open_model(model, cassette=cassette, cassette_mode=cassette_mode, threads=threads, base_url=base_url)
    planner = tabletop_planner(llm, examples_file, examples, comments=comments, grammar=grammar, seed=seed)
    objects = env.object_names()
    affordances = env.object_properties()
    before = env.conditions()
    with console.status("planning..."):
        first = planner.plan(task, objects, affordances=affordances)
    console.print(f"[bold]plan[/bold] ({first.tokens} tokens, {first.seconds:.1f} s) over what the camera sees: "
                  f"{', '.join(objects)}")
    console.print(escape(format_program(first.program)), highlight=False)
    for problem in first.problems:
        console.print(f"[yellow]dropped: {escape(problem)}[/yellow]")
    with TraceWriter(console, trace) as writer:
        if replan:
            done = run_plan(first, env, planner=planner, task_name=task, objects=objects, replan=replan,
                            affordances=affordances)
            for event in done.trace:
                writer(event)
            result = done.trace
        else:
            result = interpret(first.program, env, on_event=writer)
    after = env.conditions()
    console.print(f"\n{result.executed}/{result.attempted} steps executed (Exec {result.exec_rate:.2f})")
    if goal is None:
        print_changes(console, before, after, ended=True)
    else:
        held = [env.holds(g) for g in goal.goal]
        for text, ok in zip(goal.goal_text, held, strict=True):
            console.print(f"  {'[green]✓' if ok else '[red]✗'} {escape(text)}[/]")
        console.print(f"goal conditions: {sum(held)}/{len(held)}")
    save_render(opened, render, console)

"""`situated sandbox study`: run scripted user-study sessions under the teaching and no-teaching conditions and
write their measures, the per-bag figure and an HTML report (the work is in `situated.sandbox.study` and
`situated.eval.systems.sandbox_study_run`).

    situated sandbox study --sessions examples/sandbox_study --conditions teaching,no-teaching --out study/
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .models import BaseUrlOpt, ThreadsOpt, open_model
from .sandbox import DEFAULT_MODEL, sandbox_app


def _session_line(row: dict[str, Any], skipped: bool) -> str:
    if skipped:
        return f"{row['name']}: done earlier (kept)"
    return (f"{row['name']} ({row['condition']}, {row['participant']} bag {row['trial']}): {row['met']}/"
            f"{row['expectations']} met, supervision {row['person_supervision_minutes']:.2f} min (person model), "
            f"{row['skills_per_behaviour']:.1f} skills per behaviour call, {row['skill_failures']} skill failures")


def _trial_line(trial: dict[str, Any]) -> str:
    return (f"{trial['condition']:>11} bag {trial['trial']}: supervision {trial['person_supervision_minutes']:.2f} "
            f"min (events {trial['supervision_minutes']:.2f}), teaching {trial['person_teaching_minutes']:.2f} min, "
            f"{trial['skills_per_behaviour']:.1f} skills/behaviour, {trial['skills_per_command']:.1f} skills/command, "
            f"{trial['skill_failures']:.1f} failures, {trial['met']:.1f}/{trial['expectations']:.1f} met "
            f"({trial['sessions']} sessions)")


@sandbox_app.command("study")
def study_command(
    sessions: Annotated[Path, typer.Option("--sessions", help="A folder of study .session files.")],
    out: Annotated[Path, typer.Option("--out", help="Results folder (resumable: done sessions are kept).")],
    conditions: Annotated[str, typer.Option("--conditions", help="Comma-separated: teaching, no-teaching.")]
    = "teaching,no-teaching",
    model: Annotated[str, typer.Option("--model", help="Model URI.")] = DEFAULT_MODEL,
    threads: ThreadsOpt = None,
    base_url: BaseUrlOpt = None,
    cassette: Annotated[Path | None, typer.Option("--cassette", help="Record/replay model calls here.")] = None,
    cassette_mode: Annotated[str, typer.Option("--cassette-mode", help="replay, record or auto.")] = "replay",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the scenes' layout.")] = 0,
    participants: Annotated[str | None, typer.Option("--participants", help="Only these (comma-separated).")]
    = None,
    trials: Annotated[str | None, typer.Option("--trials", help="Only these bags (comma-separated).")] = None,
) -> None:
    """Run a scripted user study: measures per session and per bag, the per-bag figure and report.html."""
    from ..eval.report.build import build_report, load_runs, write_report
    from ..eval.systems.sandbox_study_run import run_study
    from ..sandbox.study import parse_conditions, selection, study_sessions, trial_rows

    chosen = study_sessions(sessions, parse_conditions(conditions))  # every file checked before the model loads
    only = selection(participants, trials)
    llm = open_model(model, cassette=cassette, cassette_mode=cassette_mode, threads=threads, base_url=base_url,
                     conversation=True)
    rows, written = run_study(chosen, llm, out, model=model, seed=seed,
                              on_session=lambda row, skipped: print(_session_line(row, skipped), flush=True),
                              selected=only)
    for trial in trial_rows(rows):
        print(_trial_line(trial))
    written += write_report(build_report(load_runs([out])), out / "report.html")
    print("wrote " + ", ".join(str(p) for p in written))

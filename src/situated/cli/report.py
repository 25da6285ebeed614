"""`situated report RUN_DIR [RUN_DIR ...] --out report.html`: a report of evaluations to open in a browser."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ..errors import SituatedError
from ..eval.bootstrap import DEFAULT_RESAMPLES
from ..eval.report.build import FORMATS, Options, build_report, load_runs, write_report
from . import app
from .render import ForceOpt, check_outputs, input_files


@app.command("report")
def report_command(
    runs: Annotated[list[Path], typer.Argument(help="Results directories of one system (the --out of situated eval "
                                                    "progprompt, situated navigate, situated eval tabletop or "
                                                    "situated eval eai); the first is the reference.")],
    out: Annotated[Path | None, typer.Option("--out", help="Report file (default: report.html or report.md).")] = None,
    fmt: Annotated[str, typer.Option("--format", help="html (self-contained page) or md (Markdown and figure "
                                                       "files).")] = "html",
    maps: Annotated[int, typer.Option("--maps", help="Navigation: route maps in all (0: none).")] = 12,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap and of which routes are drawn.")] = 0,
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap replicates.")] = DEFAULT_RESAMPLES,
    as_json: Annotated[bool, typer.Option("--json", help="End with one JSON line summarizing the report.")] = False,
    force: ForceOpt = False,
) -> None:
    """Compare evaluation runs (household, navigation, tabletop or EAI): per-task and overall numbers with bootstrap
    intervals, differences, the papers' numbers, cost, failure reasons and figures, as one HTML page (or
    Markdown)."""
    if fmt not in FORMATS:
        raise SituatedError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if maps < 0:
        raise SituatedError(f"--maps must be >= 0, got {maps}")
    if resamples < 1:
        raise SituatedError(f"--resamples must be >= 1, got {resamples}")
    out = out or Path(f"report.{fmt}")
    check_outputs([out], input_files(*runs), force)
    start = time.perf_counter()
    loaded = load_runs(runs)
    document = build_report(loaded, Options(seed=seed, resamples=resamples, maps=maps))
    written = write_report(document, out, fmt)
    seconds = time.perf_counter() - start
    size = sum(p.stat().st_size for p in written)
    Console(highlight=False).print(f"{document.title}: {document.subtitle} → {out} ({size / 1024:,.0f} KiB, "
                                   f"{len(document.figures())} figures, {seconds:.1f} s)")
    if as_json:
        print(json.dumps({**document.summary, "out": str(out), "format": fmt, "files": len(written),
                          "bytes": size, "seconds": round(seconds, 2)}))

"""Build a report of results stores: read the runs, compute every section, return a `Document`.

    runs = load_runs([Path("runs/a"), Path("runs/b")])
    document = build_report(runs, Options(seed=0, maps=12))
    Path("report.html").write_text(render_html(document))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...errors import DataError
from .document import Document, Section
from .errors import error_breakdown
from .html import render_html
from .markdown import render_markdown
from .navigation import by_length, episodes_table, route_maps, stops
from .runs import RunResults, load_runs
from .sandbox_study import study_bags
from .sections import (
    Options,
    comparison,
    cost,
    intervals,
    intro,
    method,
    papers,
    results,
    split_runs,
)
from .tasks import failures, per_task

__all__ = ["FORMATS", "Options", "build_report", "load_runs", "report_of", "write_report"]

FORMATS = ("html", "md")
DEFAULT_OPTIONS = Options()
SECTIONS: dict[str, Callable[[Sequence[RunResults], Options], Section]] = {
    "tasks": lambda runs, options: per_task(runs),
    "failures": lambda runs, options: failures(runs),
    "errors": lambda runs, options: error_breakdown(runs),
    "lengths": lambda runs, options: by_length(runs),
    "stops": lambda runs, options: stops(runs),
    "episodes": lambda runs, options: episodes_table(runs),
    "bags": lambda runs, options: study_bags(runs),
}
"""The system-specific sections a `System.sections` names (besides `cost` and `maps`, which also give digests)."""


def build_report(runs: Sequence[RunResults], options: Options = DEFAULT_OPTIONS) -> Document:
    """Every section of the report of `runs` (all of one system, as `load_runs` returns them): the common ones,
    then those the runs' `System` names."""
    system = runs[0].system
    cis = intervals(runs, options)
    splits = split_runs(runs, options)
    compared, differences = comparison(runs, options, splits)
    paper_section, paper_rows = papers(runs, cis, splits)
    cost_section, costs = cost(runs)
    sections: list[Section | None] = [intro(runs), results(runs, cis, options, splits), compared, paper_section]
    maps = 0
    for name in system.sections:
        if name == "cost":
            sections.append(cost_section)
        elif name == "maps":
            map_section, maps = route_maps(runs, options)
            sections.append(map_section)
        else:
            sections.append(SECTIONS[name](runs, options))
    sections.append(method(system, options))
    keys = system.metric_keys
    described = []
    for index, (run, ci) in enumerate(zip(runs, cis, strict=True)):
        entry = {"label": run.label, "path": str(run.path), "episodes": len(run.episodes), "tasks": run.tasks,
                 "runs": run.runs, "metrics": {k: ci[k].to_dict() for k in keys}}
        if splits:
            entry["parts"] = {}
            for split in splits:
                part_ci = split.cis[index]
                if part_ci is not None:
                    entry["parts"][split.part.name] = {k: part_ci[k].to_dict() for k in keys}
        described.append(entry)
    summary: dict[str, Any] = {
        "system": system.name,
        "runs": described,
        "differences": differences, "cost": costs, "paper_rows": paper_rows, "maps": maps,
        "seed": options.seed, "resamples": options.resamples,
    }
    names = " vs ".join(r.label for r in runs[:4]) + (f" and {len(runs) - 4} more" if len(runs) > 4 else "")
    title = f"{system.title} evaluation report"
    return Document(title, names, tuple(s for s in sections if s is not None), summary)


def report_of(directories: Sequence[Path], options: Options = DEFAULT_OPTIONS) -> Document:
    """`load_runs` then `build_report`."""
    return build_report(load_runs(directories), options)


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_bytes(data)
        tmp.replace(path)
    except OSError as err:
        raise DataError(f"{path}: cannot write the report ({err.strerror or err})") from None


def write_report(document: Document, out: Path, fmt: str = "html") -> list[Path]:
    """Write `document` to `out` as "html" (one self-contained file) or "md" (the Markdown file and its figures
    in `<out stem>_figures/` beside it); returns the files written."""
    if fmt not in FORMATS:
        raise DataError(f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}")
    out = Path(out)
    if out.is_dir():
        raise DataError(f"{out}: is a directory; give a file name for the report")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise DataError(f"{out.parent}: cannot create ({err.strerror or err})") from None
    if fmt == "html":
        _write(out, render_html(document).encode("utf-8"))
        return [out]
    folder = out.with_name(f"{out.stem}_figures")
    text, files = render_markdown(document, folder.name)
    written = [out]
    if files:
        try:
            folder.mkdir(exist_ok=True)
        except OSError as err:
            raise DataError(f"{folder}: cannot create ({err.strerror or err})") from None
        for name, data in files.items():
            _write(folder / name, data)
            written.append(folder / name)
    _write(out, text.encode("utf-8"))
    return written

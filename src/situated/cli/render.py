"""Rendering of traces and state changes for the terminal (rich), and the checks commands make of their outputs
(`check_outputs`, `--force`) and count options (`check_counts`) before doing any work."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Set
from pathlib import Path
from typing import IO, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from .. import files
from ..errors import DataError
from ..trace import CheckEvent, Event, ObservationEvent, SkipEvent, StepEvent, StopEvent, SubgoalEvent

ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite output files that exist (an input never).")]
TABLETOP = "tabletop:"


def scene_file(scene: str | Path | None) -> Path | None:
    """The file a `--scene` value reads (a graph, or `tabletop:FILE`), or None for a built-in scene."""
    if scene is None:
        return None
    text = str(scene)
    return Path(text[len(TABLETOP):]) if text.startswith(TABLETOP) else Path(text)


def input_files(*paths: Path | None) -> list[Path]:
    """The existing input files among `paths` (None left out; a folder stands for the files directly in it)."""
    found: list[Path] = []
    for path in paths:
        if path is None or not path.exists():
            continue
        found.append(path)
        if path.is_dir():
            with contextlib.suppress(OSError):
                found.extend(p for p in sorted(path.iterdir()) if p.is_file())
    return found


def check_outputs(outputs: Iterable[Path | None], inputs: Iterable[Path], force: bool) -> None:
    """Each output (None skipped) checked with `files.check_output` before any work is done: never one of the
    command's `inputs` nor another output, not a directory, FIFO or socket, an existing file only with
    `--force`; missing parent folders are created. One-line DataError otherwise."""
    wanted = [p for p in outputs if p is not None]
    sources = list(inputs)
    for k, out in enumerate(wanted):
        if any(out.resolve() == other.resolve() for other in wanted[:k]):
            raise DataError(f"{out}: named for two outputs; give each its own file")
        files.check_output(out, inputs=sources, force=force)


def event_line(event: Event) -> str:
    """One line of rich markup for a trace event."""
    if isinstance(event, SubgoalEvent):
        return f"[bold]# {escape(event.text)}[/bold]"
    if isinstance(event, StepEvent):
        tag = "  [dim]recovery[/dim]" if event.recovery else ""
        if event.ok:
            changes = f"  [dim]{escape(', '.join(event.changes))}[/dim]" if event.changes else ""
            return f"  [green]✓[/green] {escape(event.call)}{tag}{changes}"
        return f"  [red]✗[/red] {escape(event.call)}{tag}  [red]{escape(event.reason)}[/red]"
    if isinstance(event, CheckEvent):
        verdict = "[green]holds[/green]" if event.held else "[yellow]does not hold[/yellow]"
        return f"  [cyan]{event.statement}[/cyan] {escape(event.condition)}: {verdict}"
    if isinstance(event, SkipEvent):
        return f"  [yellow]- {escape(event.call)} skipped: {escape(event.reason)}[/yellow]"
    if isinstance(event, StopEvent):
        return f"[red]stopped at line {event.line}: {escape(event.reason)}[/red]"
    if isinstance(event, ObservationEvent):
        return f"  [dim]{escape(event.text)}[/dim]"
    return escape(str(event))


class TraceWriter:
    """Prints events as they happen and writes them to a JSON-lines file when one is given (check it first with
    `check_outputs`: the file is truncated here)."""

    def __init__(self, console: Console, path: Path | None) -> None:
        self.console = console
        self._file: IO[str] | None = None
        if path is not None:
            try:
                self._file = path.open("w", encoding="utf-8")
            except OSError as err:
                raise DataError(f"{path}: cannot write the trace ({err.strerror or err})") from None
        self.path = path

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __call__(self, event: Event) -> None:
        self.console.print(event_line(event), highlight=False)
        if self._file is not None:
            try:
                self._file.write(json.dumps(event.to_dict()) + "\n")
                self._file.flush()
            except OSError as err:
                raise DataError(f"{self.path}: cannot write the trace ({err.strerror or err})") from None

    def close(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None


def print_changes(console: Console, before: Set[str], after: Set[str], *, ended: bool = False) -> None:
    """The conditions that became true (and, with `ended`, those that ended) between two states."""
    for cond in sorted(after - before):
        console.print(f"  [green]+ {escape(cond)}[/green]")
    if ended:
        for cond in sorted(before - after):
            console.print(f"  [red]- {escape(cond)}[/red]")

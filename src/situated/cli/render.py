"""Rendering of traces and state changes for the terminal (rich)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Set
from pathlib import Path
from typing import IO

from rich.console import Console
from rich.markup import escape

from ..errors import DataError
from ..trace import CheckEvent, Event, ObservationEvent, SkipEvent, StepEvent, StopEvent, SubgoalEvent


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
    """Prints events as they happen and writes them to a JSON-lines file when one is given."""

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

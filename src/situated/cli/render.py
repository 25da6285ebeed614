"""Rendering of traces and tables for the terminal (rich)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO

from rich.console import Console
from rich.markup import escape

from ..trace import CheckEvent, Event, SkipEvent, StepEvent, StopEvent, SubgoalEvent


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
    return escape(str(event))


class TraceWriter:
    """Prints events as they happen and appends them to a JSON-lines file when one is given."""

    def __init__(self, console: Console, path: Path | None) -> None:
        self.console = console
        self._file: IO[str] | None = path.open("w", encoding="utf-8") if path else None

    def __call__(self, event: Event) -> None:
        self.console.print(event_line(event), highlight=False)
        if self._file is not None:
            self._file.write(json.dumps(event.to_dict()) + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

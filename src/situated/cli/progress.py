"""A progress bar for long evaluations: episodes done / total, time left, and the running success rate."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from ..eval.episode import Episode
from ..eval.episode_runner import Progress as OnProgress


@contextmanager
def episode_progress(console: Console, label: str, *, quiet: bool = False) -> Iterator[OnProgress]:
    """Yields the runner's progress callback; draws nothing when `quiet` or when stderr is not a terminal."""
    successes: list[bool] = []
    if quiet or not console.is_terminal:
        yield lambda done, total, episode: None
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  TextColumn("{task.fields[rate]}"), console=console, transient=True) as bar:
        task = bar.add_task(label, total=None, rate="")

        def on_progress(done: int, total: int, episode: Episode | None) -> None:
            if episode is not None:
                successes.append(episode.success)
            rate = f"success {sum(successes) / len(successes):.0%} of {len(successes)}" if successes else ""
            description = f"{label}: {episode.instruction[:40]}" if episode is not None else label
            bar.update(task, completed=done, total=total, rate=rate, description=description)

        yield on_progress

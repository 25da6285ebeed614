"""Opening a model by URI for the commands: a progress bar while embedded weights are assembled, optional cassette."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from ..llm import LLM, load

BaseUrlOpt = Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible server (else OPENAI_BASE_URL).")]
ThreadsOpt = Annotated[int | None, typer.Option("--threads", help="llama.cpp threads (default: all cores).")]


def open_model(uri: str, *, cassette: Path | None = None, cassette_mode: str = "replay", threads: int | None = None,
               base_url: str | None = None, console: Console | None = None) -> LLM:
    """Load `uri` (`llamacpp:...` or `openai:...`), optionally recording/replaying its calls in `cassette`."""
    console = console or Console(stderr=True)
    bars: list[Progress] = []

    def on_bytes(done: int, total: int) -> None:
        if not bars:
            bar = Progress(TextColumn("assembling model weights"), BarColumn(), DownloadColumn(),
                           TimeRemainingColumn(), console=console, transient=True)
            bar.start()
            bar.add_task("weights", total=total)
            bars.append(bar)
        bars[0].update(bars[0].task_ids[0], completed=done, total=total)

    opts: dict[str, Any] = {}
    if uri.startswith("llamacpp:"):
        opts["progress"] = on_bytes
        if threads is not None:
            opts["n_threads"] = threads
    elif base_url is not None:
        opts["base_url"] = base_url
    try:
        with console.status(f"loading {uri}"):
            if cassette is not None:
                from ..llm.cassette import wrap

                return wrap(uri, cassette, mode=cassette_mode, **opts)
            return load(uri, **opts)
    finally:
        for bar in bars:
            bar.stop()

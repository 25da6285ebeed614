"""Opening a model by URI for the commands: a progress bar while embedded weights are assembled, optional cassette."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from .. import files
from ..errors import DataError
from ..llm import LLM, load

BaseUrlOpt = Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible server (else OPENAI_BASE_URL).")]
ThreadsOpt = Annotated[int | None, typer.Option("--threads", help="llama.cpp threads (default: all cores).")]
TIMEOUT_VARIABLE = "SITUATED_OPENAI_TIMEOUT"
RETRIES_VARIABLE = "SITUATED_OPENAI_RETRIES"


def server_limits(environ: Mapping[str, str]) -> dict[str, Any]:
    """`timeout` (seconds per try, end to end) and `retries` for an OpenAI-compatible server, from the
    environment variables SITUATED_OPENAI_TIMEOUT and SITUATED_OPENAI_RETRIES when set; DataError for a value
    that is not a positive number of seconds or a count >= 0."""
    limits: dict[str, Any] = {}
    knobs = ((TIMEOUT_VARIABLE, "timeout", float, 1e-3, "seconds > 0"),
             (RETRIES_VARIABLE, "retries", int, 0, "a count >= 0"))
    for name, key, convert, least, wanted in knobs:
        text = environ.get(name)
        if text is None or not text.strip():
            continue
        try:
            value = convert(text.strip()) if len(text) < 30 else None
        except ValueError:
            value = None
        if value is None or not math.isfinite(value) or value < least:
            raise DataError(f"environment variable {name}: expected {wanted}, got {text[:30]!r}")
        limits[key] = value
    return limits


def check_cassette(cassette: Path | None, mode: str, inputs: Sequence[Path] = ()) -> None:
    """A cassette that may be written (modes record and auto append to it, by design) must not be one of the
    command's other files (`inputs`: its data, plans, outputs), a directory, a FIFO or a socket; DataError
    otherwise. A replayed cassette is only read."""
    if cassette is not None and mode != "replay":
        files.check_output(cassette, inputs=inputs, appends=True)


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
    else:
        if base_url is not None:
            opts["base_url"] = base_url
        opts.update(server_limits(os.environ))
    try:
        with console.status(f"loading {uri}"):
            if cassette is not None:
                from ..llm.cassette import wrap

                return wrap(uri, cassette, mode=cassette_mode, **opts)
            return load(uri, **opts)
    finally:
        for bar in bars:
            bar.stop()

"""Opening a model by URI for the commands: a progress bar while embedded weights are assembled, optional cassette;
and the options every evaluation command shares to say where its episodes run (`--executor`, `--jobs`,
`--ray-address`)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from .. import files
from ..errors import DataError, SituatedError
from ..eval.executors import EXECUTORS, Executor, ModelSpec, choose_executor
from ..llm import LLM, load, parse_uri
from ..llm.models import prompt_states_dir
from .render import input_files

BaseUrlOpt = Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible server (else OPENAI_BASE_URL).")]
ThreadsOpt = Annotated[int | None, typer.Option("--threads", help="llama.cpp threads (default: all cores).")]
ExecutorOpt = Annotated[str, typer.Option(
    "--executor", help=f"Where episodes run: {'|'.join(EXECUTORS)} (local: this process, or with --jobs N N worker "
                       "processes, threads for a server model; batched: N episodes decoded together by one "
                       "embedded model; ray: a Ray cluster). See docs/scale.md.")]
JobsOpt = Annotated[int, typer.Option("--jobs", help="Episodes at once (processes, threads, sequences or Ray CPUs).")]
RayAddressOpt = Annotated[str | None, typer.Option(
    "--ray-address", help="Ray cluster to run on (else RAY_ADDRESS, else a local Ray instance).")]

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


@contextmanager
def _weights_bar(console: Console) -> Iterator[Callable[[int, int], None]]:
    """A progress callback drawing a bar while embedded weights are assembled (nothing when none are)."""
    bars: list[Progress] = []

    def on_bytes(done: int, total: int) -> None:
        if not bars:
            bar = Progress(TextColumn("assembling model weights"), BarColumn(), DownloadColumn(),
                           TimeRemainingColumn(), console=console, transient=True)
            bar.start()
            bar.add_task("weights", total=total)
            bars.append(bar)
        bars[0].update(bars[0].task_ids[0], completed=done, total=total)

    try:
        yield on_bytes
    finally:
        for bar in bars:
            bar.stop()


CONVERSATION_STATES = 20
"""Saved KV states of an embedded model that serves conversations: the three built-in scenes' planner prompts and
the sandbox's side questions (unknown word, known object, naming, action word, verb, misheard verb, request,
reading, place, lesson start, lesson end, first step, announcement, ...) stay warm; about 28 KB a token for the
1.5B model (a planner prompt of 2,000 tokens: 57 MB; a side question's: 8-15 MB)."""


def open_model(uri: str, *, cassette: Path | None = None, cassette_mode: str = "replay", threads: int | None = None,
               base_url: str | None = None, console: Console | None = None, n_ctx: int | None = None,
               conversation: bool = False) -> LLM:
    """Load `uri` (`llamacpp:...` or `openai:...`), optionally recording/replaying its calls in `cassette`;
    `n_ctx` sets an embedded model's context (default 8192). `conversation`: the model answers the turns of
    conversations (the sandbox); an embedded model then reuses every cached token a turn shares with the last
    and keeps `CONVERSATION_STATES` prompts warm (`situated.llm.llamacpp`), and its fresh prompts' states on disk
    for later processes (`prompt_states_dir`: `$SITUATED_PROMPT_STATES`, `off` for none)."""
    console = console or Console(stderr=True)
    opts: dict[str, Any] = {}
    with _weights_bar(console) as on_bytes:
        if parse_uri(uri).embedded:
            opts["progress"] = on_bytes
            if threads is not None:
                opts["n_threads"] = threads
            if n_ctx is not None:
                opts["n_ctx"] = n_ctx
            if conversation:
                opts |= {"exact_prefix": False, "state_cache": CONVERSATION_STATES,
                         "prompt_states": prompt_states_dir()}
        else:
            if base_url is not None:
                opts["base_url"] = base_url
            opts.update(server_limits(os.environ))
        with console.status(f"loading {uri}"):
            if cassette is not None:
                from ..llm.cassette import wrap

                return wrap(uri, cassette, mode=cassette_mode, **opts)
            return load(uri, **opts)


def evaluation_model(uri: str, *, executor: str, jobs: int, ray_address: str | None = None,
                     cassette: Path | None = None, cassette_mode: str = "replay", threads: int | None = None,
                     base_url: str | None = None, console: Console | None = None,
                     n_ctx: int | None = None, lora: Path | None = None) -> tuple[Executor, ModelSpec]:
    """The executor for `--executor/--jobs/--ray-address` and how its workers open `uri` (`n_ctx`: an embedded
    model's context; `lora`: a LoRA GGUF for an embedded model). Embedded weights are assembled here first (with a
    progress bar), so that workers on this machine only load them."""
    spec = ModelSpec(uri, base_url=base_url, threads=threads, cassette=str(cassette.resolve()) if cassette else None,
                     cassette_mode=cassette_mode, n_ctx=n_ctx, lora=str(lora.resolve()) if lora else None,
                     server_limits=() if parse_uri(uri).embedded else tuple(server_limits(os.environ).items()))
    chosen, spec = choose_executor(executor, jobs, spec, ray_address=ray_address)
    if spec is not None and spec.loads_weights:
        from ..llm.models import REGISTRY, ensure_model

        name = parse_uri(uri).target
        if name in REGISTRY:
            with _weights_bar(console or Console(stderr=True)) as on_bytes:
                ensure_model(name, progress=on_bytes)
    assert spec is not None
    return chosen, spec


@dataclass(frozen=True)
class CommandModels:
    """The `ModelSource` of a command (`eval.model_source`): its model options, opened with progress on stderr."""

    cassette: Path | None = None
    cassette_mode: str = "replay"
    threads: int | None = None
    base_url: str | None = None
    executor: str = "local"
    jobs: int = 1
    ray_address: str | None = None
    console: Console = field(default_factory=lambda: Console(stderr=True))

    def open(self, uri: str) -> LLM:
        return open_model(uri, cassette=self.cassette, cassette_mode=self.cassette_mode, threads=self.threads,
                          base_url=self.base_url, console=self.console)

    def for_episodes(self, uri: str, *, n_ctx: int | None = None,
                     lora: Path | None = None) -> tuple[Executor, ModelSpec]:
        if lora is not None and (not parse_uri(uri).embedded or self.cassette or self.executor == "batched"):
            raise SituatedError("--lora needs an embedded --model llamacpp:..., without --cassette or --executor "
                                "batched")
        return evaluation_model(uri, executor=self.executor, jobs=self.jobs, ray_address=self.ray_address,
                                cassette=self.cassette, cassette_mode=self.cassette_mode, threads=self.threads,
                                base_url=self.base_url, console=self.console, n_ctx=n_ctx, lora=lora)

    def without_model(self) -> Executor:
        return choose_executor(self.executor, self.jobs, ray_address=self.ray_address)[0]

    def check_cassette(self, inputs: Sequence[Path] = ()) -> None:
        check_cassette(self.cassette, self.cassette_mode, input_files(*inputs))

"""Where an evaluation gets its model from: the `ModelSource` a command hands to the library's preparation
functions, so that they decide which model to open and when (after every cheap check), while the command keeps
how (progress bars, cassettes, threads, servers) and where episodes run (`eval.executors`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from ..llm.base import LLM
from .executors import Executor, ModelSpec


class ModelSource(Protocol):
    def open(self, uri: str) -> LLM:
        """The model `uri`, loaded in this process (with the command's cassette, threads, server)."""
        ...

    def for_episodes(self, uri: str, *, n_ctx: int | None = None,
                     lora: Path | None = None) -> tuple[Executor, ModelSpec]:
        """The executor that runs episodes and how its workers open `uri` (with the LoRA adapter `lora`, a
        llama.cpp GGUF, applied to an embedded model)."""
        ...

    def without_model(self) -> Executor:
        """The executor for episodes that call no model."""
        ...

    def check_cassette(self, inputs: Sequence[Path] = ()) -> None:
        """DataError when a cassette that may be written is one of `inputs` (or not a writable file)."""
        ...

"""Sampled runs of household planners (`eval progprompt --temperature T`): every model call sampled, seeded.

The planners decode greedily (temperature 0). For runs that measure variance (the paper: 5 runs, mean ± std) a
`SampledLLM` stands between planner and model: at temperature T > 0 each call is sampled at T with a seed drawn
from (seed, run, prompt), so the runs of a task differ, a rerun repeats them exactly, and resuming a store gives
the episodes it would have written. At T = 0 calls pass through unchanged (greedy; runs differ only in grounding).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

from ...errors import SituatedError
from ...llm.base import LLM, Completion

MAX_TEMPERATURE = 2.0


def check_temperature(temperature: float) -> None:
    """SituatedError unless 0 <= temperature <= MAX_TEMPERATURE."""
    if not 0.0 <= temperature <= MAX_TEMPERATURE:
        raise SituatedError(f"--temperature must be between 0 and {MAX_TEMPERATURE:g}, got {temperature}")


def call_seed(seed: int, run: int, prompt: str) -> int:
    """The sampling seed of one call: the same for the same (seed, run, prompt), different across runs."""
    return zlib.crc32(f"{seed}:{run}:{prompt}".encode()) & 0x7FFFFFFF


class SampledLLM:
    """`llm` with every completion sampled at `temperature` (when > 0), seeded by (seed, run, prompt); set `run`
    before each episode. At temperature 0 every call passes through unchanged."""

    def __init__(self, llm: LLM, temperature: float, seed: int = 0) -> None:
        check_temperature(temperature)
        self.llm, self.temperature, self.seed, self.run = llm, temperature, seed, 0
        self.uri = llm.uri

    def complete(self, prompt: str, *, stop: Sequence[str] = (), max_tokens: int = 256, temperature: float = 0.0,
                 frequency_penalty: float = 0.0, grammar: str | None = None, seed: int = 0) -> Completion:
        if self.temperature > 0:
            temperature, seed = self.temperature, call_seed(self.seed, self.run, prompt)
        return self.llm.complete(prompt, stop=stop, max_tokens=max_tokens, temperature=temperature,
                                 frequency_penalty=frequency_penalty, grammar=grammar, seed=seed)

    def json(self, messages: list[dict], schema: dict, *, max_tokens: int = 512, temperature: float = 0.0,
             seed: int = 0) -> Any:
        return self.llm.json(messages, schema, max_tokens=max_tokens, temperature=temperature, seed=seed)

    def count_tokens(self, text: str) -> int:
        return self.llm.count_tokens(text)

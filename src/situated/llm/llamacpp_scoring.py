"""Scoring given continuations of a prompt with the embedded llama.cpp model (decisions by probability).

`score_continuations(engine, prompt, continuations)` evaluates the prompt once (reusing the engine's cached KV
prefix, as `complete` does), takes the first token of every continuation from the prompt's last logits, and
evaluates only the continuations' own tokens after it, one at a time, rewinding the KV cache to the prompt
between continuations. Continuations that share leading tokens share those evaluations. The context is left
holding exactly the prompt, so the next `complete` on the same prompt reuses all of it.

Each continuation is tokenized on its own (no BOS), as the model would have generated it after the prompt's
tokens; the prompt should therefore end where a token ends (e.g. "3." before " left\\n").
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import llama_cpp
import numpy as np

from situated.errors import BackendError
from situated.llm.base import Scores


def _log_softmax(ctx: Any, n_vocab: int) -> np.ndarray:
    """Natural-log probabilities of the next token, from the context's last logits (float64)."""
    logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, -1), shape=(n_vocab,)).astype(np.float64)
    top = logits.max()
    return logits - (top + np.log(np.exp(logits - top).sum()))


def score_continuations(engine: Any, prompt: str, continuations: Sequence[str], *, n_ctx: int,
                        reuse_prefix: bool = True, where: str = "llamacpp") -> Scores:
    """Log-probability (natural log, summed over tokens) of each continuation following `prompt`.

    `engine` is the backend's `_Engine` (a `llama_cpp.Llama` as `.llama`, its lock, `prepare`)."""
    start = time.perf_counter()
    llama = engine.llama
    tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
    if not tokens:
        raise BackendError(f"{where}: empty prompt")
    pieces = [tuple(llama.tokenize(c.encode("utf-8"), add_bos=False, special=True)) for c in continuations]
    longest = max((len(p) for p in pieces), default=0)
    if len(tokens) + longest >= n_ctx:
        raise BackendError(
            f"{where}: prompt and continuation need {len(tokens) + longest} tokens, context holds {n_ctx}"
        )
    n_vocab = engine.n_vocab
    with engine.lock:
        cached = engine.prepare(tokens, reuse_prefix)
        n_prompt = llama.n_tokens
        memo: dict[tuple[int, ...], np.ndarray] = {(): _log_softmax(engine.ctx, n_vocab)}
        live: list[int] = []  # continuation tokens evaluated after the prompt, in the KV cache now
        try:
            totals = []
            for piece in pieces:
                total = 0.0
                for i, token in enumerate(piece):
                    key = piece[:i]
                    if key not in memo:
                        _advance(engine, n_prompt, live, key, memo)
                    total += float(memo[key][token])
                totals.append(total)
        finally:
            llama.n_tokens = n_prompt
            llama._ctx.kv_cache_seq_rm(-1, n_prompt, -1)
    return Scores(tuple(totals), prompt_tokens=len(tokens), cached_tokens=cached,
                  seconds=time.perf_counter() - start)


def _advance(engine: Any, n_prompt: int, live: list[int], key: tuple[int, ...],
             memo: dict[tuple[int, ...], np.ndarray]) -> None:
    """Bring the context to prompt + `key`, one token at a time from the longest evaluated shared prefix,
    remembering the next-token log-probabilities after each."""
    llama = engine.llama
    common = 0
    for a, b in zip(live, key, strict=False):
        if a != b:
            break
        common += 1
    del live[common:]
    llama.n_tokens = n_prompt + common  # `eval` drops the KV cells from n_tokens on
    for token in key[common:]:
        llama.eval([token])
        live.append(token)
        memo[tuple(live)] = _log_softmax(engine.ctx, engine.n_vocab)

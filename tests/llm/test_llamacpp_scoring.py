"""Scoring continuations with the embedded llama.cpp backend, on the real 0.5B model (short prompts)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from situated.errors import BackendError

llama_cpp = pytest.importorskip("llama_cpp", reason="needs llama-cpp-python")

from situated.llm.cassette import wrap  # noqa: E402
from situated.llm.llamacpp import CHUNK, LlamaCppLLM  # noqa: E402

pytestmark = pytest.mark.slow

PROMPT = (
    "Actions: forward, left, right, stop, turn_around.\nDirections: Turn left at the light.\n"
    "1. forward\nThere is a 4-way intersection.\n2."
)



def reference_logprob(llm: LlamaCppLLM, prompt: str, continuation: str) -> float:
    """The same sum the plain way: a cleared context, the prompt evaluated whole, then one token at a time
    with its log-probability read before it is evaluated (no KV rewinds, no shared prefixes)."""
    llama = llm._engine.llama
    clear(llm)
    llama.eval(llama.tokenize(prompt.encode(), add_bos=True, special=True))
    total = 0.0
    for token in llama.tokenize(continuation.encode(), add_bos=False, special=True):
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama.ctx, -1), shape=(llama.n_vocab(),))
        logits = logits.astype(np.float64)
        total += float(logits[token] - logits.max() - np.log(np.exp(logits - logits.max()).sum()))
        llama.eval([token])
    return total


def clear(llm: LlamaCppLLM) -> None:
    """Empty the context, so that the next call evaluates its prompt in one batch: llama.cpp's float results
    depend on batching (a prompt after a cached prefix differs by a few hundredths of a nat per token)."""
    llm._engine.llama.reset()
    llm._engine.llama._ctx.kv_cache_clear()


def test_the_models_own_greedy_continuation_beats_an_absurd_one(llm: LlamaCppLLM) -> None:
    prompt = "def add(a, b):\n    return"
    done = llm.complete(prompt, max_tokens=4, stop=["\n"])
    greedy = done.text
    assert greedy.strip()
    scores = llm.score(prompt, [greedy, " banana elephant ladder", ""])
    assert scores.logprobs[0] > scores.logprobs[1] + 10
    assert scores.logprobs[2] == 0.0  # nothing to say costs nothing
    assert all(v <= 0.0 for v in scores.logprobs)
    assert scores.prompt_tokens == done.prompt_tokens


def test_scores_agree_with_summing_logprobs_token_by_token(llm: LlamaCppLLM) -> None:
    continuations = [" left\n", " turn_around\n", " turn left\n"]  # two share " turn"
    clear(llm)
    scores = llm.score(PROMPT, continuations)
    for continuation, value in zip(continuations, scores.logprobs, strict=True):
        assert value == pytest.approx(reference_logprob(llm, PROMPT, continuation), abs=1e-6), continuation
    clear(llm)
    alone = llm.score(PROMPT, [continuations[2]])
    assert alone.logprobs[0] == pytest.approx(scores.logprobs[2], abs=1e-6)
    assert len({round(v, 1) for v in scores.logprobs}) == len(continuations)


def test_single_token_probabilities_sum_to_at_most_one(llm: LlamaCppLLM) -> None:
    words = [" forward", " left", " right", " stop"]
    assert all(llm.count_tokens(w) == 1 for w in words)
    total = sum(math.exp(v) for v in llm.score(PROMPT, words).logprobs)
    assert 0.0 < total <= 1.0 + 1e-6


def test_scoring_leaves_the_prompt_warm_for_the_next_completion(llm: LlamaCppLLM) -> None:
    before = llm.complete(PROMPT, max_tokens=3, stop=["\n"])
    scored = llm.score(PROMPT, [" left\n", " stop\n"])
    after = llm.complete(PROMPT, max_tokens=3, stop=["\n"])
    assert scored.cached_tokens >= scored.prompt_tokens - CHUNK     # whole chunks of the prompt
    assert after.cached_tokens >= after.prompt_tokens - CHUNK
    assert after.text == before.text


def test_too_long_for_the_context_is_a_backend_error(llm: LlamaCppLLM) -> None:
    with pytest.raises(BackendError, match="context holds 2048"):
        llm.score("walk " * 2100, [" left"])


def test_cassette_records_and_replays_scores_without_the_model(llm: LlamaCppLLM, tmp_path) -> None:
    path = tmp_path / "scores.jsonl"
    recorded = wrap(llm, path, "record").score(PROMPT, [" left\n", " stop\n"])
    replayed = wrap("llamacpp:qwen2.5-coder-0.5b", path, "replay").score(PROMPT, [" left\n", " stop\n"])
    assert replayed == recorded
    with pytest.raises(BackendError, match="not in cassette"):
        wrap("llamacpp:qwen2.5-coder-0.5b", path, "replay").score(PROMPT, [" right\n"])

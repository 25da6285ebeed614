"""Sampling under a grammar (`llamacpp_sampling.SampleFirstGrammar`): the allowed tokens' renormalised
distribution, whichever path a draw takes, and seeded, grammatical samples from the real 0.5B model."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

llama_cpp = pytest.importorskip("llama_cpp", reason="needs llama-cpp-python")

from situated.llm import grammar_sampling as gs  # noqa: E402
from situated.llm.llamacpp import LlamaCppLLM, model_path  # noqa: E402
from situated.llm.llamacpp_sampling import SampleFirstGrammar  # noqa: E402


@pytest.fixture(scope="module")
def vocab_model() -> llama_cpp.Llama:
    return llama_cpp.Llama(model_path=str(model_path("qwen2.5-coder-0.5b")), vocab_only=True, verbose=False)


@pytest.mark.parametrize("rejected_logit", [-30.0, 2.0])  # the first draw mostly allowed / mostly rejected
def test_draws_follow_the_allowed_tokens_renormalised(vocab_model: llama_cpp.Llama, rejected_logit: float,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    n = vocab_model.n_vocab()
    a, b, c = (vocab_model.tokenize(x.encode(), add_bos=False, special=False)[0] for x in "abc")
    logits = np.full(n, -30.0, dtype=np.float32)
    logits[a], logits[b], logits[c] = 1.0, 0.0, rejected_logit
    monkeypatch.setattr(gs, "_logits", lambda ctx, n_vocab, row=-1: logits)
    drawn = []
    for seed in range(300):
        selector = SampleFirstGrammar(None, vocab_model._model.vocab, n, 'root ::= "a" | "b"', 1.0, 0.0, seed, "t")
        drawn.append(selector.select())
        selector.close()
    assert set(drawn) == {a, b}  # never a token the grammar rejects
    expected = math.e / (math.e + 1)  # p(a) / (p(a) + p(b))
    assert abs(drawn.count(a) / len(drawn) - expected) < 0.08  # 3 standard errors of 300 draws


@pytest.mark.slow
def test_sampled_plans_are_grammatical_seeded_and_varied() -> None:
    llm = LlamaCppLLM("qwen2.5-coder-0.5b", n_ctx=2048, n_threads=2)
    grammar = r"""
root   ::= line line
line   ::= action "('" object "')\n"
action ::= "walk" | "grab" | "open" | "close" | "switchon"
object ::= "kitchen" | "fridge" | "mug" | "sink" | "microwave" | "salmon" | "tv" | "sofa"
"""
    prompt = "# heat the salmon in the microwave, one action per line\n"
    texts = [llm.complete(prompt, grammar=grammar, temperature=1.0, seed=seed, max_tokens=24).text
             for seed in (1, 2, 3, 1)]
    line = re.compile(r"(walk|grab|open|close|switchon)\('(kitchen|fridge|mug|sink|microwave|salmon|tv|sofa)'\)")
    assert all(len(t.splitlines()) == 2 and all(line.fullmatch(x) for x in t.splitlines()) for t in texts)
    assert texts[3] == texts[0]          # the same seed draws the same plan
    assert len(set(texts[:3])) > 1       # other seeds draw others

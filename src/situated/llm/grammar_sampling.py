"""Token selection for the embedded backend, including greedy grammar decoding with the greedy-first trick.

llama.cpp's grammar sampler checks every token of the vocabulary (about 152k for Qwen) against the grammar at
every step. At temperature 0 the answer is the best allowed token, and most of the time the plain argmax is
already allowed; `GreedyFirstGrammar` therefore tests only the argmax (the grammar sampler applied to a
one-candidate array) and runs the full check only when that token is rejected. The result is identical to the
library's `penalties → grammar → greedy` chain: same penalised logits, same first-maximum tie break.
"""

from __future__ import annotations

import ctypes
from collections import Counter, deque
from typing import Any, Protocol

import llama_cpp
import numpy as np

from situated.errors import BackendError
from situated.llm.jump_forward import ForcedText, JsonSpacing

PENALTY_LAST_N = 64
"""llama-cpp-python's default `last_n_tokens_size`: the penalty counts the last 64 generated tokens."""


class TokenSelector(Protocol):
    """Chooses the next token from the context's last logits; None when no token is allowed (dead end)."""

    def select(self) -> int | None: ...

    def close(self) -> None: ...


def _logits(ctx: Any, n_vocab: int, row: int = -1) -> np.ndarray:
    """The logits of one row of the last batch (-1: its last token)."""
    pointer = llama_cpp.llama_get_logits_ith(ctx, row)
    return np.ctypeslib.as_array(pointer, shape=(n_vocab,))


def init_grammar(vocab: Any, grammar: str, where: str) -> Any:
    """A llama.cpp grammar sampler for GBNF text (root rule `root`); BackendError when it does not parse."""
    sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode("utf-8"), b"root")
    if not sampler:
        first = grammar.strip().splitlines()[0][:80] if grammar.strip() else ""
        raise BackendError(f"{where}: invalid GBNF grammar (needs a 'root' rule), starting {first!r}")
    return sampler


class _Penalised:
    """Frequency penalty over the last PENALTY_LAST_N generated tokens, in float32 like llama.cpp."""

    def __init__(self, frequency_penalty: float) -> None:
        self._penalty = np.float32(frequency_penalty)
        self._recent: deque[int] = deque(maxlen=PENALTY_LAST_N)

    def scores(self, logits: np.ndarray) -> np.ndarray:
        if not self._penalty or not self._recent:
            return logits
        scores = logits.copy()
        for token, count in Counter(self._recent).items():
            scores[token] = scores[token] - (np.float32(count) * self._penalty + np.float32(0.0))
        return scores

    def accept(self, token: int) -> None:
        self._recent.append(token)


class Greedy:
    """Temperature 0 without a grammar: the argmax of the (penalised) logits."""

    row = -1
    """Which row of the last batch's logits to choose from (a batched engine sets each sequence's)."""

    def __init__(self, ctx: Any, n_vocab: int, frequency_penalty: float) -> None:
        self._ctx, self._n_vocab = ctx, n_vocab
        self._penalty = _Penalised(frequency_penalty)

    def select(self) -> int | None:
        token = int(np.argmax(self._penalty.scores(_logits(self._ctx, self._n_vocab, self.row))))
        self._penalty.accept(token)
        return token

    def close(self) -> None:
        pass


class GreedyFirstGrammar:
    """Temperature 0 with a grammar: test the argmax alone; full-vocabulary check only when it is rejected."""

    row = -1

    def __init__(
        self, ctx: Any, vocab: Any, n_vocab: int, grammar: str, frequency_penalty: float, where: str,
        forced: ForcedText | None = None,
    ):
        """`forced`: find the text the grammar forces after each token (`jump_forward`), for JSON answers."""
        self._ctx, self._n_vocab = ctx, n_vocab
        self._forced = forced
        self._spacing = JsonSpacing()
        self.jumps = 0
        """Forced characters appended without a model step."""
        self._penalty = _Penalised(frequency_penalty)
        self._grammar = init_grammar(vocab, grammar, where)
        self._one = (llama_cpp.llama_token_data * 1)()
        self._one_array = llama_cpp.llama_token_data_array(
            data=ctypes.cast(self._one, llama_cpp.llama_token_data_p), size=1, selected=-1, sorted=False
        )
        self._all = np.zeros(
            n_vocab, dtype=np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)
        )
        self._all_array = llama_cpp.llama_token_data_array(
            data=self._all.ctypes.data_as(llama_cpp.llama_token_data_p),
            size=n_vocab,
            selected=-1,
            sorted=False,
        )
        self._ids = np.arange(n_vocab, dtype=np.intc)
        self.steps = 0
        self.full_checks = 0

    def _allowed(self, token: int, logit: float) -> bool:
        self._one[0].id, self._one[0].logit, self._one[0].p = token, logit, 0.0
        self._one_array.size, self._one_array.selected = 1, -1
        llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(self._one_array))
        return self._one[0].logit != -np.inf

    def _allowed_scores(self, scores: np.ndarray) -> np.ndarray:
        """`scores` (indexed by token id) with the tokens the grammar rejects here at -inf: the whole-vocabulary
        check, counted in `full_checks`."""
        self.full_checks += 1
        self._all["id"] = self._ids
        self._all["logit"] = scores
        self._all["p"] = 0.0
        self._all_array.size, self._all_array.selected, self._all_array.sorted = self._n_vocab, -1, False
        llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(self._all_array))
        filtered = np.full(self._n_vocab, -np.inf, dtype=np.float32)
        filtered[self._all["id"]] = self._all["logit"]
        return filtered

    def _best_allowed(self, scores: np.ndarray) -> int | None:
        filtered = self._allowed_scores(scores)
        best = int(np.argmax(filtered))
        return None if filtered[best] == -np.inf else best

    def select(self) -> int | None:
        self.steps += 1
        scores = self._penalty.scores(_logits(self._ctx, self._n_vocab, self.row))
        token: int | None = int(np.argmax(scores))
        if not self._allowed(token, float(scores[token])):
            token = self._best_allowed(scores)
        if token is not None:
            llama_cpp.llama_sampler_accept(self._grammar, token)
            self._penalty.accept(token)
        return token

    @property
    def jumps_forward(self) -> bool:
        return self._forced is not None

    def feed(self, text: str) -> None:
        """Tell the JSON spacing what the chosen token wrote."""
        self._spacing.feed(text)

    def forced(self, limit: int) -> tuple[str, bool]:
        """The text the grammar forces from here (accepted into it), and whether the answer is then complete;
        ("", False) without jump-forward."""
        if self._forced is None or self._grammar is None:
            return "", False
        text, done = self._forced.run(self._grammar, self._spacing, limit)
        self.jumps += len(text)
        return text, done

    def accept_forced(self, tokens: list[int]) -> None:
        """Count the tokens that carry forced text in the frequency penalty, as if the model had chosen them."""
        for token in tokens:
            self._penalty.accept(token)

    def close(self) -> None:
        if self._grammar:
            llama_cpp.llama_sampler_free(self._grammar)
            self._grammar = None


class Chain:
    """llama.cpp's own sampler chain: penalties → [grammar] → (greedy | temperature + seeded dist).

    Used for temperature > 0 and as the reference "plain" grammar path. Never adds top-k next to a grammar.
    """

    row = -1

    def __init__(
        self,
        ctx: Any,
        vocab: Any,
        n_vocab: int,
        *,
        grammar: str | None,
        temperature: float,
        frequency_penalty: float,
        seed: int,
        where: str,
    ) -> None:
        self._ctx = ctx
        self._chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
        add = llama_cpp.llama_sampler_chain_add
        penalties = llama_cpp.llama_sampler_init_penalties(
            n_vocab, PENALTY_LAST_N, 1.0, frequency_penalty, 0.0
        )
        add(self._chain, penalties)
        if grammar is not None:
            add(self._chain, init_grammar(vocab, grammar, where))
        if temperature <= 0.0:
            add(self._chain, llama_cpp.llama_sampler_init_greedy())
        else:
            add(self._chain, llama_cpp.llama_sampler_init_temp(temperature))
            add(self._chain, llama_cpp.llama_sampler_init_dist(seed & 0xFFFFFFFF))

    def select(self) -> int | None:
        return int(llama_cpp.llama_sampler_sample(self._chain, self._ctx, self.row))

    def close(self) -> None:
        if self._chain:
            llama_cpp.llama_sampler_free(self._chain)
            self._chain = None

"""Jump-forward decoding for JSON answers: text the grammar forces is appended without asking the model.

Under a JSON schema's grammar much of an answer is fixed once the model has chosen a branch: after `{"g` only
`oal"` can follow; after `"rel` in an enum of calls only `ease()"`. Decoding those characters token by token
costs one model step each (about 90 ms for the 1.5B on 2 cores) and the model has no choice in them. `ForcedText`
finds them by asking the grammar sampler which single characters may come next.

The converted grammar also leaves a choice that carries no meaning: an optional space (`space ::= " "?`) after
most structural characters. By default (`JsonSpacing()`) that choice is the model's, so it chooses at every branch
exactly what it would without jumps. `JsonSpacing(canonical=True)` settles it as `json.dumps` writes it and forces
much more, but it moves the model off the spacing it prefers; measured on the sandbox's sessions that changed its
answers for the worse (docs/benchmarks.md), so it is not used by the backend.

The forced characters are then tokenized together with the token the model chose before them and evaluated in one
batch (SGLang's "jump-forward" with re-tokenization). What the model chooses at every real branch is the same
argmax over the same grammar; the tokens that carry forced text are the tokenizer's, not the model's, so logits
after them may differ slightly from a decode without jumps (measured in `benchmarks/sandbox_jump_forward.py`).

Probing covers printable ASCII and one character of each wider Unicode class (Latin-1, BMP, a CJK ideograph); a
grammar that allows exactly one probed character but also an unprobed one would be forced wrongly, so a string the
grammar lets hold arbitrary text is never forced (it allows many probed characters at once).
"""

from __future__ import annotations

import ctypes
from typing import Any

import llama_cpp
import numpy as np

PROBE_CHARS = "".join(chr(c) for c in range(32, 127)) + "\u00e9\u00fc\u4e2d"
"""The characters whose single-character tokens are offered to the grammar at each forced step."""
OPENERS_SPACED = ":,"
"""Outside strings, `json.dumps` writes a space after these and nowhere else."""


class JsonSpacing:
    """Where the text so far stands for JSON spacing: inside a string or not, and the last character outside one."""

    def __init__(self, canonical: bool = False) -> None:
        self.canonical = canonical
        """Settle the grammar's optional space as json.dumps does (else the model chooses it)."""
        self.in_string = False
        self._escape = False
        self.last = ""
        self._spaced = False

    def feed(self, text: str) -> None:
        for ch in text:
            self._spaced = ch == " " and not self.in_string
            if self.in_string:
                if self._escape:
                    self._escape = False
                elif ch == "\\":
                    self._escape = True
                elif ch == '"':
                    self.in_string = False
            elif ch == '"':
                self.in_string = True
                self.last = ch
            elif not ch.isspace():
                self.last = ch

    def wants_space(self) -> bool:
        """Whether `json.dumps` would write a space here (outside strings, after `:` or `,`)."""
        return not self.in_string and not self._spaced and self.last != "" and self.last in OPENERS_SPACED


class ForcedText:
    """The characters a grammar forces next, found by probing it with single-character tokens."""

    def __init__(self, llama: Any, vocab: Any, n_vocab: int) -> None:
        self._by_char: dict[str, int] = {}
        for ch in PROBE_CHARS:
            ids = llama.tokenize(ch.encode("utf-8"), add_bos=False, special=False)
            if len(ids) == 1 and 0 <= ids[0] < n_vocab:
                self._by_char[ch] = int(ids[0])
        self._ends = sorted({int(t) for t in (llama_cpp.llama_vocab_eos(vocab), llama_cpp.llama_vocab_eot(vocab))
                             if 0 <= int(t) < n_vocab})
        self._ids = list(self._by_char.values()) + self._ends
        self._chars = list(self._by_char)
        size = len(self._ids)
        self._data = np.zeros(size, dtype=np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)],
                                                    align=True))
        self._array = llama_cpp.llama_token_data_array(
            data=self._data.ctypes.data_as(llama_cpp.llama_token_data_p), size=size, selected=-1, sorted=False)

    def allowed(self, grammar: Any) -> tuple[list[str], bool]:
        """The probed characters `grammar` allows next, and whether it allows the end of generation."""
        self._data["id"] = self._ids
        self._data["logit"] = 0.0
        self._data["p"] = 0.0
        self._array.size, self._array.selected, self._array.sorted = len(self._ids), -1, False
        llama_cpp.llama_sampler_apply(grammar, ctypes.byref(self._array))
        ok = {int(i) for i, logit in zip(self._data["id"], self._data["logit"], strict=True) if logit != -np.inf}
        return [c for c in self._chars if self._by_char[c] in ok], any(t in ok for t in self._ends)

    def run(self, grammar: Any, spacing: JsonSpacing, limit: int) -> tuple[str, bool]:
        """Accept into `grammar` the characters it forces from here (at most `limit`); return them and whether the
        grammar then allows only the end (the answer is complete). With `spacing.canonical`, the optional space
        is settled as `json.dumps` writes it; otherwise any choice, a space included, is left to the model."""
        text: list[str] = []
        while len(text) < limit:
            chars, end = self.allowed(grammar)
            meaningful = chars if spacing.in_string else [c for c in chars if c != " "]
            if end and not meaningful and not (chars and not spacing.canonical):
                return "".join(text), True
            if end or not chars or (len(chars) > 1 and not (spacing.canonical and len(meaningful) == 1)):
                return "".join(text), False
            ch = chars[0] if len(chars) == 1 else (" " if spacing.wants_space() else meaningful[0])
            llama_cpp.llama_sampler_accept(grammar, self._by_char[ch])
            spacing.feed(ch)
            text.append(ch)
        return "".join(text), False

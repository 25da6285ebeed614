"""Test helpers for the EAI answer grammar: a GBNF → regex translation for its (non-recursive) subset, and a
llama.cpp acceptance check that feeds a text's tokens through llama.cpp's own grammar sampler."""

from __future__ import annotations

import re
from pathlib import Path

_TOKEN = re.compile(r'\s*(?:(?P<lit>"(?:[^"\\]|\\.)*")|(?P<ref>[a-z][a-z0-9-]*)|(?P<rep>\{\d+,\d*\})|(?P<op>[()|*+?]))')
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def _literal(text: str) -> str:
    body = re.sub(r"\\(.)", lambda m: _ESCAPES[m[1]], text[1:-1])
    return re.escape(body)


def gbnf_regex(grammar: str) -> re.Pattern[str]:
    """The regex of a GBNF grammar made of literals, rule references, groups, `|`, `*`, `+`, `?` and `{m,n}`
    (no recursion, no character classes), anchored at both ends."""
    rules: dict[str, str] = {}
    for line in grammar.splitlines():
        if line.strip():
            name, _, body = line.partition(" ::= ")
            rules[name.strip()] = body

    def expand(name: str, depth: int = 0) -> str:
        assert depth < 50, f"recursive rule {name}"
        out, pos, body = [], 0, rules[name]
        while pos < len(body):
            m = _TOKEN.match(body, pos)
            assert m, f"cannot read {body[pos:]!r} in rule {name}"
            pos = m.end()
            if m["lit"]:
                out.append(_literal(m["lit"]))
            elif m["ref"]:
                out.append(f"(?:{expand(m['ref'], depth + 1)})")
            elif m["rep"]:
                out.append(m["rep"])
            elif m["op"] == "(":
                out.append("(?:")
            else:
                out.append(m["op"])
            body_rest = body[pos:]
            if not body_rest.strip():
                break
        return "".join(out)

    return re.compile(expand("root") + r"\Z", re.DOTALL)


def accepts(grammar: str, text: str) -> bool:
    return gbnf_regex(grammar).match(text) is not None


class LlamaGrammarCheck:
    """llama.cpp's grammar sampler over a GGUF's vocabulary (loaded vocab-only): does it compile, and does it
    let a text through token by token and then end?"""

    def __init__(self, model: Path) -> None:
        import llama_cpp

        self._llama_cpp = llama_cpp
        self.llama = llama_cpp.Llama(model_path=str(model), vocab_only=True, verbose=False)
        self.vocab = self.llama._model.vocab

    def compiles(self, grammar: str) -> bool:
        sampler = self._llama_cpp.llama_sampler_init_grammar(self.vocab, grammar.encode(), b"root")
        if not sampler:
            return False
        self._llama_cpp.llama_sampler_free(sampler)
        return True

    def accepts(self, grammar: str, text: str) -> bool:
        import ctypes

        lc = self._llama_cpp
        sampler = lc.llama_sampler_init_grammar(self.vocab, grammar.encode(), b"root")
        assert sampler, "grammar does not compile"
        one = (lc.llama_token_data * 1)()
        array = lc.llama_token_data_array(data=ctypes.cast(one, lc.llama_token_data_p), size=1, selected=-1,
                                          sorted=False)

        def allowed(token: int) -> bool:
            one[0].id, one[0].logit, one[0].p = token, 1.0, 0.0
            array.size, array.selected = 1, -1
            lc.llama_sampler_apply(sampler, ctypes.byref(array))
            return one[0].logit != float("-inf")

        try:
            for token in self.llama.tokenize(text.encode(), add_bos=False, special=False):
                if not allowed(token):
                    return False
                lc.llama_sampler_accept(sampler, token)
            return allowed(self.llama.token_eos())
        finally:
            lc.llama_sampler_free(sampler)

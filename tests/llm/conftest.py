"""The embedded test-tier model for the llama.cpp backend's tests (skipped where it is not installed)."""

from __future__ import annotations

import pytest

from situated.errors import BackendError
from situated.llm import load
from situated.llm.llamacpp import LlamaCppLLM


@pytest.fixture(scope="module")
def llm() -> LlamaCppLLM:
    """`llamacpp:qwen2.5-coder-0.5b` with a 2,048-token context on 2 threads, one per test module."""
    try:
        model = load("llamacpp:qwen2.5-coder-0.5b", n_ctx=2048, n_threads=2)
    except BackendError as exc:
        if "is not installed" in str(exc):
            pytest.skip(str(exc))
        raise
    assert isinstance(model, LlamaCppLLM)
    return model

"""Language-model backends by URI: embedded llama.cpp, any OpenAI-compatible server; record/replay cassettes.

This layer knows nothing of plans or robots: it takes a prompt plus a grammar string or a JSON schema.
"""

from __future__ import annotations

from typing import Any

from ..errors import BackendError
from .base import LLM, Completion

__all__ = ["LLM", "Completion", "load"]


def load(uri: str, **opts: Any) -> LLM:
    """Open a backend by URI.

    - `llamacpp:qwen2.5-coder-1.5b` / `llamacpp:qwen2.5-coder-0.5b`: embedded model assembled from PyPI parts;
      `llamacpp:/path/to/model.gguf`: any local GGUF. Options: n_ctx, n_threads, seed, progress, state_cache.
    - `openai:<model>`: any OpenAI-compatible server. Options: base_url, api_key, timeout, retries.

    Record/replay is not a URI: wrap a backend with `situated.llm.cassette.wrap`.
    """
    scheme, sep, rest = uri.partition(":")
    if not sep or not rest:
        raise BackendError(f"bad model uri {uri!r}: expected 'llamacpp:<name|path.gguf>' or 'openai:<model>'")
    if scheme == "llamacpp":
        from .llamacpp import LlamaCppLLM

        return LlamaCppLLM(rest, **opts)
    if scheme == "openai":
        from .openai import OpenAILLM

        return OpenAILLM(rest, **opts)
    raise BackendError(f"bad model uri {uri!r}: unknown backend {scheme!r} (known: llamacpp, openai)")

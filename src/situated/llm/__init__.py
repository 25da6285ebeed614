"""Language-model backends by URI: embedded llama.cpp, any OpenAI-compatible server; record/replay cassettes.

This layer knows nothing of plans or robots: it takes a prompt plus a grammar string or a JSON schema.
"""

from __future__ import annotations

from typing import Any

from .base import LLM, Completion
from .chat_template import ChatTemplate, chat_template_for
from .uri import ModelURI, parse_uri

__all__ = ["LLM", "ChatTemplate", "Completion", "ModelURI", "chat_template_for", "load", "parse_uri"]


def load(uri: str, **opts: Any) -> LLM:
    """Open a backend by URI.

    - `llamacpp:qwen2.5-coder-1.5b` / `llamacpp:qwen2.5-coder-0.5b`: embedded model assembled from PyPI parts;
      `llamacpp:/path/to/model.gguf`: any local GGUF. Options: n_ctx, n_threads, seed, progress, state_cache.
    - `openai:<model>`: any OpenAI-compatible server. Options: base_url, api_key, timeout, retries.

    Record/replay is not a URI: wrap a backend with `situated.llm.cassette.wrap`.
    """
    parsed = parse_uri(uri)
    if parsed.embedded:
        from .llamacpp import LlamaCppLLM

        return LlamaCppLLM(parsed.target, **opts)
    from .openai import OpenAILLM

    return OpenAILLM(parsed.target, **opts)

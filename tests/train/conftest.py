"""Fixtures of the finetuning tests: the embedded 0.5B model's GGUF, and skips naming the install command."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from situated.errors import BackendError

TRAIN_EXTRA = "pip install 'situated[train]'"


def need(*modules: str) -> None:
    """Skip the test, with the install command, when a module of the train extra (or llama.cpp) is missing."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        hint = "pip install 'situated[llm]'" if missing == ["llama_cpp"] else TRAIN_EXTRA
        pytest.skip(f"needs {', '.join(missing)}: {hint}")


@pytest.fixture(scope="session")
def base_gguf() -> Path:
    """The embedded 0.5B model's GGUF (assembled in the user cache; skipped where its parts are not installed)."""
    from situated.llm.models import ensure_model

    try:
        return ensure_model("qwen2.5-coder-0.5b")
    except BackendError as exc:
        if "is not installed" in str(exc):
            pytest.skip(str(exc))
        raise

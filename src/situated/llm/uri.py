"""Model URIs (`llamacpp:<name|path.gguf>`, `openai:<model>`): read here and nowhere else."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import BackendError

SCHEMES = ("llamacpp", "openai")
"""Backends by URI scheme: the embedded llama.cpp models and any OpenAI-compatible server."""


@dataclass(frozen=True)
class ModelURI:
    """A parsed model URI: the backend's `scheme` and its `target` (a model name, a GGUF path or a server's
    model)."""

    scheme: str
    target: str

    def __str__(self) -> str:
        return f"{self.scheme}:{self.target}"

    @property
    def embedded(self) -> bool:
        """Whether the model runs in this process (llama.cpp) rather than on a server."""
        return self.scheme == "llamacpp"


def parse_uri(uri: str) -> ModelURI:
    """The parts of `uri`; BackendError saying what is wrong when it is not `<scheme>:<target>` with a known
    scheme."""
    scheme, sep, target = uri.partition(":")
    if not sep or not target:
        raise BackendError(f"bad model uri {uri!r}: expected 'llamacpp:<name|path.gguf>' or 'openai:<model>'")
    if scheme not in SCHEMES:
        raise BackendError(f"bad model uri {uri!r}: unknown backend {scheme!r} (known: {', '.join(SCHEMES)})")
    return ModelURI(scheme, target)

"""The base model to finetune, in float weights for torch: the embedded GGUF (transformers reads GGUF checkpoints
of the qwen2 architecture and dequantizes them) or a Hugging Face model directory; with its checksum.

`llamacpp:NAME` is an embedded model, assembled in the user cache as the navigate command assembles it
(`llm.models.ensure_model`); `llamacpp:PATH.gguf` a GGUF file; anything else a directory with config.json and
weights. Nothing is downloaded (transformers runs offline here).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from ..errors import BackendError, DataError
from ..llm.models import REGISTRY, Progress, ensure_model

INSTALL = "pip install 'situated[train]'"
"""How to install what training needs (torch, transformers, peft, gguf)."""


def require_train_extra() -> None:
    """BackendError with the install command when torch, transformers, peft or gguf is missing."""
    missing = [module for module in ("torch", "transformers", "peft", "gguf") if find_spec(module) is None]
    if missing:
        raise BackendError(f"training needs {', '.join(missing)}: {INSTALL}")


@dataclass
class BaseModel:
    """A loaded base: the torch model, its tokenizer, where it came from, its checksum and architecture."""

    uri: str
    model: Any
    tokenizer: Any
    sha256: str
    architecture: str
    gguf: Path | None
    """The GGUF the weights came from (its adapter runs on the embedded engine), None for a HF directory."""

    def tokenize(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])


def _sha256(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        with path.open("rb") as fh:
            while chunk := fh.read(8 << 20):
                digest.update(chunk)
    return digest.hexdigest()


def resolve_base(base: str, progress: Progress | None = None) -> tuple[Path, str | None, str]:
    """(directory or GGUF file, GGUF file name or None, sha256) of `--base`; DataError when it is neither."""
    if base.startswith("llamacpp:"):
        target = base.partition(":")[2]
        if target in REGISTRY:
            path = ensure_model(target, progress=progress)
            return path.parent, path.name, REGISTRY[target].sha256
        path = Path(target).expanduser()
        if not path.is_file():
            raise DataError(f"--base {base}: no such GGUF file (embedded models: {', '.join(sorted(REGISTRY))})")
        return path.parent, path.name, _sha256([path])
    directory = Path(base).expanduser()
    if not (directory / "config.json").is_file():
        raise DataError(f"--base {base}: neither llamacpp:NAME nor a Hugging Face model directory with config.json")
    weights = sorted([*directory.glob("*.safetensors"), *directory.glob("*.bin")])
    if not weights:
        raise DataError(f"--base {base}: no *.safetensors or *.bin weights in the directory")
    return directory, None, _sha256([directory / "config.json", *weights])


def load_base(base: str, *, threads: int | None = None, progress: Progress | None = None) -> BaseModel:
    """The float32 model and tokenizer of `--base` (see the module docstring)."""
    require_train_extra()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if threads:
        torch.set_num_threads(threads)
    directory, gguf_file, sha = resolve_base(base, progress)
    options: dict[str, Any] = {"gguf_file": gguf_file} if gguf_file else {}
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(directory), **options)
        model = AutoModelForCausalLM.from_pretrained(str(directory), dtype=torch.float32, **options)
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise DataError(f"--base {base}: transformers cannot load it: {' '.join(str(exc).split())[:160]}") from None
    model.config.use_cache = True
    if torch.cuda.is_available():  # a GPU machine: train there (the CPU run is the smoke slice)
        model.to("cuda")
    architecture = str(getattr(model.config, "model_type", "") or "")
    return BaseModel(base, model, tokenizer, sha, architecture, directory / gguf_file if gguf_file else None)

"""The adapter in llama.cpp's LoRA GGUF format: names and shapes llama.cpp accepts, applied by the embedded engine;
a corrupt or mismatched adapter is a one-line error with exit code 2."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import situated.cli as cli
from situated.errors import BackendError, DataError
from situated.train.lora_gguf import llama_cpp_name
from train.conftest import need


def test_peft_names_become_llama_cpp_tensor_names() -> None:
    assert llama_cpp_name("base_model.model.model.layers.3.self_attn.q_proj.lora_A.weight") == \
        "blk.3.attn_q.weight.lora_a"
    assert llama_cpp_name("base_model.model.model.layers.27.self_attn.v_proj.lora_B.weight") == \
        "blk.27.attn_v.weight.lora_b"
    with pytest.raises(DataError, match="not a LoRA matrix"):
        llama_cpp_name("base_model.model.lm_head.weight")


def _random_adapter(base: Path, out: Path, *, width: int | None = None, rank: int = 8, seed: int = 0) -> Path:
    """A LoRA adapter on q/v of every layer of `base` with random A and B (`width`: pretend another model's)."""
    import gguf
    import numpy as np

    from situated.train.lora_gguf import export_lora_gguf

    reader = gguf.GGUFReader(str(base))
    shapes = {t.name: [int(d) for d in t.shape] for t in reader.tensors}  # llama.cpp order: [in, out]
    rng = np.random.default_rng(seed)
    tensors = {}
    for name, shape in shapes.items():
        parts = name.split(".")
        if parts[0] != "blk" or parts[2] not in ("attn_q", "attn_v") or parts[-1] != "weight":
            continue
        n_in, n_out = shape
        n_in = width or n_in
        proj = {"attn_q": "q_proj", "attn_v": "v_proj"}[parts[2]]
        prefix = f"base_model.model.model.layers.{parts[1]}.self_attn.{proj}"
        tensors[f"{prefix}.lora_A.weight"] = rng.normal(0, 0.05, (rank, n_in))
        tensors[f"{prefix}.lora_B.weight"] = rng.normal(0, 0.05, (n_out, rank))
    return export_lora_gguf(tensors, 16, "qwen2", out)


def _action_probabilities(llm) -> dict[str, float]:
    words = ["forward", "left", "right", "turn_around", "stop"]
    prompt = ("Directions: Turn left at the second light and stop.\nWalk:\n1. forward\n"
              "There is a 4-way intersection.\n2. forward\nThere is a 4-way intersection.\n3.")
    scores = llm.score(prompt, [f" {w}" for w in words]).logprobs
    total = sum(math.exp(s) for s in scores)
    return {w: math.exp(s) / total for w, s in zip(words, scores, strict=True)}


def test_the_exported_adapter_loads_in_llama_cpp_and_changes_the_next_action(base_gguf: Path, tmp_path: Path) -> None:
    need("gguf", "numpy", "llama_cpp")
    from situated.llm.llamacpp import LlamaCppLLM
    from situated.train.lora_gguf import read_lora_gguf

    adapter = _random_adapter(base_gguf, tmp_path / "adapter.gguf")
    meta = read_lora_gguf(adapter)
    assert meta["type"] == "adapter" and meta["adapter_type"] == "lora" and meta["alpha"] == 16
    assert meta["architecture"] == "qwen2" and meta["tensors"]["blk.0.attn_q.weight.lora_a"] == (896, 8)
    plain = _action_probabilities(LlamaCppLLM("qwen2.5-coder-0.5b", n_ctx=512, n_threads=2))
    adapted = _action_probabilities(LlamaCppLLM("qwen2.5-coder-0.5b", n_ctx=512, n_threads=2, lora_path=adapter))
    assert max(abs(plain[w] - adapted[w]) for w in plain) > 0.01, (plain, adapted)


def test_a_corrupt_or_mismatched_adapter_is_one_line_and_exit_2(
    base_gguf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    need("gguf", "numpy", "llama_cpp")
    from fakes import write_street_dataset
    from situated.llm.llamacpp import LlamaCppLLM

    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(b"GGUF" + bytes(range(256)) * 4)
    mismatched = _random_adapter(base_gguf, tmp_path / "for-1.5b.gguf", width=1536)  # the 1.5B's hidden size
    for adapter in (corrupt, mismatched):
        with pytest.raises(BackendError, match="cannot apply this LoRA adapter"):
            LlamaCppLLM("qwen2.5-coder-0.5b", n_ctx=512, n_threads=1, lora_path=adapter)
    seen = write_street_dataset(tmp_path, "map2seq_seen")
    (seen / "graph" / "nodes.txt").write_text((seen / "graph" / "nodes.txt").read_text().replace(",unseen", ",seen"))
    data = str(write_street_dataset(tmp_path))
    for adapter in (corrupt, mismatched, tmp_path / "missing.gguf"):
        code = cli.main(["navigate", "--data", data, "--agent", "llm", "--shots", "0", "--threads", "1",
                         "--model", "llamacpp:qwen2.5-coder-0.5b", "--lora", str(adapter), "--limit", "1"])
        err = capsys.readouterr().err.strip()
        assert code == 2 and err.startswith("error:") and "\n" not in err and adapter.name in err, err

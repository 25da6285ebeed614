"""A PEFT LoRA adapter in llama.cpp's LoRA GGUF format (what `llama_adapter_lora_init` and llama-cpp-python's
`Llama(lora_path=...)` load), written with the `gguf` package.

The file holds `general.architecture` (the base model's, e.g. qwen2), `general.type = adapter`,
`adapter.type = lora`, `adapter.lora.alpha`, and per adapted matrix two float32 tensors named after llama.cpp's
tensor of the base weight plus `.lora_a` / `.lora_b` (`blk.3.attn_q.weight.lora_a`). PEFT's A is (rank, in) and
B is (out, rank) as numpy arrays; GGUF stores dimensions innermost first, so llama.cpp sees A as [in, rank] and
B as [rank, out], the shapes it checks against the base weight [in, out]. Qwen2's q/k weights are stored
unpermuted in GGUF (NeoX rope), so the matrices carry over as they are.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import DataError

LLAMA_CPP_NAMES = {
    "q_proj": "attn_q", "k_proj": "attn_k", "v_proj": "attn_v", "o_proj": "attn_output",
    "gate_proj": "ffn_gate", "up_proj": "ffn_up", "down_proj": "ffn_down",
}
"""Hugging Face projection name -> llama.cpp tensor name (llama-style architectures such as qwen2)."""

_PEFT_NAME = re.compile(
    r"^(?:base_model\.model\.)?model\.layers\.(?P<layer>\d+)\.(?:self_attn|mlp)\.(?P<proj>\w+)"
    r"\.lora_(?P<half>[AB])(?:\.default)?\.weight$"
)


def llama_cpp_name(peft_name: str) -> str:
    """`base_model.model.model.layers.3.self_attn.q_proj.lora_A.weight` -> `blk.3.attn_q.weight.lora_a`."""
    match = _PEFT_NAME.match(peft_name)
    if match is None or match["proj"] not in LLAMA_CPP_NAMES:
        raise DataError(f"adapter tensor {peft_name}: not a LoRA matrix of a layer's projection")
    return f"blk.{match['layer']}.{LLAMA_CPP_NAMES[match['proj']]}.weight.lora_{match['half'].lower()}"


def export_lora_gguf(tensors: Mapping[str, Any], alpha: float, architecture: str, out: Path,
                     name: str = "situated LoRA adapter") -> Path:
    """Write PEFT's LoRA `tensors` (name -> array, PEFT's names) to `out` as a llama.cpp LoRA GGUF; atomically."""
    import gguf
    import numpy as np

    arrays: dict[str, Any] = {}
    for peft_name, value in sorted(tensors.items()):
        array = np.ascontiguousarray(np.asarray(value, dtype=np.float32))
        if array.ndim != 2:
            raise DataError(f"adapter tensor {peft_name}: expected a matrix, got shape {array.shape}")
        arrays[llama_cpp_name(peft_name)] = array
    pairs = {n.rsplit(".", 1)[0] for n in arrays}
    for base in sorted(pairs):
        a, b = arrays.get(base + ".lora_a"), arrays.get(base + ".lora_b")
        if a is None or b is None or a.shape[0] != b.shape[1]:
            raise DataError(f"adapter tensor {base}: lora_a/lora_b missing or of different ranks")
    if not arrays:
        raise DataError("the adapter has no LoRA tensors")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    writer = gguf.GGUFWriter(str(tmp), architecture)
    try:
        writer.add_type(gguf.GGUFType.ADAPTER)
        writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
        writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(alpha))
        writer.add_name(name)
        for tensor_name, array in arrays.items():
            writer.add_tensor(tensor_name, array)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
    finally:
        writer.close()
    os.replace(tmp, out)
    return out


def read_lora_gguf(path: Path) -> dict[str, Any]:
    """The metadata of a LoRA GGUF (`architecture`, `type`, `adapter_type`, `alpha`, `tensors`: name -> shape as
    llama.cpp sees it); DataError naming the file when it is not one."""
    import gguf

    try:
        reader = gguf.GGUFReader(str(path))
    except (OSError, ValueError, KeyError, IndexError) as exc:
        raise DataError(f"{path}: not a GGUF file ({type(exc).__name__}: {str(exc)[:80]})") from None

    def text(key: str) -> str | None:
        field = reader.fields.get(key)
        return None if field is None else bytes(field.parts[field.data[0]]).decode("utf-8", "replace")

    alpha_field = reader.fields.get("adapter.lora.alpha")
    return {
        "architecture": text("general.architecture"),
        "type": text("general.type"),
        "adapter_type": text("adapter.type"),
        "alpha": float(alpha_field.parts[alpha_field.data[0]][0]) if alpha_field is not None else None,
        "tensors": {t.name: tuple(int(d) for d in t.shape) for t in reader.tensors},
    }

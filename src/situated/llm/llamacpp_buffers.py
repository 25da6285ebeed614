"""Which weight buffers llama.cpp's CPU backend may use: none of its extra ones where it was built with AMX.

llama-cpp-python 0.3.36 built with -march=native on a Xeon with AMX puts the weights in llama.cpp's AMX buffer
type, and `llama_decode` then segfaults on every call (seen on this project's machines, and in CI with a wheel
that pip had cached before the Makefile built without AMX). Loading the model with `use_extra_bufts = False` keeps
the weights in plain CPU buffers; with that same wheel the calls then run (measured: 954 prompt tokens of the
1.5B model in 6.9 s on 2 threads, against 10.8 s for the AMX-free build with its repacked buffers).

`SITUATED_LLAMA_EXTRA_BUFFERS=1` keeps llama.cpp's choice (an AMX build that works), `=0` turns the extra
buffers off on any build.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

ENV = "SITUATED_LLAMA_EXTRA_BUFFERS"
_PATCH_LOCK = threading.Lock()


@cache
def _built_with_amx() -> bool:
    import llama_cpp

    return b"AMX_INT8 = 1" in llama_cpp.llama_print_system_info()


def extra_buffers_allowed() -> bool:
    """False where the linked llama.cpp has AMX kernels (unless `SITUATED_LLAMA_EXTRA_BUFFERS` says otherwise)."""
    choice = os.environ.get(ENV, "").strip()
    if choice in ("0", "1"):
        return choice == "1"
    return not _built_with_amx()


def model_params() -> Any:
    """llama.cpp's default model parameters, CPU only, with the extra buffers off where they crash."""
    import llama_cpp

    params = llama_cpp.llama_model_default_params()
    params.n_gpu_layers = 0
    if not extra_buffers_allowed():
        params.use_extra_bufts = False
    return params


@contextmanager
def loading_with_safe_buffers() -> Iterator[None]:
    """While a `llama_cpp.Llama` loads here, its default model parameters have the extra buffers off if needed.

    `Llama.__init__` takes no such argument: it reads `llama_model_default_params()` from the bindings module,
    which this replaces for the load and restores after (under a lock, so concurrent loads see one or the other).
    """
    if extra_buffers_allowed():
        yield
        return
    from llama_cpp import llama_cpp as bindings

    with _PATCH_LOCK:
        original = bindings.llama_model_default_params

        def without_extra_buffers() -> Any:
            params = original()
            params.use_extra_bufts = False
            return params

        bindings.llama_model_default_params = without_extra_buffers
        try:
            yield
        finally:
            bindings.llama_model_default_params = original

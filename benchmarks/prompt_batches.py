"""Measures how the batch size of a prompt's evaluation changes its speed (not a test): the sandbox planner's first
prompt on a scene evaluated from scratch in chunks of 64 tokens (`llamacpp.CHUNK`, exact prefixes) and in batches of
512 (llama.cpp's own `n_batch`), alternating, in one process on one loaded model, and whether the last
token's logits are the same.

    PYTHONPATH=src python benchmarks/prompt_batches.py [--scene gift_bag] [--model qwen2.5-coder-1.5b]
        [--threads 2] [--reps 3]

Prints the seconds of each evaluation, the ratio of the medians and the largest logit difference; last line JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import llama_cpp
import numpy as np

from prompt_states import first_prompt
from situated.llm import llamacpp
from situated.llm.llamacpp_buffers import loading_with_safe_buffers
from situated.llm.models import model_path

BATCH = 512
"""llama.cpp's default `n_batch`, compared with the backend's `CHUNK`."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", default="gift_bag")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    messages, _ = first_prompt(args.scene, "put the duck in the tray")
    with loading_with_safe_buffers():
        llm = llama_cpp.Llama(model_path=str(model_path(args.model)), n_ctx=llamacpp.DEFAULT_N_CTX,
                              n_threads=args.threads, n_threads_batch=args.threads, verbose=False)
    text = llamacpp.chat_prompt(llm._model, llm.metadata, messages)
    tokens = llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)
    seconds: dict[int, list[float]] = {llamacpp.CHUNK: [], BATCH: []}
    logits: dict[int, np.ndarray] = {}
    for rep in range(args.reps):
        order = list(seconds) if rep % 2 == 0 else list(reversed(seconds))  # alternate which goes first
        for size in order:
            llm.reset()
            llm._ctx.kv_cache_clear()
            start = time.perf_counter()
            for i in range(0, len(tokens), size):
                llm.eval(tokens[i:i + size])
            seconds[size].append(time.perf_counter() - start)
            row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(llm.n_vocab(),))
            logits[size] = row.copy()
    chunk, batch = (statistics.median(seconds[s]) for s in (llamacpp.CHUNK, BATCH))
    diff = float(np.abs(logits[llamacpp.CHUNK] - logits[BATCH]).max())
    for size, runs in seconds.items():
        print(f"batches of {size:>3}: " + ", ".join(f"{s:.2f} s" for s in runs) + f" ({len(tokens)} tokens)")
    print(f"median {BATCH} / {llamacpp.CHUNK}: {batch / chunk:.3f}; largest logit difference {diff:g}")
    print(json.dumps({"scene": args.scene, "model": args.model, "threads": args.threads, "tokens": len(tokens),
                      "seconds": {str(k): [round(s, 3) for s in v] for k, v in seconds.items()},
                      "batch_over_chunk": round(batch / chunk, 3), "max_logit_difference": diff}))


if __name__ == "__main__":
    main()

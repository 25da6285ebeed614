"""Measures jump-forward decoding on the sandbox (not a test): the same session scripts run on the embedded model
as the sandbox commands open it (a conversation), once decoding every token and once appending the text the JSON
grammar forces without a model step (`LlamaCppLLM(jump_forward=True)`; off by default), in one process.

    PYTHONPATH=src python benchmarks/sandbox_jump_forward.py [SESSION_OR_DIR ...]
        [--model llamacpp:qwen2.5-coder-1.5b] [--threads 2]

Each configuration has its own engine (its own KV cache and saved states; no disk states), and the sessions are
run interleaved (every session without jumps, then with), so neither warms the other's prompts. Prints per
configuration: expectations met, per-utterance model seconds (p50/p95), model calls, completion tokens and model
seconds in all; then the ratios (jump / no jump); last line JSON.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from situated.llm import load
from situated.sandbox.evaluation import SessionResult, evaluate, percentile, session_files

DEFAULT_SESSIONS = ["examples/sandbox/heldout18_01.session", "examples/sandbox/heldout18_08.session",
                    "examples/sandbox/heldout18_05.session", "examples/sandbox/heldout16_03.session"]
CONFIGS = {"every token": (False, 8192), "jump-forward": (True, 8191)}
"""name: (jump_forward, n_ctx); the contexts differ by one token only so that each gets its own engine."""


def _summary(results: list[SessionResult]) -> dict[str, Any]:
    seconds = [s for r in results for s in r.utterance_seconds]
    return {"met": sum(r.met for r in results), "expectations": sum(r.expectations for r in results),
            "p50": percentile(seconds, 0.5), "p95": percentile(seconds, 0.95),
            "calls": sum(r.model_calls for r in results),
            "completion_tokens": sum(r.completion_tokens for r in results),
            "prompt_tokens": sum(r.prompt_tokens for r in results), "model_seconds": round(sum(seconds), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", nargs="*", default=DEFAULT_SESSIONS)
    parser.add_argument("--model", default="llamacpp:qwen2.5-coder-1.5b")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    paths = [p for s in args.sessions for p in session_files(Path(s))]
    from situated.cli.models import CONVERSATION_STATES

    models = {name: load(args.model, n_threads=args.threads, n_ctx=n_ctx, exact_prefix=False,
                         state_cache=CONVERSATION_STATES, jump_forward=jump)
              for name, (jump, n_ctx) in CONFIGS.items()}
    results: dict[str, list[SessionResult]] = {name: [] for name in CONFIGS}
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            for name, llm in models.items():
                work = Path(tmp) / name.replace(" ", "_")
                work.mkdir(exist_ok=True)
                report = evaluate([path], llm, work)
                results[name] += report.sessions
                r = report.sessions[0]
                print(f"{name:12s} {path.name:40s} met {r.met}/{r.expectations}  calls {r.model_calls}  "
                      f"completion {r.completion_tokens}  model s {sum(r.utterance_seconds):.1f}", flush=True)
    summary = {name: _summary(rs) for name, rs in results.items()}
    for name, s in summary.items():
        print(f"{name:12s} met {s['met']}/{s['expectations']}  p50 {s['p50']:.3f} s  p95 {s['p95']:.3f} s  "
              f"calls {s['calls']}  completion tokens {s['completion_tokens']}  model s {s['model_seconds']}")
    base, jump = summary["every token"], summary["jump-forward"]
    ratios = {k: round(jump[k] / base[k], 3) for k in ("p50", "p95", "model_seconds", "completion_tokens")
              if base[k]}
    print("ratios jump/every:", ratios)
    print(json.dumps({"sessions": [p.name for p in paths], "summary": summary, "ratios": ratios}))


if __name__ == "__main__":
    main()

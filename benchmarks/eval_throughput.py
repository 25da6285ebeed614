"""Evaluation throughput on one machine: VELMA navigation with the embedded model, one episode at a time against
N at once — as N sequences of one batched llama.cpp context, and as N worker processes.

The same K Map2seq dev episodes (the first K of `map2seq_unseen` dev, two solved examples from `map2seq_seen`)
are run by the LLM agent under each configuration through the evaluation code itself
(`eval.systems.navigation_episodes.NavigationJob` and the executors of `eval.executors`), in memory (no results store):

- `jobs 1`: this process, one episode after the other (`SequentialExecutor`), llama.cpp with `--threads`;
- `batched N`: N threads of this process whose model calls are decoded together, N sequences of one context
  (`ThreadExecutor` + `ModelSpec(sequences=N)`, `llm.llamacpp_batched`), llama.cpp with `--threads`;
- `processes N`: N spawned worker processes, each loading the model with `--threads` threads
  (`ProcessExecutor`); their start-up (imports, model load) is part of the time.

The in-process configurations load their model and evaluate the prompt head shared by all episodes before the
clock starts (a model stays loaded in a process, and a real run pays for both once in hundreds of episodes); the
baseline runs first and last and the mean of both is the baseline, since the shared machine's load drifts.
Episodes per hour = K / wall seconds; CPU seconds per episode (this process and its worker processes) show the
work each configuration does, whatever share of the cores it got.
Also printed: how many episodes took exactly the baseline's actions (batched decoding may part ways at a
near-tie, see `llm.llamacpp_batched`).

Last line, JSON: {"episodes_per_hour_1", "episodes_per_hour_best", "jobs", "mode", "speedup", ...}.

`--decode` instead times single `llama_decode` calls of the batched engine, the cost underneath: 1 or 8
sequences, each with a 600-token shared head and 400 private tokens in its KV cache (as VELMA episodes have),
decoding 1 or 15 new tokens each (a step's sampled token; a step's new prompt tokens), with one KV stream per
sequence and with a unified cache. Last line, JSON: {"stream": {"1x1": ms, ...}, "unified": {...}}.

    .venv/bin/python benchmarks/eval_throughput.py [--model llamacpp:qwen2.5-coder-0.5b] [--episodes 8]
        [--configs batched:4,batched:8,batched:8:2,processes:2] [--threads 1] [--decode]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path

from situated.datasets.map2seq import load_split
from situated.envs.streets.env import MAX_STEPS
from situated.eval.episode import Episode
from situated.eval.executors import Executor, ModelSpec, ProcessExecutor, SequentialExecutor, ThreadExecutor
from situated.eval.systems.navigation_episodes import (
    NavigationJob,
    evaluate_navigation_job,
    navigation_summary,
    velma_examples,
)
from situated.planners.velma import render_head

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "velma"


def configs(text: str) -> list[tuple[str, int, int | None]]:
    """`batched:8,processes:2,batched:8:2` -> [(mode, jobs, threads or None)]."""
    out = []
    for item in text.split(","):
        mode, jobs, *threads = item.strip().split(":")
        if mode not in ("batched", "processes"):
            raise SystemExit(f"unknown mode {mode!r} (batched or processes)")
        out.append((mode, int(jobs), int(threads[0]) if threads else None))
    return out


def cpu_seconds() -> float:
    """CPU time of this process and its reaped children (worker processes), user + system."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run(job: NavigationJob, instances: list, executor: Executor) -> tuple[float, float, list[Episode]]:
    """Wall seconds, CPU seconds and the episodes of one evaluation."""
    cpu, start = cpu_seconds(), time.perf_counter()
    episodes = evaluate_navigation_job(job, instances, executor, out=None, config={})
    return time.perf_counter() - start, cpu_seconds() - cpu, episodes


def decode_costs(model: str, threads: int) -> dict[str, dict[str, float]]:
    """Milliseconds of one decode (best of 3) per layout: {"1x15": ...} = 1 sequence, 15 new tokens."""
    import llama_cpp

    from situated.llm.llamacpp_batched import BatchedLlamaCppLLM

    out: dict[str, dict[str, float]] = {}
    for unified in (False, True):
        llm = BatchedLlamaCppLLM(model.partition(":")[2], sequences=8, n_ctx=2048, n_threads=threads,
                                 kv_unified=unified, **({"total_ctx": 16384} if unified else {}))
        engine = llm._engine
        for start in range(0, 600, 300):  # the shared head, in sequence 0, copied to the others
            engine._decode([(1000 + start + j, start + j, 0, False) for j in range(300)])
        for seq in range(1, 8):
            llama_cpp.llama_memory_seq_cp(engine.memory, 0, seq, *((0, 600) if unified else (-1, -1)))
        for seq in range(8):  # each sequence's own 400 tokens
            for start in range(600, 1000, 200):
                engine._decode([(3000 + seq + j, start + j, seq, False) for j in range(200)])
        costs = {}
        for n_seq, per in ((1, 1), (1, 15), (8, 1), (8, 15)):
            times = []
            for _ in range(3):
                for seq in range(n_seq):
                    llama_cpp.llama_memory_seq_rm(engine.memory, seq, 1000, -1)
                entries = [(2000 + j, 1000 + j, seq, j == per - 1) for seq in range(n_seq) for j in range(per)]
                start_s = time.perf_counter()
                engine._decode(entries)
                times.append(time.perf_counter() - start_s)
            costs[f"{n_seq}x{per}"] = round(1000 * min(times), 1)
        out["unified" if unified else "stream"] = costs
        print(json.dumps({"kv": "unified" if unified else "stream", **costs}), flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llamacpp:qwen2.5-coder-0.5b")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--episodes", type=int, default=8, help="K: the first K dev episodes")
    parser.add_argument("--configs", type=configs, default=configs("batched:4,batched:8,batched:8:2,processes:2"),
                        help="mode:jobs[:threads] to compare with one at a time (default threads: --threads)")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads per model (1: see docs)")
    parser.add_argument("--decode", action="store_true", help="time single batched decodes instead")
    args = parser.parse_args()
    if args.decode:
        print(json.dumps({**decode_costs(args.model, args.threads), "model": args.model, "threads": args.threads,
                          "load": round(os.getloadavg()[0], 1)}))
        return

    data = args.data / "map2seq_unseen"
    dev = load_split(data, "dev")
    instances = list(dev.instances[: args.episodes])
    examples = velma_examples(load_split(args.data / "map2seq_seen", "dev"), seed=0)

    def job(sequences: int = 1, threads: int | None = None) -> NavigationJob:
        spec = ModelSpec(args.model, threads=threads or args.threads, sequences=sequences)
        return NavigationJob("llm", str(data), dataset=dev.name, model=spec, examples=examples,
                             max_steps=MAX_STEPS, graph=dev.graph)

    def load_first(j: NavigationJob) -> NavigationJob:
        """Load the model into this process (it stays loaded for the timed run) and evaluate the prompt head
        shared by every episode once, as a long run has it cached after its first step."""
        assert j.model is not None
        j.model.open().complete(render_head(examples), max_tokens=1)
        return j

    rows: list[dict] = []

    def record(mode: str, jobs: int, threads: int, measured: tuple[float, float, list[Episode]],
               base: list[Episode] | None) -> None:
        seconds, cpu, episodes = measured
        same = sum(a.details["actions"] == b.details["actions"]
                   for a, b in zip(episodes, base or episodes, strict=True))
        row = {"mode": mode, "jobs": jobs, "threads": threads, "seconds": round(seconds, 1),
               "episodes_per_hour": round(3600 * len(episodes) / seconds, 1),
               "cpu_s_per_episode": round(cpu / len(episodes), 1),
               "steps": sum(len(e.details["actions"]) for e in episodes), "same_actions_as_jobs1": same,
               "tc": round(navigation_summary(episodes)["tc"], 1), "load": round(os.getloadavg()[0], 1)}
        rows.append(row)
        print(json.dumps(row), flush=True)

    baseline_job = load_first(job())
    base = run(baseline_job, instances, SequentialExecutor())
    record("sequential", 1, args.threads, base, None)
    for mode, n, threads in args.configs:
        if mode == "batched":
            measured = run(load_first(job(n, threads)), instances, ThreadExecutor(n))
        else:
            measured = run(job(1, threads), instances, ProcessExecutor(n))
        record(mode, n, threads or args.threads, measured, base[2])
    record("sequential (again)", 1, args.threads, run(baseline_job, instances, SequentialExecutor()), base[2])

    first = [r for r in rows if r["jobs"] == 1]
    per_hour_1 = sum(r["episodes_per_hour"] for r in first) / len(first)
    best = max((r for r in rows if r["jobs"] > 1), key=lambda r: r["episodes_per_hour"])
    print(json.dumps({
        "episodes_per_hour_1": round(per_hour_1, 1), "episodes_per_hour_best": best["episodes_per_hour"],
        "jobs": best["jobs"], "mode": best["mode"], "speedup": round(best["episodes_per_hour"] / per_hour_1, 2),
        "threads_best": best["threads"], "episodes": len(instances), "model": args.model, "threads": args.threads,
        "runs": {f"{r['mode']} {r['jobs']}x{r['threads']}": r["episodes_per_hour"] for r in rows},
    }))


if __name__ == "__main__":
    main()

"""Evaluation throughput on one machine: VELMA navigation with the embedded model, one episode at a time against
N at once — as N sequences of one batched llama.cpp context, and as N worker processes.

The same K Map2seq dev episodes (the first K of `map2seq_unseen` dev, two solved examples from `map2seq_seen`)
are run by the LLM agent under each configuration through the evaluation code itself
(`eval.navigation.NavigationJob` and the executors of `eval.executors`), in memory (no results store):

- `jobs 1`: this process, one episode after the other (`SequentialExecutor`), llama.cpp with `--threads`;
- `batched N`: N threads of this process whose model calls are decoded together, N sequences of one context
  (`ThreadExecutor` + `ModelSpec(sequences=N)`, `llm.llamacpp_batched`), llama.cpp with `--threads`;
- `processes N`: N spawned worker processes, each loading the model with `--threads` threads
  (`ProcessExecutor`); their start-up (imports, model load) is part of the time.

The in-process configurations load their model before the clock starts (a model stays loaded in a process, and
a worker process of a real run loads it once for hundreds of episodes); the baseline runs first and last and the
mean of both is the baseline, since the shared machine's load drifts. Episodes per hour = K / wall seconds.
Also printed: how many episodes took exactly the baseline's actions (batched decoding may part ways at a
near-tie, see `llm.llamacpp_batched`).

Last line, JSON: {"episodes_per_hour_1", "episodes_per_hour_best", "jobs", "mode", "speedup", ...}.

    .venv/bin/python benchmarks/eval_throughput.py [--model llamacpp:qwen2.5-coder-0.5b] [--episodes 8]
        [--batched 2,4,8] [--processes 2] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from situated.datasets.map2seq import load_split
from situated.envs.streets.env import MAX_STEPS
from situated.eval.episode import Episode
from situated.eval.executors import Executor, ModelSpec, ProcessExecutor, SequentialExecutor, ThreadExecutor
from situated.eval.navigation import NavigationJob, evaluate_navigation_job, navigation_summary, velma_examples

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "velma"


def numbers(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def run(job: NavigationJob, instances: list, executor: Executor) -> tuple[float, list[Episode]]:
    start = time.perf_counter()
    episodes = evaluate_navigation_job(job, instances, executor, out=None, config={})
    return time.perf_counter() - start, episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llamacpp:qwen2.5-coder-0.5b")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--episodes", type=int, default=8, help="K: the first K dev episodes")
    parser.add_argument("--batched", type=numbers, default=[2, 4, 8], help="sequence counts to try")
    parser.add_argument("--processes", type=numbers, default=[2], help="process counts to try")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads per model (1: see docs)")
    args = parser.parse_args()

    data = args.data / "map2seq_unseen"
    dev = load_split(data, "dev")
    instances = list(dev.instances[: args.episodes])
    examples = velma_examples(load_split(args.data / "map2seq_seen", "dev"), seed=0)

    def job(sequences: int = 1) -> NavigationJob:
        spec = ModelSpec(args.model, threads=args.threads, sequences=sequences)
        return NavigationJob("llm", str(data), dataset=dev.name, model=spec, examples=examples,
                             max_steps=MAX_STEPS, graph=dev.graph)

    def load_first(j: NavigationJob) -> NavigationJob:
        j.build()  # loads the model into this process (kept for the timed run)
        return j

    rows: list[dict] = []

    def record(mode: str, jobs: int, seconds: float, episodes: list[Episode], base: list[Episode] | None) -> None:
        same = sum(a.details["actions"] == b.details["actions"] for a, b in zip(episodes, base or episodes,
                                                                                  strict=True))
        steps = sum(len(e.details["actions"]) for e in episodes)
        row = {"mode": mode, "jobs": jobs, "seconds": round(seconds, 1),
               "episodes_per_hour": round(3600 * len(episodes) / seconds, 1), "steps": steps,
               "same_actions_as_jobs1": same, "tc": round(navigation_summary(episodes)["tc"], 1)}
        rows.append(row)
        print(json.dumps(row), flush=True)

    print(f"load average at start: {os.getloadavg()}", flush=True)
    baseline_job = load_first(job())
    seconds, base = run(baseline_job, instances, SequentialExecutor())
    record("sequential", 1, seconds, base, None)
    for n in args.batched:
        seconds, episodes = run(load_first(job(n)), instances, ThreadExecutor(n))
        record("batched", n, seconds, episodes, base)
    for n in args.processes:
        seconds, episodes = run(job(), instances, ProcessExecutor(n))
        record("processes", n, seconds, episodes, base)
    seconds, again = run(baseline_job, instances, SequentialExecutor())
    record("sequential (again)", 1, seconds, again, base)
    print(f"load average at end: {os.getloadavg()}", flush=True)

    first = [r for r in rows if r["jobs"] == 1]
    per_hour_1 = sum(r["episodes_per_hour"] for r in first) / len(first)
    best = max((r for r in rows if r["jobs"] > 1), key=lambda r: r["episodes_per_hour"])
    print(json.dumps({
        "episodes_per_hour_1": round(per_hour_1, 1), "episodes_per_hour_best": best["episodes_per_hour"],
        "jobs": best["jobs"], "mode": best["mode"], "speedup": round(best["episodes_per_hour"] / per_hour_1, 2),
        "episodes": len(instances), "model": args.model, "threads": args.threads,
        "runs": {f"{r['mode']} {r['jobs']}": r["episodes_per_hour"] for r in rows},
    }))


if __name__ == "__main__":
    main()

"""What a ProgPrompt episode costs, and the order of a multi-run evaluation: run-major vs task-major.

Runs the same development-set episodes (tasks × runs, one candidate of `progprompt_devset.py`, the library's
planner and episode) twice in one process with one loaded model: first run-major (every task of run 0, then of
run 1, ...: the order `run_episodes` used before), then task-major (every run of a task, then the next task: the
order it uses now). Each order starts from an empty KV cache. Printed per order: model calls, prompt tokens,
prompt tokens reused from llama.cpp's prefix cache and evaluated, generated tokens, model seconds, and per call
kind (first answer of a plan, continuation pieces and replacements); then the ratios (run-major / task-major) of
evaluated prompt tokens and model seconds, and whether every episode's plan text is the same in both orders
(llama.cpp's logits do not depend on what ran before, so it must be). The last line is JSON.

Usage: PYTHONPATH=src .venv/bin/python benchmarks/progprompt_episode_speed.py \\
    --model llamacpp:qwen2.5-coder-0.5b --threads 2 --tasks 0,10 --runs 3
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from progprompt_devset import DEFAULT_DATA, parse_candidate
from situated.datasets.progprompt import load_example_plans
from situated.datasets.progprompt_dev import TRAIN_PLANS, load_dev_set
from situated.errors import SituatedError
from situated.eval.episode import Episode
from situated.eval.executors import ModelSpec
from situated.eval.systems.household_episodes import household_episode
from situated.eval.systems.household_sampling import SampledLLM
from situated.llm.base import Completion


class CountingLLM:
    """Passes calls to `llm` and keeps each call's completion with its kind (by max_tokens: the first answer,
    a continuation piece or a replacement)."""

    def __init__(self, llm: Any) -> None:
        self.llm, self.uri = llm, llm.uri
        self.calls: list[tuple[str, Completion]] = []

    def complete(self, prompt: str, **options: Any) -> Completion:
        done = self.llm.complete(prompt, **options)
        kind = {600: "answer", 96: "piece", 64: "replacement"}.get(options.get("max_tokens", 0), "other")
        self.calls.append((kind, done))
        return done

    def json(self, messages: list[dict], schema: dict, **options: Any) -> Any:
        return self.llm.json(messages, schema, **options)

    def count_tokens(self, text: str) -> int:
        return self.llm.count_tokens(text)


def totals(calls: Sequence[tuple[str, Completion]]) -> dict[str, float]:
    prompt = sum(c.prompt_tokens for _, c in calls)
    cached = sum(c.cached_tokens for _, c in calls)
    return {"calls": len(calls), "prompt_tokens": prompt, "cached_tokens": cached, "evaluated_tokens": prompt - cached,
            "generated_tokens": sum(c.completion_tokens for _, c in calls),
            "model_seconds": round(sum(c.seconds for _, c in calls), 2)}


def clear_cache(llm: Any) -> None:
    """An empty KV cache and state LRU, as after loading (the embedded backend only)."""
    engine = getattr(llm, "_engine", None)
    if engine is not None:
        engine._clear()
        engine.states.clear()


def run_order(order: Sequence[tuple[Any, int]], episode: Callable[[Any, int], Episode], counting: CountingLLM,
              label: str) -> tuple[dict[str, Any], dict[tuple[str, int], str]]:
    counting.calls.clear()
    start = time.perf_counter()
    programs = {}
    for task, run in order:
        done = episode(task, run)
        programs[(task.task_id, run)] = str(done.details["program"])
    wall = time.perf_counter() - start
    result: dict[str, Any] = {**totals(counting.calls), "wall_seconds": round(wall, 1)}
    kinds = sorted({k for k, _ in counting.calls})
    result["by_kind"] = {k: totals([c for c in counting.calls if c[0] == k]) for k in kinds}
    print(f"{label}: {result['calls']} calls, prompt tokens {result['prompt_tokens']} (reused "
          f"{result['cached_tokens']}, evaluated {result['evaluated_tokens']}), generated "
          f"{result['generated_tokens']}, model seconds {result['model_seconds']}, wall {result['wall_seconds']} s")
    for k, t in result["by_kind"].items():
        print(f"  {k:<12} {t['calls']:>3} calls  evaluated {t['evaluated_tokens']:>6} of {t['prompt_tokens']:>6} "
              f"prompt tokens  generated {t['generated_tokens']:>5}  {t['model_seconds']:>7.1f} s")
    return result, programs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model", default="llamacpp:qwen2.5-coder-0.5b")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--candidate", default="default", help="as in progprompt_devset.py")
    parser.add_argument("--tasks", default="0,10", help="development-set task positions, comma-separated")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--temperature", type=float, default=0.0)
    args = parser.parse_args(argv)
    try:
        whole = load_dev_set(args.data)
        tasks = [whole[int(i)].task for i in args.tasks.split(",")]
        candidate = parse_candidate(args.candidate)
        llm = ModelSpec(args.model, threads=args.threads).open()
    except (SituatedError, ValueError, IndexError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    counting = CountingLLM(llm)
    sampled = SampledLLM(counting, args.temperature)  # type: ignore[arg-type]  # CountingLLM is an LLM
    planner = candidate.planner_factory(sampled, load_example_plans(args.data / TRAIN_PLANS))()  # type: ignore[arg-type]

    def episode(task: Any, run: int) -> Episode:
        sampled.run = run
        return household_episode(task, run, planner)

    results = {}
    plans = []
    for label, order in (("run-major", [(t, r) for r in range(args.runs) for t in tasks]),
                         ("task-major", [(t, r) for t in tasks for r in range(args.runs)])):
        clear_cache(llm)
        results[label], programs = run_order(order, episode, counting, label)
        plans.append(programs)
    before, after = results["run-major"], results["task-major"]
    same = plans[0] == plans[1]
    evaluated = before["evaluated_tokens"] / max(after["evaluated_tokens"], 1)
    seconds = before["model_seconds"] / max(after["model_seconds"], 1e-9)
    print(f"run-major / task-major: evaluated prompt tokens {evaluated:.2f}×, model seconds {seconds:.2f}×; "
          f"same plans in both orders: {same}")
    print(json.dumps({"model": args.model, "candidate": args.candidate, "tasks": [t.name for t in tasks],
                      "runs": args.runs, "temperature": args.temperature, "evaluated_ratio": round(evaluated, 3),
                      "model_seconds_ratio": round(seconds, 3), "same_plans": same, **results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a ProgPrompt episode costs, and the order of a multi-run evaluation: run-major vs task-major.

Runs the same development-set episodes (tasks × runs, one candidate of `progprompt_devset.py`, the library's
planner and episode) twice in one process with one loaded model: first run-major (every task of run 0, then of
run 1, ...: the order `run_episodes` used before), then task-major (every run of a task, then the next task: the
order it uses now). Each order starts from an empty KV cache. Printed per order: model calls, prompt tokens,
prompt tokens reused from llama.cpp's prefix cache and evaluated, generated tokens, model seconds, and per call
kind (first answer of a plan, continuation pieces and replacements); then the ratios (run-major / task-major) of
evaluated prompt tokens and model seconds, and whether every episode's plan text is the same in both orders
(llama.cpp's logits do not depend on what ran before, so it must be). The last line is JSON.

`--sampling T` measures instead the cost of sampling under the plan grammar at temperature T: the first task's
plan prompt (warm in the cache) completed with seeds 1..`--runs` by llama.cpp's chain (the whole vocabulary checked
at every step, `grammar_mode="full"`) and by the default sample-first path; seconds per generated token of each
and their ratio. `--grammar-check` needs no model run (the vocabulary only): seconds for one whole-vocabulary
grammar check (what the chain does at every sampled token) and for one single-token check (what sample-first does
unless the drawn token is rejected), on the first task's plan grammar, and their ratio.

Usage: PYTHONPATH=src .venv/bin/python benchmarks/progprompt_episode_speed.py \\
    --model llamacpp:qwen2.5-coder-0.5b --threads 2 --tasks 0,10 --runs 3        # or --sampling 0.2
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


def sampling_cost(llm: Any, planner: Any, task: Any, temperature: float, runs: int) -> dict[str, Any]:
    """Seconds per generated token sampling a plan under its grammar: llama.cpp's chain vs sample-first."""
    from situated.envs.household import HouseholdEnv
    from situated.llm.llamacpp import LlamaCppLLM
    from situated.planners.progprompt import STOPS
    from situated.program.grammar import plan_objects

    env = HouseholdEnv(task.initial_graph)
    objects = plan_objects(env.object_names())
    prompt = planner.prompts.scene_prompt(task.name, objects)
    grammar = planner.grammar(objects, env.object_properties())
    chain = LlamaCppLLM(llm.uri.split(":", 1)[1], n_threads=llm._engine.llama.n_threads, grammar_mode="full")
    llm.complete(prompt, grammar=grammar, max_tokens=1)  # the prompt evaluated once, reused by every call below
    result: dict[str, Any] = {}
    for label, model in (("chain", chain), ("sample-first", llm)):
        done = [model.complete(prompt, grammar=grammar, stop=STOPS, max_tokens=200, temperature=temperature,
                               seed=seed) for seed in range(1, runs + 1)]
        tokens = sum(d.completion_tokens for d in done)
        seconds = sum(d.seconds for d in done)
        result[label] = {"generated_tokens": tokens, "seconds": round(seconds, 2),
                         "s_per_token": round(seconds / max(tokens, 1), 4)}
        print(f"{label:<12} {tokens} tokens in {seconds:.1f} s: {seconds / max(tokens, 1):.4f} s/token")
    ratio = result["chain"]["s_per_token"] / max(result["sample-first"]["s_per_token"], 1e-9)
    print(f"chain / sample-first: {ratio:.2f}× seconds per generated token")
    return {**result, "sampling_ratio": round(ratio, 3)}


def grammar_check_cost(model: str, planner: Any, task: Any, repeats: int = 20) -> dict[str, Any]:
    """Seconds per whole-vocabulary grammar check and per single-token check, on `task`'s plan grammar."""
    import llama_cpp
    import numpy as np

    from situated.envs.household import HouseholdEnv
    from situated.llm.grammar_sampling import GreedyFirstGrammar
    from situated.llm.llamacpp import model_path
    from situated.program.grammar import plan_objects

    env = HouseholdEnv(task.initial_graph)
    grammar = planner.grammar(plan_objects(env.object_names()), env.object_properties())
    vocab = llama_cpp.Llama(model_path=str(model_path(model.split(":", 1)[1])), vocab_only=True, verbose=False)
    checker = GreedyFirstGrammar(None, vocab._model.vocab, vocab.n_vocab(), grammar, 0.0, model)
    scores = np.random.default_rng(0).standard_normal(vocab.n_vocab()).astype(np.float32)
    start = time.perf_counter()
    for _ in range(repeats):
        checker._best_allowed(scores)
    whole = (time.perf_counter() - start) / repeats
    start = time.perf_counter()
    for token in range(repeats * 100):
        checker._allowed(token, 0.0)
    one = (time.perf_counter() - start) / (repeats * 100)
    checker.close()
    print(f"grammar check of the whole vocabulary ({vocab.n_vocab()} tokens): {whole:.4f} s; of one token: "
          f"{one:.6f} s; ratio {whole / one:.0f}×")
    return {"grammar_chars": len(grammar), "whole_vocabulary_s": round(whole, 5), "one_token_s": round(one, 7),
            "check_ratio": round(whole / one, 1)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model", default="llamacpp:qwen2.5-coder-0.5b")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--candidate", default="default", help="as in progprompt_devset.py")
    parser.add_argument("--tasks", default="0,10", help="development-set task positions, comma-separated")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--sampling", type=float, default=None, help="measure sampling at this temperature")
    parser.add_argument("--grammar-check", action="store_true", help="time the grammar checks only (no model run)")
    args = parser.parse_args(argv)
    try:
        whole = load_dev_set(args.data)
        tasks = [whole[int(i)].task for i in args.tasks.split(",")]
        candidate = parse_candidate(args.candidate)
        if args.grammar_check:
            plans = load_example_plans(args.data / TRAIN_PLANS)
            planner = candidate.planner_factory(None, plans)()  # type: ignore[arg-type]  # no call is made
            cost = grammar_check_cost(args.model, planner, tasks[0])
            print(json.dumps({"model": args.model, "task": tasks[0].name, **cost}))
            return 0
        llm = ModelSpec(args.model, threads=args.threads).open()
    except (SituatedError, ValueError, IndexError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    counting = CountingLLM(llm)
    sampled = SampledLLM(counting, args.temperature)  # type: ignore[arg-type]  # CountingLLM is an LLM
    planner = candidate.planner_factory(sampled, load_example_plans(args.data / TRAIN_PLANS))()  # type: ignore[arg-type]

    if args.sampling is not None:
        cost = sampling_cost(llm, planner, tasks[0], args.sampling, args.runs)
        print(json.dumps({"model": args.model, "task": tasks[0].name, "temperature": args.sampling, **cost}))
        return 0

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

"""Planning speed with the embedded model: prompt-prefix reuse (cold vs warm) and the cost of the plan grammar.

- cold vs warm: task B planned by a freshly loaded model (the whole prompt is evaluated), then task A, then task B
  again: the second time only the part after the shared prefix (examples, object list) is evaluated. Greedy
  decoding gives the same plan both times, so the ratio is the time saved by reusing the prefix.
- grammar overhead: seconds per generated token when planning with the plan grammar vs without it.

Prints a table and, as its last line, JSON: {"warm_speedup", "grammar_overhead", ...}.

    .venv/bin/python benchmarks/llm_planning.py [--model llamacpp:qwen2.5-coder-1.5b] [--data ../shared/data/progprompt]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from situated.actions import PROGPROMPT_SPACE
from situated.datasets.progprompt import load_example_plans, load_split
from situated.envs.household import HouseholdEnv
from situated.llm import load
from situated.planners.base import PlanResult
from situated.planners.progprompt import ProgPromptPlanner

ROOT = Path(__file__).resolve().parents[1]


def timed_plan(planner: ProgPromptPlanner, task: str, objects: list[str]) -> tuple[float, PlanResult]:
    start = time.perf_counter()
    result = planner.plan(task, objects)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llamacpp:qwen2.5-coder-1.5b")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "progprompt")
    parser.add_argument("--split", default="env1")
    parser.add_argument("--task-a", type=int, default=0, help="index of task A in the split")
    parser.add_argument("--task-b", type=int, default=1, help="index of task B in the split")
    parser.add_argument("--max-tokens", type=int, default=600)
    args = parser.parse_args()

    tasks = load_split(args.data, args.split)
    examples = load_example_plans(args.data / "pythonic_plans" / "train_complete_plan_set.json")
    env = HouseholdEnv(tasks[0].initial_graph)
    objects = env.object_names()
    task_a, task_b = tasks[args.task_a].name, tasks[args.task_b].name

    t0 = time.perf_counter()
    llm = load(args.model)
    load_s = time.perf_counter() - t0
    constrained = ProgPromptPlanner(llm, PROGPROMPT_SPACE, examples, max_tokens=args.max_tokens)
    free = ProgPromptPlanner(llm, PROGPROMPT_SPACE, examples, max_tokens=args.max_tokens, constrained=False)

    cold_s, cold = timed_plan(constrained, task_b, objects)
    timed_plan(constrained, task_a, objects)
    warm_s, warm = timed_plan(constrained, task_b, objects)
    same_plan = cold.text == warm.text
    cold_prompt = cold.completions[0]
    warm_prompt = warm.completions[0]

    timed_plan(free, task_a, objects)  # same prefix is now cached for the unconstrained run too
    free_s, free_result = timed_plan(free, task_b, objects)

    def per_token(result: PlanResult) -> float:
        gen = sum(c.completion_tokens for c in result.completions)
        return sum(c.seconds for c in result.completions) / max(1, gen)

    grammar_tok = per_token(warm)
    free_tok = per_token(free_result)
    rows = [
        ("model", args.model), ("load (s)", f"{load_s:.1f}"),
        ("prompt tokens", str(cold_prompt.prompt_tokens)),
        ("cold plan (s)", f"{cold_s:.2f}"), ("warm plan (s)", f"{warm_s:.2f}"),
        ("cached prompt tokens, warm", str(warm_prompt.cached_tokens)),
        ("generated tokens", str(warm.tokens)), ("same plan cold/warm", str(same_plan)),
        ("s/token with grammar", f"{grammar_tok:.4f}"), ("s/token without grammar", f"{free_tok:.4f}"),
        ("tokens/s with grammar", f"{1 / grammar_tok:.1f}"), ("tokens/s without grammar", f"{1 / free_tok:.1f}"),
        ("unconstrained plan (s)", f"{free_s:.2f}"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    print(json.dumps({
        "warm_speedup": round(cold_s / warm_s, 3), "grammar_overhead": round(grammar_tok / free_tok, 3),
        "cold_s": round(cold_s, 3), "warm_s": round(warm_s, 3), "prompt_tokens": cold_prompt.prompt_tokens,
        "cached_tokens_warm": warm_prompt.cached_tokens, "generated_tokens": warm.tokens,
        "tokens_per_s_grammar": round(1 / grammar_tok, 2), "tokens_per_s_free": round(1 / free_tok, 2),
        "model": args.model,
    }))


if __name__ == "__main__":
    main()

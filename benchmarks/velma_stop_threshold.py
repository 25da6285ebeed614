"""Tune the VELMA agent's stop threshold on training-area routes: p(stop) along each gold route (teacher forcing).

Routes: Map2seq routes wholly in the training area (every panorama in the `seen` partition) from `map2seq_seen`'s
dev and test files; in the unseen scenario, which is what `situated navigate` reports on, these 1,172 routes are
training routes. Never unseen dev/test. The routes shown as prompt examples are left out; `--routes N` of the
rest are drawn with `--seed`.

Each route is driven by its gold actions through StreetEnv (no landmarks, as `--landmarks none`), and at every
step the VelmaAgent, with the prompt and the examples `situated navigate --agent llm` uses (`velma_examples`,
`--shots` of them), scores the five action words (`VelmaAgent.action_probabilities`); the history shows the gold
actions. A threshold t stops the route at the first step with p(stop) >= t:

- exact: that step is the gold stop (the last step of the route),
- near: the panorama there is the goal or a graph neighbour of it (what TC accepts),
- early / never: it stops before the gold stop / it never reaches t.

The threshold chosen maximizes exact, then near; among ties the middle one. The argmax rule (stop when `stop` is the
likeliest action, as greedy decoding does) is printed beside it. Per-route probabilities are appended to
`--out`/routes.jsonl, so an interrupted run resumes where it stopped; `--budget-minutes` stops drawing routes
after that long (the routes done are a prefix of the seeded draw).

    PYTHONPATH=src .venv/bin/python benchmarks/velma_stop_threshold.py --routes 40 --threads 1 --out runs/stop

Last line JSON: {"threshold", "routes", "exact_stop_rate", "near_stop_rate", "argmax_exact_stop_rate", ...}.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from situated.datasets.map2seq import load_split
from situated.envs.streets.env import NavInstance, StreetEnv
from situated.envs.streets.graph import StreetGraph
from situated.envs.streets.oracle import gold_actions
from situated.eval.systems.navigation_episodes import in_partition, velma_examples
from situated.eval.systems.navigation_metrics import reached
from situated.llm import load
from situated.planners.velma import VelmaAgent
from situated.program import Call

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "velma"
THRESHOLDS = (0.01, 0.02, 0.03, *(round(0.05 * i, 2) for i in range(1, 20)), 0.97, 0.98, 0.99)


def follow_gold(env: StreetEnv, agent: VelmaAgent, instance: NavInstance) -> dict:
    """Drive `instance` by its gold actions; at every agent step the action probabilities and the panorama."""
    gold = gold_actions(env.graph, instance)
    agent.reset(instance)
    env.reset(instance)
    steps = []
    while not env.done:
        observation = env.observation
        probabilities = agent.action_probabilities(agent.next_prompt(observation))
        steps.append({"panoid": observation.panoid, "p": {w: round(v, 6) for w, v in probabilities.items()}})
        action = gold[observation.step]
        agent.record(action)
        env.step(Call(action))
    if env.trajectory.pano_path != instance.route:
        raise SystemExit(f"route {instance.id}: the gold replay left the route")
    return {"id": instance.id, "steps": steps}


def first_stop(steps: Sequence[dict], threshold: float | None) -> int | None:
    """The first step the rule stops at: p(stop) >= threshold, or (None) stop is the likeliest action."""
    for index, step in enumerate(steps):
        p = step["p"]
        if (p["stop"] >= threshold) if threshold is not None else (max(p, key=p.__getitem__) == "stop"):
            return index
    return None


def rates(graph: StreetGraph, routes: Sequence[dict], goals: dict[str, str], threshold: float | None) -> dict:
    counts = {"exact": 0, "near": 0, "early": 0, "never": 0}
    for route in routes:
        steps = route["steps"]
        index = first_stop(steps, threshold)
        if index is None:
            counts["never"] += 1
            continue
        counts["exact"] += index == len(steps) - 1
        counts["early"] += index < len(steps) - 1
        counts["near"] += reached(graph, steps[index]["panoid"], goals[route["id"]])
    return {k: v / len(routes) for k, v in counts.items()}


def choose(table: dict[float, dict]) -> float:
    """Highest exact rate, then near rate; the middle of the tied thresholds."""
    best = max((r["exact"], r["near"]) for r in table.values())
    tied = sorted(t for t, r in table.items() if (r["exact"], r["near"]) == best)
    return tied[len(tied) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llamacpp:qwen2.5-coder-1.5b")
    parser.add_argument("--data", type=Path, default=DATA, help="the velma data folder (with map2seq_seen)")
    parser.add_argument("--routes", type=int, default=40)
    parser.add_argument("--shots", type=int, default=2, help="prompt examples, as velma_examples picks them")
    parser.add_argument("--seed", type=int, default=0, help="examples (as `navigate --seed`) and the route draw")
    parser.add_argument("--count-intersections", action="store_true", help="StreetEnv(count_intersections=True)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads")
    parser.add_argument("--out", type=Path, default=None, help="folder for routes.jsonl (resumes)")
    parser.add_argument("--budget-minutes", type=float, default=None,
                        help="start no new route after this many minutes; report on the routes done (in draw order)")
    args = parser.parse_args()

    seen = [load_split(args.data / "map2seq_seen", split) for split in ("dev", "test")]
    graph = seen[0].graph
    examples = velma_examples(seen[0], args.shots, seed=args.seed, count_intersections=args.count_intersections)
    shown = {e.id for e in examples}
    pool = sorted((i for d in seen for i in d.instances if in_partition(graph, i) and i.id not in shown),
                  key=lambda i: i.id)
    chosen = random.Random(args.seed).sample(pool, min(args.routes, len(pool)))
    goals = {i.id: i.route[-1] for i in chosen}
    config = {"model": args.model, "shots": args.shots, "seed": args.seed, "examples": sorted(shown),
              "count_intersections": args.count_intersections}
    print(f"{len(pool)} training-area routes (examples {sorted(shown)} left out); {len(chosen)} drawn", flush=True)

    done: dict[str, dict] = {}
    store = args.out / "routes.jsonl" if args.out else None
    if store is not None and store.exists():
        lines = [json.loads(line) for line in store.read_text().splitlines() if line.strip()]
        if not lines or lines[0].get("config") != config:
            raise SystemExit(f"{store} was written with another configuration; use another --out")
        done = {r["id"]: r for r in lines[1:]}
    elif store is not None:
        store.parent.mkdir(parents=True, exist_ok=True)
        store.write_text(json.dumps({"config": config}) + "\n")

    llm = load(args.model, **({"n_threads": args.threads} if args.threads else {}))
    agent = VelmaAgent(llm, examples, stop_threshold=0.5)  # the threshold is not used: only the probabilities
    env = StreetEnv(graph, max_steps=None, count_intersections=args.count_intersections)
    routes = []
    started = time.perf_counter()
    for number, instance in enumerate(chosen, 1):
        if instance.id not in done and args.budget_minutes is not None and \
                time.perf_counter() - started > 60 * args.budget_minutes:
            print(f"time budget spent: {len(routes)} of {len(chosen)} routes", flush=True)
            break
        if instance.id not in done:
            route = follow_gold(env, agent, instance)
            if store is not None:
                with store.open("a") as file:
                    file.write(json.dumps(route) + "\n")
            done[instance.id] = route
            last = route["steps"][-1]["p"]["stop"]
            print(f"route {number}/{len(chosen)} #{instance.id}: {len(route['steps'])} steps, p(stop) at the end "
                  f"{last:.3f}, {time.perf_counter() - started:.0f}s", flush=True)
        routes.append(done[instance.id])

    table = {t: rates(graph, routes, goals, t) for t in THRESHOLDS}
    argmax = rates(graph, routes, goals, None)
    print(f"\n{'threshold':>9} {'exact':>6} {'near':>6} {'early':>6} {'never':>6}")
    for t, r in [*table.items(), ("argmax", argmax)]:
        print(f"{t!s:>9} {r['exact']:6.3f} {r['near']:6.3f} {r['early']:6.3f} {r['never']:6.3f}")
    at_end = [r["steps"][-1]["p"]["stop"] for r in routes]
    before = [max((s["p"]["stop"] for s in r["steps"][:-1]), default=0.0) for r in routes]
    print(f"median p(stop) at the gold stop {statistics.median(at_end):.3f}; median of the highest p(stop) before "
          f"it {statistics.median(before):.3f}")
    best = choose(table)
    print(json.dumps({
        "threshold": best, "routes": len(routes), "exact_stop_rate": round(table[best]["exact"], 3),
        "near_stop_rate": round(table[best]["near"], 3), "early_stop_rate": round(table[best]["early"], 3),
        "argmax_exact_stop_rate": round(argmax["exact"], 3), "argmax_near_stop_rate": round(argmax["near"], 3),
        "count_intersections": args.count_intersections, "shots": args.shots, "model": args.model,
        "steps": sum(len(r["steps"]) for r in routes),
    }))


if __name__ == "__main__":
    main()

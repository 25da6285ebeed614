"""What the route agent's stop line is worth: gold turns walked with a fixed stop line, on training-area routes.

Routes: Map2seq routes wholly in the training area (every panorama in the `seen` partition) of `map2seq_seen`'s
test file; in the unseen scenario, which `situated navigate` reports on, these are training routes (the route
agent's example pool is the dev file's). Never unseen dev/test. No model is called.

Each route's gold route (`route_example`: its gold actions counted as the agent counts) is walked by the route
agent's own walker, first as derived (TC 100 by construction), then with its stop line replaced by "stop K steps
after the turn" (K = 0..12) and by "stop K steps after intersection N". So each line is the TC an agent would
reach that reads every turn right and knows nothing about where to stop but that one rule.

    PYTHONPATH=src .venv/bin/python benchmarks/velma_route_ceiling.py [--data ../shared/data/velma/map2seq_seen]

Last line JSON: {"routes", "gold_stop_counts", "tc_by_steps_after_turn", "best_steps_after_turn", "best_tc"}.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable, Mapping

from situated.datasets.map2seq import load_split
from situated.envs.streets.env import NavInstance, StreetEnv
from situated.eval.navigation import in_partition, navigation_episode
from situated.planners.velma_route import Leg, RouteAgent, RouteExample, route_example


class GivenRoute(RouteAgent):
    """The route agent's walker on a route given per instance (no model)."""

    def __init__(self, routes: Mapping[str, tuple[Leg, ...]]) -> None:
        super().__init__(None, (), shots=0)  # type: ignore[arg-type]  # never called: reset does not ask
        self.routes = routes

    def reset(self, instance: NavInstance) -> None:
        self.start(self.routes[instance.id], instance)


def completion_rate(env: StreetEnv, instances: list[NavInstance], examples: Mapping[str, RouteExample],
                    stop: Callable[[RouteExample], Leg]) -> float:
    """TC (%) of walking each gold route with its stop line replaced by `stop(example)`."""
    agent = GivenRoute({k: (*e.legs[:-1], stop(e)) for k, e in examples.items()})
    return 100 * sum(navigation_episode(env, agent, i).metrics["tc"] for i in instances) / len(instances)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data/velma/map2seq_seen")
    args = parser.parse_args()
    dataset = load_split(args.data, "test")
    instances = [i for i in dataset.instances if in_partition(dataset.graph, i)]
    examples = {i.id: route_example(dataset.graph, i) for i in instances}
    env = StreetEnv(dataset.graph, None)
    stops = Counter((e.legs[-1].intersections, e.legs[-1].steps) for e in examples.values())
    print(f"{len(instances)} training-area routes of {args.data} (test file)")
    print("gold stop lines (intersections since the last turn, steps):", stops.most_common(10))
    gold = completion_rate(env, instances, examples, lambda e: e.legs[-1])
    print(f"gold turns, gold stop line: TC {gold:.1f}")
    by_steps = {}
    for k in range(13):
        by_steps[k] = completion_rate(env, instances, examples, lambda e, k=k: Leg("stop", 0, k))
        print(f"gold turns, 'stop {k} steps after the turn': TC {by_steps[k]:.1f}")
    for n in (1, 2):
        for k in (0, 2):
            tc = completion_rate(env, instances, examples, lambda e, n=n, k=k: Leg("stop", n, k))
            print(f"gold turns, 'stop {k} steps after intersection {n}': TC {tc:.1f}")
    best = max(by_steps, key=by_steps.__getitem__)
    print(json.dumps({"routes": len(instances), "gold_tc": gold,
                      "gold_stop_counts": {f"{n},{k}": c for (n, k), c in stops.most_common(10)},
                      "tc_by_steps_after_turn": {k: round(v, 1) for k, v in by_steps.items()},
                      "best_steps_after_turn": best, "best_tc": round(by_steps[best], 1)}))


if __name__ == "__main__":
    main()

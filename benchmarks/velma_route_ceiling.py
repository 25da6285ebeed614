"""What the route agent's stop line is worth: gold turns walked with a fixed stop line, on training-area routes.

Routes: Map2seq routes wholly in the training area (every panorama in the `seen` partition) of `map2seq_seen`'s
test file; in the unseen scenario, which `situated navigate` reports on, these are training routes (the route
agent's example pool is the dev file's). Never unseen dev/test. No model is called.

Each route's gold route (`route_example`: its gold actions counted as the agent counts) is walked by the route
agent's own walker, first as derived (TC 100 by construction), then with its stop line replaced by "stop K steps
after the turn" (K = 0..12) and by "stop K steps after intersection N". So each line is the TC an agent would
reach that reads every turn right and knows nothing about where to stop but that one rule.

Last, the directions' own stop cue: each route is put in one class by the first pattern of `STOP_CUES` its
directions match ("halfway", "stop in the intersection", "a few steps after turning", "too far", ...; else
"none"), each class gets the fixed rule (0-2 intersections, 0-12 steps) that completes most of the dev file's
training-area routes in that class (the route agent's example pool), and that per-class rule is measured on the
test file's routes. This is what a stop line read from the words alone, without landmarks, can add.

Then the whole route read from the words (`planners.velma_words.WordsAgent`: named turns, counted intersections,
the cue's stop line), walked on the training-area routes of both files: how often its turns and counts equal the
gold route's, and its TC.

    PYTHONPATH=src .venv/bin/python benchmarks/velma_route_ceiling.py [--data ../shared/data/velma/map2seq_seen]

Last line JSON: {"routes", "gold_tc", "gold_stop_counts", "tc_by_steps_after_turn", "best_steps_after_turn",
"best_tc", "cue_rules", "tc_cue_rules", "words_agent"}.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping

from situated.datasets.map2seq import load_split
from situated.envs.streets.env import NavInstance, StreetEnv
from situated.eval.systems.navigation_episodes import in_partition, navigation_episode
from situated.planners.velma_route import Leg, RouteAgent, RouteExample, route_example
from situated.planners.velma_words import STOP_RULES, WordsAgent, read_route, stop_cue

CUE_RULES = tuple(Leg("stop", n, k) for n in range(3) for k in range(13))


class GivenRoute(RouteAgent):
    """The route agent's walker on a route given per instance (no model)."""

    def __init__(self, routes: Mapping[str, tuple[Leg, ...]]) -> None:
        super().__init__(None, (), shots=0)  # type: ignore[arg-type]  # never called: reset does not ask
        self.routes = routes

    def reset(self, instance: NavInstance) -> None:
        self.start(self.routes[instance.id], instance)


def completions(env: StreetEnv, instances: list[NavInstance], examples: Mapping[str, RouteExample],
                stop: Callable[[RouteExample], Leg]) -> dict[str, float]:
    """Each instance's TC (0 or 1) when its gold route is walked with the stop line replaced by `stop(example)`."""
    agent = GivenRoute({k: (*e.legs[:-1], stop(e)) for k, e in examples.items()})
    return {i.id: navigation_episode(env, agent, i).metrics["tc"] for i in instances}


def completion_rate(env: StreetEnv, instances: list[NavInstance], examples: Mapping[str, RouteExample],
                    stop: Callable[[RouteExample], Leg]) -> float:
    """TC (%) of walking each gold route with its stop line replaced by `stop(example)`."""
    return 100 * sum(completions(env, instances, examples, stop).values()) / len(instances)


def training_routes(data: str, split: str) -> tuple[StreetEnv, list[NavInstance], dict[str, RouteExample]]:
    """The split's routes wholly in the training area, their gold routes, and an environment to walk them."""
    dataset = load_split(data, split)
    instances = [i for i in dataset.instances if in_partition(dataset.graph, i)]
    return (StreetEnv(dataset.graph, None), instances,
            {i.id: route_example(dataset.graph, i) for i in instances})


def cue_rules(env: StreetEnv, instances: list[NavInstance], examples: Mapping[str, RouteExample]) -> dict[str, Leg]:
    """For each stop-cue class, the fixed stop rule that completes most of these routes in that class."""
    by_rule = {rule: completions(env, instances, examples, lambda e, r=rule: r) for rule in CUE_RULES}
    classes: dict[str, list[str]] = defaultdict(list)
    for instance in instances:
        classes[stop_cue(instance.instruction)].append(instance.id)
    return {cue: max(CUE_RULES, key=lambda r: sum(by_rule[r][k] for k in ids)) for cue, ids in classes.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data/velma/map2seq_seen")
    args = parser.parse_args()
    routes = {split: training_routes(args.data, split) for split in ("dev", "test")}
    env, instances, examples = routes["test"]
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
    rules = cue_rules(*routes["dev"])
    cues = Counter(stop_cue(i.instruction) for i in instances)
    for cue, rule in sorted(rules.items()):
        print(f"stop cue {cue!r} ({cues[cue]} test routes): rule chosen on dev {rule.text(True)!r}")
    fallback = Leg("stop", 0, best)
    by_cue = completion_rate(env, instances, examples, lambda e: rules.get(stop_cue(e.instruction), fallback))
    print(f"gold turns, stop rule chosen by the directions' stop cue: TC {by_cue:.1f}")
    print("the dev file's rules are situated.planners.velma_words.STOP_RULES:",
          all(STOP_RULES[cue] == rule for cue, rule in rules.items()))
    words = {}
    for split, (split_env, split_instances, split_examples) in routes.items():
        turns = sum(read_route(i.instruction)[:-1] == split_examples[i.id].legs[:-1] for i in split_instances)
        episodes = [navigation_episode(split_env, WordsAgent(), i) for i in split_instances]
        words[split] = {"turns_right": turns, "tc": round(100 * sum(e.metrics["tc"] for e in episodes)
                                                          / len(split_instances), 1)}
        print(f"words agent ({split} file, {len(split_instances)} routes): turns and counts right in {turns}, "
              f"TC {words[split]['tc']:.1f}")
    print(json.dumps({"routes": len(instances), "gold_tc": gold,
                      "gold_stop_counts": {f"{n},{k}": c for (n, k), c in stops.most_common(10)},
                      "tc_by_steps_after_turn": {k: round(v, 1) for k, v in by_steps.items()},
                      "best_steps_after_turn": best, "best_tc": round(by_steps[best], 1),
                      "cue_rules": {cue: rule.text(True) for cue, rule in sorted(rules.items())},
                      "tc_cue_rules": round(by_cue, 1), "words_agent": words}))


if __name__ == "__main__":
    main()

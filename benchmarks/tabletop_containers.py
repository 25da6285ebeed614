"""Crowded containers: how often the arm's seed skills put a second item in beside the first, and take items back
out onto the table.

Pairs: for every built-in scene (laid out with seed 0), every container and every ordered pair of its items, the
first then the second is put in with `pickup`, `goto(container)`, `release` (as a plan of the seed skills runs
them); a pair fails when a step fails or either item does not end inside. Out: for seeds 0-2, the first three
items are put in one container after another, then each one still inside is taken out with `pickup`,
`goto(table)`, `release`; counted per step.

    .venv/bin/python benchmarks/tabletop_containers.py [--seeds 3] [--out-only]

Prints each failure, then a JSON line {"pairs", "pairs_failed", "out_pickups", "out_pickups_failed"}.
"""

from __future__ import annotations

import argparse
import itertools
import json

from situated.envs.tabletop import BUILTIN_SCENES, CATALOGUE, TabletopEnv
from situated.program import Call, Condition
from situated.sandbox.world import SandboxWorld


def _put(world: SandboxWorld, item: str, place: str) -> str:
    """'' or the failing step and its reason."""
    for call in (Call("pickup", (item,)), Call("goto", (place,)), Call("release")):
        result = world.step(call)
        if not result.ok:
            return result.reason
    return ""


def pairs() -> tuple[int, int]:
    total = failed = 0
    for scene, names in BUILTIN_SCENES.items():
        env = TabletopEnv(scene, seed=0)
        env.slip_probability = 0.0
        world = SandboxWorld(env)
        items = [n for n in names if not CATALOGUE[n].is_container]
        for box in (n for n in names if CATALOGUE[n].is_container):
            for first, second in itertools.permutations(items, 2):
                env.reset()
                why = _put(world, first, box) or _put(world, second, box)
                inside = all(env.holds(Condition("inside", (i, box))) for i in (first, second))
                total += 1
                if why or not inside:
                    failed += 1
                    print(f"pair {scene} {box}: {first}, {second}: {why or 'landed outside'}")
        env.close()
    return total, failed


def out(seeds: int) -> tuple[int, int]:
    total = failed = 0
    for scene, names in BUILTIN_SCENES.items():
        for seed in range(seeds):
            env = TabletopEnv(scene, seed=seed)
            env.slip_probability = 0.0
            world = SandboxWorld(env)
            items = [n for n in names if not CATALOGUE[n].is_container][:3]
            for box in (n for n in names if CATALOGUE[n].is_container):
                env.reset()
                for item in items:
                    if _put(world, item, box):
                        world.step(Call("release"))  # a put that failed leaves nothing in the hand
                for item in (reversed(items) if seed % 2 else items):
                    if not env.holds(Condition("inside", (item, box))):
                        continue
                    total += 1
                    result = world.step(Call("pickup", (item,)))
                    if not result.ok:
                        failed += 1
                        print(f"out {scene} seed {seed} {box}: {item}: {result.reason}")
                        world.step(Call("release"))
                        continue
                    world.step(Call("goto", ("table",)))
                    world.step(Call("release"))
            env.close()
    return total, failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--out-only", action="store_true", help="skip the pairs (take items out only)")
    args = parser.parse_args()
    total, failed = pairs() if not args.out_only else (0, 0)
    taken, missed = out(args.seeds)
    print(json.dumps({"pairs": total, "pairs_failed": failed, "out_pickups": taken, "out_pickups_failed": missed}))


if __name__ == "__main__":
    main()

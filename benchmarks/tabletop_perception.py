"""Perception in the tabletop skills: grasp success under camera noise, and what seeing costs a skill call.

For each perception noise level (standard deviation, metres, on every lifted camera point) and each seed (the
`gift_bag` scene laid out with that seed, the noise drawn with it), picks up each of the scene's five items from
the initial scene and counts the grasps that hold. Then, without noise, times one view (render, lift, estimate:
`TabletopEnv.look`) against one `pickup` (which takes one view at its start), both in wall seconds.

    .venv/bin/python benchmarks/tabletop_perception.py [--noise 0,0.005,0.01,0.02,0.03] [--seeds 4]

Prints one row per noise level, then a JSON line {"success": {noise: rate}, "look_s", "pickup_s", "look_share"}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from situated.envs.tabletop import BUILTIN_SCENES, CATALOGUE, TabletopEnv
from situated.program import Call

ITEMS = tuple(n for n in BUILTIN_SCENES["gift_bag"] if not CATALOGUE[n].is_container)


def grasp_rate(noise: float, seeds: int) -> tuple[int, int, list[str]]:
    held = total = 0
    failures: list[str] = []
    for seed in range(seeds):
        env = TabletopEnv("gift_bag", seed=seed, perception_noise=noise)
        try:
            for item in ITEMS:
                env.reset()
                result = env.step(Call("pickup", (item,)))
                total += 1
                if result.ok and env.world.held_name() == item:
                    held += 1
                else:
                    failures.append(f"seed {seed} {item}: {result.reason}")
        finally:
            env.close()
    return held, total, failures


def costs(repeats: int) -> tuple[float, float]:
    env = TabletopEnv("gift_bag", seed=0)
    looks, pickups = [], []
    try:
        for _ in range(repeats):
            for item in ITEMS:
                env.reset()
                env.world.step(1)       # a new state: the next view is rendered afresh
                start = time.perf_counter()
                env.look()
                looks.append(time.perf_counter() - start)
                env.reset()
                start = time.perf_counter()
                env.step(Call("pickup", (item,)))
                pickups.append(time.perf_counter() - start)
    finally:
        env.close()
    return statistics.median(looks), statistics.median(pickups)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--noise", default="0,0.005,0.01,0.02,0.03", help="noise levels (m), comma-separated")
    parser.add_argument("--seeds", type=int, default=4, help="scene layouts (and noise draws) per level")
    parser.add_argument("--repeats", type=int, default=2, help="rounds of the timing part")
    args = parser.parse_args()
    success: dict[str, float] = {}
    for noise in (float(v) for v in args.noise.split(",")):
        held, total, failures = grasp_rate(noise, args.seeds)
        success[f"{noise:g}"] = round(held / total, 3)
        print(f"noise {noise * 100:4.1f} cm: {held}/{total} grasps hold" + (f"  ({'; '.join(failures[:3])})"
                                                                           if failures else ""), flush=True)
    look_s, pickup_s = costs(args.repeats)
    print(json.dumps({"success": success, "look_s": round(look_s, 4), "pickup_s": round(pickup_s, 4),
                      "look_share": round(look_s / pickup_s, 3)}))


if __name__ == "__main__":
    main()

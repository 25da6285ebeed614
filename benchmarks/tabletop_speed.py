"""Speed of the tabletop simulator: simulated seconds per wall second, and the wall time of one grab_and_putin.

Builds the built-in `gift_bag` scene, puts each of its five items into the gift bag or the tray (resetting the scene
before each), and measures, in this process: the wall time per grab_and_putin (mean, min, max), the simulated
time it takes, simulated seconds per wall second while skills run and while the scene idles, the time to build
the scene and the time of one camera observation.

    .venv/bin/python benchmarks/tabletop_speed.py [--repeats 2] [--seed 0]

The last output line is JSON: {"sim_per_wall", "grab_and_putin_wall_s", ...}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from situated.envs.tabletop import TabletopEnv
from situated.program import Call

PAIRS = (("candy", "gift_bag"), ("ball", "tray"), ("toy_car", "gift_bag"), ("cube", "tray"), ("duck", "gift_bag"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="rounds over the five pick-and-place pairs")
    parser.add_argument("--seed", type=int, default=0, help="layout seed of the gift_bag scene")
    args = parser.parse_args()

    start = time.perf_counter()
    env = TabletopEnv("gift_bag", seed=args.seed)
    build_s = time.perf_counter() - start

    start = time.perf_counter()
    env.world.step(2400)
    idle_sim_per_wall = 2400 * (1 / 240) / (time.perf_counter() - start)

    walls, sims, failures = [], [], 0
    for _ in range(args.repeats):
        for item, container in PAIRS:
            env.reset()
            start = time.perf_counter()
            result = env.step(Call("grab_and_putin", (item, container)))
            walls.append(time.perf_counter() - start)
            sims.append(env.sim_time)
            failures += not result.ok

    observe = []
    for _ in range(5):
        env.world.step(1)     # a new state, so the camera renders again
        start = time.perf_counter()
        env.observe()
        observe.append(time.perf_counter() - start)
    env.close()

    summary = {
        "sim_per_wall": round(sum(sims) / sum(walls), 2),
        "idle_sim_per_wall": round(idle_sim_per_wall, 2),
        "grab_and_putin_wall_s": round(statistics.mean(walls), 3),
        "grab_and_putin_wall_min_s": round(min(walls), 3),
        "grab_and_putin_wall_max_s": round(max(walls), 3),
        "grab_and_putin_sim_s": round(statistics.mean(sims), 2),
        "runs": len(walls),
        "failures": failures,
        "build_s": round(build_s, 3),
        "observe_s": round(statistics.mean(observe), 4),
    }
    print(f"grab_and_putin: {summary['grab_and_putin_wall_s']:.3f} s wall (min {min(walls):.3f}, max "
          f"{max(walls):.3f}) for {summary['grab_and_putin_sim_s']:.2f} s simulated, {len(walls)} runs, "
          f"{failures} failed")
    print(f"simulated seconds per wall second: {summary['sim_per_wall']} while acting, "
          f"{summary['idle_sim_per_wall']} idle")
    print(f"scene build {build_s:.3f} s, one camera observation {summary['observe_s']:.4f} s")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

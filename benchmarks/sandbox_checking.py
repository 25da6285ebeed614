"""Measures what checking a plan before it is shown costs (not a test): the same plans tried on the symbolic copy
of the table (`TableCopy` + `try_plan`), searched for from their goal (`search`), and run on the simulated arm.
No model is loaded.

    PYTHONPATH=src python benchmarks/sandbox_checking.py [--repeats 20]

Prints one line per measure (median ms, and the ratio to the arm's run); last line JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from situated.actions import SANDBOX_SPACE
from situated.envs.tabletop import TabletopEnv
from situated.program import Call, Condition
from situated.sandbox.checking import search, try_plan
from situated.sandbox.table_copy import TableCopy
from situated.sandbox.world import SandboxWorld

PLAN = (Call("pickup", ("candy",)), Call("goto", ("gift_bag",)), Call("release"),
        Call("pickup", ("duck",)), Call("goto", ("tray",)), Call("release"))
GOAL = (Condition("inside", ("candy", "gift_bag")), Condition("inside", ("duck", "tray")))


def median_ms(run: object, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    env = TabletopEnv("gift_bag", seed=0)
    world = SandboxWorld(env)
    try:
        copy_ms = median_ms(lambda: TableCopy.of_env(env), args.repeats)
        table = TableCopy.of_env(env)
        trial_ms = median_ms(lambda: try_plan(PLAN, SANDBOX_SPACE, table, GOAL), args.repeats)
        search_ms = median_ms(lambda: search(GOAL, SANDBOX_SPACE, table), args.repeats)

        def arm() -> None:
            env.reset()
            for call in PLAN:
                assert world.step(call).ok
        arm_ms = median_ms(arm, max(1, args.repeats // 10))
    finally:
        env.close()
    rows = {"copy of the table": copy_ms, "plan tried on the copy": trial_ms, "search from the goal": search_ms,
            "plan run on the simulated arm": arm_ms}
    for name, ms in rows.items():
        print(f"{name}: {ms:.2f} ms ({arm_ms / ms:.0f}x faster than the arm)" if ms != arm_ms
              else f"{name}: {ms:.0f} ms")
    print(json.dumps({k.replace(" ", "_"): round(v, 3) for k, v in rows.items()}))


if __name__ == "__main__":
    main()

"""How long opening a skill library and a session on it takes, as a ratio to an empty library.

Libraries measured:
- empty;
- fan-out k (k = 4, 5, 6): 8 levels of k behaviours, each calling all k of the next level (the last level calls
  a skill), the wide acyclic graph whose every path the old opening walked (×4 per step of k);
- at the caps: `MAX_BEHAVIOURS` behaviours, in levels of `MAX_CALLS` each calling all `MAX_CALLS` of the next,
  then a chain down to composition depth `MAX_DEPTH` (the densest call graph the caps allow, give or take).

"Open" is what `situated sandbox` does before the first prompt: `SkillLibrary.open`, then `SandboxSession` (which
reads every record and checks every behaviour against the API), on the gift-bag scene with a model that is never
called, each run in a new process (so nothing parsed by an earlier run is reused). The simulator's own start-up
is not timed, so the ratio to the empty library shows what the library adds.

    PYTHONPATH=src python benchmarks/library_open.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from situated.sandbox.library import MAX_BEHAVIOURS, MAX_CALLS, MAX_DEPTH, SkillLibrary

LEVELS = 8


class SilentModel:
    """A model that must not be called while opening."""

    uri = "none:silent"

    def complete(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("opening a session called the model")

    chat = complete


def layered_library(path: Path, widths: list[int], calls_per_behaviour: int) -> int:
    """A library of len(widths) levels; level i has widths[i] behaviours `b{i}_{j}(obj)`, each calling the first
    `calls_per_behaviour` behaviours of level i + 1 (all of them if fewer); the last level calls `pickup(obj)`.
    Returns the number of behaviours."""
    with SkillLibrary.open(path) as lib:
        for level in reversed(range(len(widths))):
            below = [f"b{level + 1}_{j}" for j in range(widths[level + 1])] if level + 1 < len(widths) else []
            callees = below[:calls_per_behaviour] or ["pickup"]
            body = "".join(f"{c}(obj)\n" for c in callees)
            for j in range(widths[level]):
                lib.add_behaviour(f"b{level}_{j}", ["obj"], f"Level {level}, number {j}.", body, callees)
    return sum(widths)


def fan_out(path: Path, k: int) -> int:
    return layered_library(path, [k] * LEVELS, k)


def at_caps(path: Path) -> int:
    """`MAX_BEHAVIOURS` behaviours, composition depth `MAX_DEPTH`, `MAX_CALLS` calls each in the wide levels:
    levels of `MAX_CALLS` behaviours each calling all of the next, then a chain down to depth `MAX_DEPTH`."""
    chain = MAX_DEPTH - (MAX_BEHAVIOURS // MAX_CALLS)
    wide = [MAX_CALLS] * (MAX_BEHAVIOURS // MAX_CALLS)
    wide[-1] -= chain
    return layered_library(path, [*wide, *([1] * chain)], MAX_CALLS)


def open_session(path: Path, env: Any) -> tuple[float, int, int]:
    """Seconds to open the library and a session on it; behaviours usable, notes."""
    from situated.sandbox.session import SandboxSession

    env.reset()
    start = time.perf_counter()
    with SkillLibrary.open(path) as lib:
        session = SandboxSession(env, SilentModel(), lib, scene="gift_bag", model="none:silent")  # type: ignore[arg-type]
        seconds = time.perf_counter() - start
        usable = sum(1 for a in session.space.actions if a.name.startswith("b"))
        notes = len(session.notes)
        session.close()
    return seconds, usable, notes


def measure_in_new_process(path: Path) -> tuple[float, int]:
    """`open_session` in a fresh interpreter (nothing cached from an earlier run): seconds, usable behaviours."""
    proc = subprocess.run([sys.executable, __file__, "--one", str(path)], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    seconds, usable = proc.stdout.split()[-2:]
    return float(seconds), int(usable)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per library, each in a new process (median shown)")
    parser.add_argument("--k", type=int, nargs="*", default=[4, 5, 6], help="fan-out widths")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    from situated.envs.tabletop import TabletopEnv

    if args.one is not None:
        env = TabletopEnv("gift_bag", seed=0)
        seconds, usable, _ = open_session(args.one, env)
        env.close()
        print(f"{seconds:.6f} {usable}")
        return
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        libraries: list[tuple[str, Path, int]] = [("empty", root / "empty.db", 0)]
        SkillLibrary.open(libraries[0][1]).close()
        for k in args.k:
            libraries.append((f"fan-out k={k}", root / f"k{k}.db", fan_out(root / f"k{k}.db", k)))
        libraries.append((f"at the caps ({MAX_BEHAVIOURS} behaviours, depth {MAX_DEPTH}, {MAX_CALLS} calls)",
                          root / "caps.db", at_caps(root / "caps.db")))
        base = None
        print(f"{'library':58} {'behaviours':>10} {'file KB':>8} {'open s':>8} {'ratio':>7} {'usable':>7}")
        for label, path, count in libraries:
            runs = [measure_in_new_process(path) for _ in range(args.repeat)]
            seconds = statistics.median(r[0] for r in runs)
            base = base or seconds
            size = path.stat().st_size / 1024
            print(f"{label:58} {count:>10} {size:>8.0f} {seconds:>8.3f} {seconds / base:>7.1f} {runs[0][1]:>7}",
                  flush=True)


if __name__ == "__main__":
    main()

"""Fidelity and speed of our household engine against VirtualHome's evolving-graph executor.

Runs the eai-eval VirtualHome programs (from the installed eai-eval package) and ProgPrompt's env1/env2 ground
truth (../shared/data/progprompt) through both executors, compares per-step verdicts and final fact sets, and
times both. Usage: .venv/bin/python benchmarks/household_fidelity.py [--limit N] [--mutants] [--progprompt DIR]
[--show K]
The last output line is JSON: {"programs": N, "agree_exec": K1, "agree_final": K2, "speedup": S}.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from situated.eval.systems.household_fidelity import FidelityReport, compare, load_cases, mutants

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PROGPROMPT = ROOT.parent / "shared" / "data" / "progprompt"


def _disagreements(report: FidelityReport, show: int) -> None:
    kinds: Counter[str] = Counter()
    for r in report.results:
        if r.agree_exec and r.agree_final:
            continue
        if not r.agree_exec:
            first = next(k for k, (a, b) in enumerate(zip(r.vh_ok, r.our_ok, strict=True)) if a != b)
            kinds[f"exec step {first + 1}: VirtualHome {r.vh_ok[first]} / ours {r.our_ok[first]}"] += 1
        else:
            rels = sorted({f[1] for f in r.only_vh | r.only_ours if len(f) == 3} |
                          {f"state {f[1]}" for f in r.only_vh | r.only_ours if len(f) == 2})
            kinds["final only: " + ", ".join(rels)] += 1
        if show > 0:
            show -= 1
            print(f"  {r.name}: VH {''.join('1' if v else '0' for v in r.vh_ok)} ours "
                  f"{''.join('1' if v else '0' for v in r.our_ok)} only_vh={sorted(r.only_vh)[:6]} "
                  f"only_ours={sorted(r.only_ours)[:6]} errors={list(r.vh_errors)[:2]}")
    for kind, n in kinds.most_common():
        print(f"  {n:4d}  {kind}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="evenly spaced subset of this many programs")
    parser.add_argument("--progprompt", type=Path, default=DEFAULT_PROGPROMPT, help="ProgPrompt data directory")
    parser.add_argument("--show", type=int, default=10, help="print this many disagreeing programs")
    parser.add_argument("--mutants", action="store_true",
                        help="also run every program with every third step dropped (failing steps)")
    args = parser.parse_args()
    progprompt = args.progprompt if args.progprompt.is_dir() else None
    cases = load_cases(progprompt, args.limit)
    if args.mutants:
        cases += mutants(cases)
    report = compare(cases)
    crashes = sum(bool(r.vh_errors) for r in report.results)
    steps = sum(len(r.vh_ok) for r in report.results)
    failed = sum(not v for r in report.results for v in r.vh_ok)
    print(f"programs {report.programs} ({steps} steps, {failed} of them not executable in VirtualHome); "
          f"VirtualHome raised on {crashes} programs")
    print(f"exec verdicts agree on {report.agree_exec}, final states agree on {report.agree_final}")
    print(f"execution time: VirtualHome {report.vh_seconds:.3f} s, ours {report.our_seconds:.3f} s "
          f"({report.speedup:.1f}x)")
    vh_total = report.vh_seconds + report.vh_load_seconds
    our_total = report.our_seconds + report.our_load_seconds
    print(f"graph loading time: VirtualHome {report.vh_load_seconds:.3f} s, ours {report.our_load_seconds:.3f} s "
          f"({report.vh_load_seconds / max(report.our_load_seconds, 1e-9):.1f}x); "
          f"load + execution {vh_total / max(our_total, 1e-9):.1f}x")
    _disagreements(report, args.show)
    print(json.dumps(report.summary()))


if __name__ == "__main__":
    main()

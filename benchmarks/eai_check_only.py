"""What the grounded check alone adds to a finished EAI run: no model call, no rewrite.

Each stored answer of a results store (`situated eval eai ... --out DIR`) is run on the private copy of its
task's scene with hints (`eval.systems.eai_check`, `--hints`): the steps a failing step needs are put before it
(`planners.eai.checked_steps`, a bounded search over the task's own actions and objects, never EAI's ground truth),
and the plan is cut where every goal holds. The changed answers are scored by EAI's evaluator; the others keep
their stored verdict. This is the grounded variant with zero rewrites applied to answers already written, so its
SR is what `--hints` adds before the model writes anything more.

    PYTHONHASHSEED=0 PYTHONPATH=src .venv/bin/python benchmarks/eai_check_only.py runs/eai-shots2-held

Last line JSON: {"tasks", "successes_before", "successes_after", "sr_before", "sr_after", "esr_before",
"esr_after", "changed", "with_inserted_steps", "cut_only", "changed_successes_before", "changed_successes_after",
"inserted_successes_before", "inserted_successes_after", "changed_metrics", "also_scored"} (successes by EAI's
evaluator: the stored per-task verdicts, and a pass over the changed answers; the inserted-steps subset scored once
more on its own; `also_scored`: with --also-score, EAI's metrics of one full pass over all checked answers).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from situated.datasets.eai_actions import load_tasks
from situated.eval.store import read_episodes
from situated.eval.systems.eai_check import scene_checker
from situated.eval.systems.eai_evaluator import evaluate
from situated.planners.eai import checked_steps, convert_answer, format_answer, parse_answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path, help="a finished `situated eval eai` results folder (--out)")
    parser.add_argument("--work", type=Path, default=None, help="evaluator folder (default: STORE/check-only)")
    parser.add_argument("--also-score", default=None, metavar="PROTOCOL",
                        help="also score all checked answers, rewritten for PROTOCOL (1.0.4: names only, the "
                             "published table's evaluator, benchmarks/eai_setup_104.sh), in one full pass")
    args = parser.parse_args()
    config, episodes = read_episodes(args.store)
    protocol = str(config["config"]["protocol"])
    tasks = {t.task_id: t for t in load_tasks()}
    changed: dict[str, str] = {}
    checked: dict[str, str] = {}
    inserted: set[str] = set()
    for episode in episodes:
        task = tasks[episode.task]
        answer = str(episode.details["answer"])
        steps, added, _ = checked_steps(parse_answer(answer, task, protocol), scene_checker(task, hints=True))
        checked[episode.task] = format_answer(steps, protocol)
        if checked[episode.task] != answer:
            changed[episode.task] = checked[episode.task]
            if added:
                inserted.add(episode.task)
    work = args.work or args.store / "check-only"
    verdict = evaluate(changed, protocol, workdir=work / "changed") if changed else None
    alone = evaluate({k: changed[k] for k in inserted}, protocol, workdir=work / "inserted") if inserted else None
    success = {e.task: e.metrics["success"] for e in episodes}
    executable = {e.task: e.metrics["executable"] for e in episodes}
    executable_after = sum(executable.values()) - sum(executable[k] for k in changed) \
        + (verdict.metrics["executable"] if verdict else 0)
    before = sum(success.values())
    changed_before = sum(success[k] for k in changed)
    changed_after = verdict.metrics["successes"] if verdict else 0
    after = before - changed_before + changed_after
    n = len(episodes)
    print(f"{n} answers: {len(changed)} changed ({len(inserted)} with inserted steps, the rest only cut where the "
          f"goals hold); EAI successes {int(before)} -> {int(after)}")
    also = None
    if args.also_score:
        rewritten = {k: convert_answer(v, tasks[k], protocol, args.also_score) for k, v in checked.items()}
        also = evaluate(rewritten, args.also_score, workdir=work / f"all-{args.also_score}").metrics
    print(json.dumps({
        "tasks": n, "successes_before": int(before), "successes_after": int(after),
        "sr_before": round(100 * before / n, 4), "sr_after": round(100 * after / n, 4),
        "esr_before": round(100 * sum(executable.values()) / n, 4), "esr_after": round(100 * executable_after / n, 4),
        "changed": len(changed), "with_inserted_steps": len(inserted), "cut_only": len(changed) - len(inserted),
        "changed_successes_before": int(changed_before), "changed_successes_after": changed_after,
        "inserted_successes_before": int(sum(success[k] for k in inserted)),
        "inserted_successes_after": alone.metrics["successes"] if alone else 0,
        "changed_metrics": verdict.metrics if verdict else None,
        **({"also_scored": also} if also is not None else {})}))


if __name__ == "__main__":
    main()

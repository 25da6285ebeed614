"""Seed a cassette with a finished open-loop `--shots 2 --approach` run's answers, so a grounded run that starts
from the same answer (`--approach --repairs N [--hints]`) replays its first call instead of planning it again.

Under greedy decoding the grounded run's first call is the very request the open-loop run made (same prompt,
same approach grammar), so the stored answer is its response. An answer cut at `max_tokens` is stored as its
complete steps followed by "," with finish_reason "length": the planner keeps exactly those steps, as it did in
the open-loop run. Token counts and seconds are the stored episode's.

    PYTHONHASHSEED=0 PYTHONPATH=src .venv/bin/python benchmarks/eai_seed_cassette.py runs/eai-shots2-held \\
        runs/eai-ga/first-answers-all.jsonl
"""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace

from situated.datasets.eai_actions import load_tasks
from situated.eval.store import read_episodes
from situated.eval.systems.eai_episodes import mode
from situated.llm.cassette import Cassette
from situated.planners.eai import DEFAULT_MAX_TOKENS, answer_grammar, model_prompt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path, help="a finished open-loop `--shots 2 --approach` results folder")
    parser.add_argument("cassette", type=Path, help="cassette file to write (JSON lines)")
    parser.add_argument("--model", default="llamacpp:qwen2.5-coder-1.5b")
    args = parser.parse_args()
    run, episodes = read_episodes(args.store)
    config = run["config"]
    shots, protocol = int(config.get("shots", 0)), str(config["protocol"])
    tasks = {t.task_id: t for t in load_tasks()}
    cassette = Cassette(args.cassette, "record")
    seeded = skipped = 0
    for episode in episodes:
        if episode.cost.calls != 1 or episode.details.get("mode") != mode(0):
            skipped += 1
            continue
        task = tasks[episode.task]
        text = str(episode.details["answer"])
        cut = bool(episode.details["truncated"])
        if cut:
            text = text.removesuffix("\n}") + ","
        request = {"uri": args.model, "call": "complete",
                   "prompt": model_prompt(SimpleNamespace(uri=args.model), task, protocol, None, shots=shots),
                   "stop": [], "max_tokens": DEFAULT_MAX_TOKENS, "temperature": 0.0, "frequency_penalty": 0.0,
                   "grammar": answer_grammar(task, protocol, approach=True), "seed": 0}
        response = {"text": text, "finish_reason": "length" if cut else "stop",
                    "prompt_tokens": episode.cost.prompt_tokens, "completion_tokens": episode.cost.tokens,
                    "cached_tokens": 0, "seconds": episode.cost.model_seconds}
        cassette.put(Cassette.key(request), request, response)
        seeded += 1
    print(f"{seeded} first answers seeded, {skipped} skipped -> {args.cassette}")


if __name__ == "__main__":
    main()

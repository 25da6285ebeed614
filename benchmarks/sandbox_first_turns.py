"""Measures what the side questions' prompt states on disk save a new process's first turns (not a test): the
first utterances of a session file, answered by a freshly loaded engine three times in one command -- cold (no
states on disk), with only the scene prompt's state on disk (what a process kept before side questions' states
were kept), and with every state the cold run left -- and the ratios of model seconds.

    PYTHONPATH=src python benchmarks/sandbox_first_turns.py SESSION [--lines 2] [--model qwen2.5-coder-1.5b]
        [--threads 2]

Each "process" is a new llama.cpp engine (the process-wide engine cache is emptied first), so weights come from the
page cache, as a second process's would; loading is not counted. The plans are not confirmed (nothing runs on the
table), so each run asks the same questions. Prints one line per run and a JSON line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from situated.envs.tabletop import TabletopEnv
from situated.llm import llamacpp
from situated.sandbox import SkillLibrary
from situated.sandbox.evaluation import scene_of
from situated.sandbox.script import read_script
from situated.sandbox.session import SandboxSession


def run(session: Path, lines: int, model: str, threads: int, states: Path) -> dict:
    """Seconds and replies of the session's first `lines` utterances in a new engine."""
    llamacpp._ENGINES.clear()  # a new engine, as a new process would load
    llm = llamacpp.LlamaCppLLM(model, n_threads=threads, exact_prefix=False, prompt_states=states, state_cache=20)
    scene = scene_of(session, "gift_bag")
    utterances = [line.text for line in read_script(session) if line.kind == "user"][:lines]
    env = TabletopEnv(scene, seed=0)
    seconds, replies = 0.0, []
    with tempfile.TemporaryDirectory() as folder, SkillLibrary.open(Path(folder) / "lib.db") as lib, \
            SandboxSession(env, llm, lib, scene=scene, model=f"llamacpp:{model}") as sandbox:
        for text in utterances:
            start = time.perf_counter()
            reply = sandbox.say(text)
            seconds += time.perf_counter() - start
            replies.append(f"{reply.kind}: {reply.say[:60]}")
    return {"seconds": round(seconds, 3), "replies": replies}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("session", type=Path)
    parser.add_argument("--lines", type=int, default=2)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        every, scene_only = Path(folder) / "every", Path(folder) / "scene"
        rows = {"cold": run(args.session, args.lines, args.model, args.threads, every)}
        stored = sorted(every.rglob("*.kv"), key=lambda p: p.stat().st_size)
        biggest = stored[-1]                      # the scene's prompt (about 2,000 tokens; side prompts are < 900)
        target = scene_only / biggest.parent.relative_to(every)
        target.mkdir(parents=True)
        for path in (biggest, biggest.with_suffix(".tokens")):
            shutil.copy2(path, target / path.name)
        rows["scene prompt on disk"] = run(args.session, args.lines, args.model, args.threads, scene_only)
        rows["every prompt on disk"] = run(args.session, args.lines, args.model, args.threads, every)
    for name, row in rows.items():
        print(f"{name:>21}: {row['seconds']:7.3f} s; {' | '.join(row['replies'])}")
    same = len({tuple(r["replies"]) for r in rows.values()}) == 1
    cold, scene, warm = (rows[k]["seconds"] for k in rows)
    print(f"states on disk: {len(stored)}; every / cold: {warm / cold:.3f}; every / scene only: {warm / scene:.3f}; "
          f"same replies: {same}")
    print(json.dumps({"session": args.session.name, "lines": args.lines, "model": args.model,
                      "threads": args.threads, **{k.replace(" ", "_"): v for k, v in rows.items()},
                      "every_over_cold": round(warm / cold, 3), "every_over_scene_only": round(warm / scene, 3),
                      "same_replies": same}))


if __name__ == "__main__":
    main()

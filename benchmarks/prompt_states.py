"""Measures what a scene prompt's KV state on disk saves a new process (not a test): the sandbox planner's first
prompt on a scene, answered by a freshly loaded engine three times in one command -- cold (no states on disk),
after a process that left its state (`prompt_states`), and cold again -- and the ratio of model seconds.

    PYTHONPATH=src python benchmarks/prompt_states.py [--scene gift_bag] [--model qwen2.5-coder-1.5b] [--threads 2]
        [--request "put the duck in the tray"]

Each "process" is a new llama.cpp engine (the process-wide engine cache is emptied first), so weights are loaded
from the page cache, as a second process would; loading is not counted. Prints one line per run and a JSON line.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from llama_cpp.llama_grammar import json_schema_to_gbnf

from situated.actions import SANDBOX_SPACE
from situated.envs.tabletop import TabletopEnv
from situated.llm import llamacpp
from situated.planners.toolcall import Memory, TableState, ToolCallPlanner, answer_schema, turn_context
from situated.sandbox.objects import containers_of, scene_entries


def first_prompt(scene: str, request: str) -> tuple[list[dict], dict]:
    """The planner's messages and schema for `request` as a session's first turn on `scene`."""
    env = TabletopEnv(scene=scene)
    try:
        objects, containers = scene_entries(env), containers_of(env)
        items = [o.name for o in objects if o.kind == "item"]
        places = (*(o.name for o in objects if o.kind != "item"),)
        state = TableState(None, dict.fromkeys(items, "table"), places)
    finally:
        env.close()
    planner, memory = ToolCallPlanner(None), Memory()  # type: ignore[arg-type]
    memory.base = (SANDBOX_SPACE, tuple(objects))  # the API the system prompt shows, as a session's first turn
    context, _ = turn_context(state, SANDBOX_SPACE, objects, memory)
    messages = planner.messages(request, SANDBOX_SPACE, objects, memory, containers, context)
    return messages, answer_schema(SANDBOX_SPACE, objects)


def answer(model: str, threads: int, states: Path | None, messages: list[dict], schema: dict) -> dict:
    llamacpp._ENGINES.clear()  # a new engine, as a new process would load
    llm = llamacpp.LlamaCppLLM(model, n_threads=threads, exact_prefix=False, prompt_states=states)
    start = time.perf_counter()
    done = llm.complete(llm.chat_prompt(messages), max_tokens=96, grammar=json_schema_to_gbnf(json.dumps(schema)))
    return {"seconds": round(time.perf_counter() - start, 3), "prompt": done.prompt_tokens,
            "reused": done.cached_tokens, "text": done.text}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", default="gift_bag")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--request", default="put the duck in the tray")
    args = parser.parse_args()
    messages, schema = first_prompt(args.scene, args.request)
    with tempfile.TemporaryDirectory() as folder:
        states = Path(folder)
        rows = {"cold": answer(args.model, args.threads, None, messages, schema)}
        answer(args.model, args.threads, states, [*messages[:-1], {"role": "user", "content": "go home"}], schema)
        rows["warm"] = answer(args.model, args.threads, states, messages, schema)
        rows["cold again"] = answer(args.model, args.threads, None, messages, schema)
    for name, row in rows.items():
        print(f"{name:>10}: {row['seconds']:7.3f} s, {row['reused']:5d} of {row['prompt']} prompt tokens reused, "
              f"answer {row['text']}")
    cold = (rows["cold"]["seconds"] + rows["cold again"]["seconds"]) / 2
    same = rows["warm"]["text"] == rows["cold"]["text"] == rows["cold again"]["text"]
    print(f"warm / cold: {rows['warm']['seconds'] / cold:.3f}; same answer: {same}")
    print(json.dumps({"scene": args.scene, "model": args.model, "threads": args.threads, **{
        k.replace(" ", "_"): v for k, v in rows.items()}, "warm_over_cold": round(rows["warm"]["seconds"] / cold, 3),
        "same_answer": same}))


if __name__ == "__main__":
    main()

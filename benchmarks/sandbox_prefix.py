"""Measures where the sandbox planner's prompt prefix is reused (not a test): one session script run on the
embedded model, and for every model call the prompt's tokens, how many llama.cpp took from its cache of the
previous prompt, how many it evaluated, the tokens it generated and the seconds it took.

    PYTHONPATH=src python benchmarks/sandbox_prefix.py [--script examples/sandbox/gift_bag.session]
        [--model llamacpp:qwen2.5-coder-1.5b] [--threads 2] [--compare]

`--compare` runs the script twice in one process, first with exact prefixes (whole prompt chunks, as ProgPrompt
uses the backend), then as a conversation (`exact_prefix=False`, as the sandbox commands open the model: every
cached token a turn shares is reused), and prints the ratios of evaluated prompt tokens and model seconds.

Prints one line per call (the utterance it answered), then the totals and the share of prompt tokens reused;
last line JSON. A call whose evaluated tokens are many (hundreds) is where the prompt stopped being append-only.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from llama_cpp.llama_grammar import json_schema_to_gbnf

from situated.envs.tabletop import TabletopEnv
from situated.llm import load
from situated.llm.base import parse_json
from situated.sandbox import SkillLibrary
from situated.sandbox.evaluation import scene_of
from situated.sandbox.script import read_script, run_script
from situated.sandbox.session import SandboxSession


class PrefixProbe:
    """An embedded LLM whose `json` calls record the backend's completion (cached and evaluated tokens)."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm
        self.rows: list[dict[str, Any]] = []
        self.uri = llm.uri

    def __getattr__(self, name: str) -> Any:
        return getattr(self.llm, name)

    def json(self, messages: list[dict], schema: dict, *, max_tokens: int = 512, temperature: float = 0.0,
             seed: int = 0) -> Any:
        grammar = json_schema_to_gbnf(json.dumps(schema))
        done = self.llm.complete(self.llm.chat_prompt(messages), max_tokens=max_tokens, temperature=temperature,
                                 grammar=grammar, seed=seed)
        last = messages[-1]["content"].rsplit("Request: ", 1)[-1].splitlines()[0][:48]
        self.rows.append({"request": last, "prompt": done.prompt_tokens, "cached": done.cached_tokens,
                          "evaluated": done.prompt_tokens - done.cached_tokens,
                          "generated": done.completion_tokens, "seconds": round(done.seconds, 3)})
        return parse_json(done.text, schema, self.uri)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", type=Path, default=Path("examples/sandbox/gift_bag.session"))
    parser.add_argument("--model", default="llamacpp:qwen2.5-coder-1.5b")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--compare", action="store_true", help="exact prefixes, then a conversation; ratios")
    args = parser.parse_args()
    llm = load(args.model, n_threads=args.threads)
    modes = [True, False] if args.compare else [False]
    totals = {}
    for exact in modes:
        llm.exact_prefix = exact  # type: ignore[attr-defined]
        llm._engine.states.clear()  # type: ignore[attr-defined]  # each mode starts cold
        llm._engine._clear()  # type: ignore[attr-defined]
        totals["exact" if exact else "conversation"] = run(llm, args.script)
    if args.compare:
        exact, chat = totals["exact"], totals["conversation"]
        print(f"exact / conversation: evaluated prompt tokens {exact['evaluated'] / max(chat['evaluated'], 1):.2f}×, "
              f"model seconds {exact['seconds'] / max(chat['seconds'], 1e-9):.2f}×")
    print(json.dumps({"script": str(args.script), "model": args.model, **totals}))


def run(llm: Any, script: Path) -> dict[str, Any]:
    """Run `script` once on `llm`; print one line per call and the totals; return them with the calls."""
    probe = PrefixProbe(llm)
    scene = scene_of(script, "gift_bag")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as temp, SkillLibrary.open(Path(temp) / "lib.db") as lib:
        env = TabletopEnv(scene)
        try:
            with SandboxSession(env, probe, lib, scene=scene) as session:  # type: ignore[arg-type]
                result = run_script(session, read_script(script))
        finally:
            env.close()
    for row in probe.rows:
        print(f"{row['request']:<48} prompt {row['prompt']:>5}  cached {row['cached']:>5}  evaluated "
              f"{row['evaluated']:>5}  generated {row['generated']:>3}  {row['seconds']:>6.2f} s")
    prompt = sum(r["prompt"] for r in probe.rows)
    evaluated = sum(r["evaluated"] for r in probe.rows)
    seconds = sum(r["seconds"] for r in probe.rows)
    mode = "exact" if getattr(llm, "exact_prefix", True) else "conversation"
    print(f"{mode}: {len(probe.rows)} calls: {prompt} prompt tokens, {evaluated} evaluated "
          f"({1 - evaluated / prompt:.1%} reused), {sum(r['generated'] for r in probe.rows)} generated, "
          f"{seconds:.1f} model s; "
          f"{result.met}/{result.expectations} expectations; {time.perf_counter() - start:.1f} s", flush=True)
    return {"evaluated": evaluated, "prompt": prompt, "seconds": round(seconds, 3), "met": result.met,
            "expectations": result.expectations, "calls": probe.rows}


if __name__ == "__main__":
    main()

"""Candidate ProgPrompt configurations on the development set: SR / GCR / Exec with 95 % bootstrap intervals.

Runs each candidate over the development set (`situated.datasets.progprompt_dev`: env1/env2's released tasks, the
written tasks of examples/progprompt_dev, the re-grounded training plans) with the library's planner, episode and
runner, and prints per candidate: SR, GCR and Exec (mean ± std over runs) with 95 % bootstrap intervals over
tasks, the same per part, the abandoned steps, the prompts whose examples name objects the task's scene lacks
(and those showing the task's own plan, which must be 0), generated tokens and model seconds per task; then each
candidate's paired difference to the first with its interval. The last line is JSON.

A candidate is `NAME` or `NAME:key=value,...` with keys examples (retrieved|fixed), k, retriever (minilm|bm25),
repairs, goals (0|1), plan-tokens, scene (0|1: examples naming the fewest objects the task's scene lacks first),
pre (0|1: a failing call's missing steps searched for before the model rewrites it, `--preconditions`) and
keep (0|1: that search only where the model's rewrite would give the task step up, `--keep-steps`) and
rooms (0|1: a walk to the room written before each move into another room, `--room-walks`) and open (0|1:
the search only for calls that fail for want of something opened, `--open-first`) and done (0|1: a call whose
effect already holds dropped, `--skip-done`);
unset keys are 5 examples retrieved by MiniLM, 5 repairs, scene 0 (`eval progprompt`'s defaults before scene-first
retrieval became one, so the earlier stores resume: name it with `scene=1`). `--temperature T` > 0
samples every model call (seeded by run and prompt, so a rerun repeats it and runs differ); 0 is greedy. Each
candidate's episodes go to `--out/NAME/` and a rerun with the same settings resumes.

Usage: PYTHONPATH=src .venv/bin/python benchmarks/progprompt_devset.py --candidate default \\
    --candidate fixed:examples=fixed --model llamacpp:qwen2.5-coder-0.5b --runs 1 --out runs/devset
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from situated.datasets.progprompt import load_example_plans
from situated.datasets.progprompt_apartment import load_apartment_tasks
from situated.datasets.progprompt_dev import PARTS, TRAIN_PLANS, WRITTEN_DIR, DevTask, load_dev_set
from situated.envs.household import HouseholdEnv
from situated.errors import SituatedError
from situated.eval.bootstrap import bootstrap, bootstrap_differences
from situated.eval.episode import Episode
from situated.eval.episode_runner import run_episodes
from situated.eval.executors import ModelSpec
from situated.eval.store import ResultsStore, fingerprint
from situated.eval.summary import summarize
from situated.eval.systems.household_episodes import household_config, household_episode
from situated.eval.systems.household_sampling import SampledLLM, check_temperature
from situated.llm.base import LLM
from situated.planners.base import Planner
from situated.planners.factory import household_planner_factory
from situated.planners.progprompt_prompt import ProgPromptPrompt, same_task
from situated.planners.retrieval import make_retriever
from situated.program.grammar import plan_objects

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "progprompt"
METRICS = ("success", "gcr", "exec")
LABELS = {"success": "SR", "gcr": "GCR", "exec": "Exec"}
DEFAULTS: dict[str, Any] = {"examples": "retrieved", "k": None, "retriever": "minilm", "repairs": 5, "goals": False,
                            "plan-tokens": None, "scene": False, "pre": False, "keep": False,
                            "rooms": False, "open": False, "done": False}
"""`eval progprompt`'s defaults when this was written, before `scene` (docs/progprompt.md); k: 5 retrieved, 3 fixed."""


@dataclass(frozen=True)
class Candidate:
    """A named configuration of the ProgPrompt planner."""

    name: str
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def k(self) -> int:
        k = self.settings["k"]
        return int(k) if k is not None else (5 if self.settings["examples"] == "retrieved" else 3)

    def planner_factory(self, llm: LLM, plans: Mapping[str, str]) -> Callable[[], Planner]:
        s = self.settings
        return household_planner_factory(
            llm, plans, n_examples=self.k, max_repairs=s["repairs"], goals=s["goals"], plan_tokens=s["plan-tokens"],
            retriever=s["retriever"] if s["examples"] == "retrieved" else None, scene_examples=s["scene"],
            preconditions=s["pre"], keep_steps=s["keep"], room_walks=s["rooms"], open_first=s["open"],
            skip_done=s["done"])

    def config(self) -> dict[str, Any]:
        """The settings as stored with the episodes (`scene` only when on, so earlier stores still resume)."""
        retriever = self.settings["retriever"] if self.settings["examples"] == "retrieved" else None
        config = {**self.settings, "k": self.k, "retriever": retriever}
        for key in ("scene", "pre", "keep", "rooms", "open", "done"):
            if not config[key]:
                del config[key]
        return config


def parse_candidate(text: str) -> Candidate:
    """`NAME` or `NAME:key=value,...` (module docstring); SituatedError naming what is wrong."""
    name, _, rest = text.partition(":")
    if not name or not all(c.isalnum() or c in "-_." for c in name):
        raise SituatedError(f"--candidate {text!r}: the name must be letters, digits, '-', '_' or '.'")
    settings = dict(DEFAULTS)
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if key not in DEFAULTS or not eq:
            raise SituatedError(f"--candidate {text!r}: {item!r} is not key=value with a key of "
                                f"{', '.join(DEFAULTS)}")
        settings[key] = _value(key, value, text)
    return Candidate(name, settings)


def _value(key: str, value: str, text: str) -> Any:
    choices = {"examples": ("retrieved", "fixed"), "retriever": ("minilm", "bm25"), "goals": ("0", "1"),
               "scene": ("0", "1"), "pre": ("0", "1"), "keep": ("0", "1"),
               "rooms": ("0", "1"), "open": ("0", "1"), "done": ("0", "1")}
    if key in choices:
        if value not in choices[key]:
            raise SituatedError(f"--candidate {text!r}: {key} must be {' or '.join(choices[key])}, not {value!r}")
        return value == "1" if key in ("goals", "scene", "pre", "keep", "rooms", "open", "done") else value
    if not value.isdigit() or (key != "repairs" and int(value) < 1):
        raise SituatedError(f"--candidate {text!r}: {key} must be a whole number{'' if key == 'repairs' else ' >= 1'}")
    return int(value)


# ------------------------------------------------------------------------------------------------ running

def evaluate(candidate: Candidate, dev: Sequence[DevTask], llm: LLM, plans: Mapping[str, str], *, runs: int,
             temperature: float, seed: int, out: Path | None, model: str,
             whole: Sequence[DevTask] | None = None) -> list[Episode]:
    """The candidate's episodes on `dev` × `runs`, resumed from / written to `out` (a results store whose key
    names the `whole` set that `dev` was drawn from, so runs on subsets of it share their episodes)."""
    sampled = SampledLLM(llm, temperature, seed)
    factory = candidate.planner_factory(sampled, plans)  # type: ignore[arg-type]  # SampledLLM is an LLM

    def make() -> Callable[[Any, int], Episode]:
        planner = factory()

        def episode(task: Any, run: int) -> Episode:
            sampled.run = run
            return household_episode(task, run, planner, seed=seed)

        return episode

    tasks = [d.task for d in dev]
    config = household_config([d.task for d in whole or dev], model=model, planner="progprompt-devset",
                              **candidate.config(), example_plans=fingerprint(plans), temperature=temperature,
                              seed=seed)
    with ResultsStore(out, config, system="household") as store:
        return run_episodes(tasks, runs, make, store)


def prompt_checks(candidate: Candidate, dev: Sequence[DevTask], plans: Mapping[str, str]) -> dict[str, list[int]]:
    """Per part: [tasks, prompts whose examples name objects the scene lacks, prompts showing the task's own plan].
    The examples are chosen as the candidate's planner chooses them (no model needed)."""
    s = candidate.settings
    retriever = make_retriever(s["retriever"]) if s["examples"] == "retrieved" else None
    prompts = ProgPromptPrompt(examples=plans, n_examples=candidate.k, retriever=retriever,
                               scene_examples=s["scene"])
    counts: dict[str, list[int]] = {}
    for d in dev:
        scene = plan_objects(HouseholdEnv(d.task.initial_graph).object_names())
        shown = prompts.examples_for(d.task.name, scene)
        row = counts.setdefault(d.part, [0, 0, 0])
        row[0] += 1
        row[1] += not set(prompts.example_objects(d.task.name, scene)) <= set(scene)
        row[2] += any(same_task(name, d.task.name) for name in shown)
    return counts


def print_prompt_checks(candidate: Candidate, counts: Mapping[str, list[int]]) -> None:
    total = [sum(row[i] for row in counts.values()) for i in range(3)]
    print(f"  prompts naming objects absent from the scene {total[1]}/{total[0]} ("
          + ", ".join(f"{part} {row[1]}/{row[0]}" for part, row in counts.items())
          + f"); prompts showing the task's own plan {total[2]}")


# ------------------------------------------------------------------------------------------------ reporting

def _interval_text(episodes: Sequence[Episode], seed: int) -> dict[str, str]:
    s = summarize(episodes, METRICS)
    ci = bootstrap(episodes, METRICS, seed=seed)
    std = {m: f" ± {s[m].std:.3f}" if s.runs > 1 else "" for m in METRICS}
    return {m: f"{s[m].mean:.3f}{std[m]} [{ci[m].low:.3f}, {ci[m].high:.3f}]" for m in METRICS}


def report(candidate: Candidate, episodes: Sequence[Episode], dev: Sequence[DevTask],
           checks: Mapping[str, list[int]], seed: int) -> dict[str, Any]:
    """Print the candidate's lines; return its summary for the JSON line."""
    part_of = {d.task.task_id: d.part for d in dev}
    tasks = len({e.task for e in episodes})
    abandoned = sum(int(e.details.get("abandoned", 0)) for e in episodes)
    tokens = sum(e.cost.tokens for e in episodes) / len(episodes)
    model_seconds = sum(e.cost.model_seconds for e in episodes) / len(episodes)
    whole = _interval_text(episodes, seed)
    print(f"{candidate.name} ({', '.join(f'{k}={v}' for k, v in candidate.config().items())}): {tasks} tasks × "
          f"{len(episodes) // max(tasks, 1)} runs")
    print("  all      " + "  ".join(f"{LABELS[m]} {whole[m]}" for m in METRICS))
    for part in PARTS:
        some = [e for e in episodes if part_of.get(e.task) == part]
        if some:
            text = _interval_text(some, seed)
            print(f"  {part:<8} " + "  ".join(f"{LABELS[m]} {text[m]}" for m in METRICS)
                  + f"  ({len({e.task for e in some})} tasks, "
                  + f"{sum(int(e.details.get('abandoned', 0)) for e in some)} abandoned)")
    print(f"  abandoned steps {abandoned} ({abandoned / len(episodes) * 10:.2f} per 10 episodes); per episode "
          f"{tokens:.0f} generated tokens, {model_seconds:.1f} model seconds")
    print_prompt_checks(candidate, checks)
    s = summarize(episodes, METRICS)
    ci = bootstrap(episodes, METRICS, seed=seed)
    return {"name": candidate.name, "settings": candidate.config(), "tasks": tasks, "runs": s.runs,
            **{LABELS[m].lower(): round(s[m].mean, 4) for m in METRICS},
            **{f"{LABELS[m].lower()}_std": round(s[m].std, 4) for m in METRICS},
            **{f"{LABELS[m].lower()}_ci": [round(ci[m].low, 4), round(ci[m].high, 4)] for m in METRICS},
            "abandoned": abandoned, "absent_object_prompts": sum(r[1] for r in checks.values()),
            "own_plan_prompts": sum(r[2] for r in checks.values()),
            "tokens_per_episode": round(tokens, 1), "model_seconds_per_episode": round(model_seconds, 2)}


def differences(base: Candidate, other: Candidate, a: Sequence[Episode], b: Sequence[Episode],
                seed: int) -> dict[str, Any]:
    diff = bootstrap_differences(a, b, METRICS, seed=seed)
    paired = "paired" if diff["success"].paired else "unpaired"
    print(f"{other.name} − {base.name} ({paired}): " + "  ".join(
        f"{LABELS[m]} {d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}]{' *' if d.excludes_zero else ''}"
        for m, d in diff.items()))
    return {"a": base.name, "b": other.name, **{LABELS[m].lower(): d.to_dict() for m, d in diff.items()}}


# ------------------------------------------------------------------------------------------------ main

def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="ProgPrompt data directory")
    parser.add_argument("--written", type=Path, default=WRITTEN_DIR, help="folder of the written tasks")
    parser.add_argument("--candidate", action="append", default=[], help="NAME[:key=value,...] (repeatable)")
    parser.add_argument("--model", default="llamacpp:qwen2.5-coder-1.5b", help="model URI")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads")
    parser.add_argument("--runs", type=int, default=1, help="runs per task")
    parser.add_argument("--temperature", type=float, default=0.0, help="sample at T > 0 (0: greedy)")
    parser.add_argument("--seed", type=int, default=0, help="grounding and sampling seed")
    parser.add_argument("--parts", default=",".join(PARTS), help="parts of the set: released,written,train")
    parser.add_argument("--limit", type=int, default=None, help="only every n-th task, about this many")
    parser.add_argument("--offset", default="0", help=(
        "with --limit: the evenly spaced tasks shifted by this many places (--limit 20 --offset 2 gives 20 tasks "
        "none of which --offset 0 has: choose on one, confirm on the other); a comma list takes their union "
        "(--offset 0,2: both halves)"))
    parser.add_argument("--out", type=Path, default=None, help="folder of the candidates' results stores")
    parser.add_argument("--prompts-only", action="store_true",
                        help="only count the prompts' absent objects and own plans (no model)")
    parser.add_argument("--apartment", action="store_true",
                        help="with --prompts-only: also count them on environment 0's test tasks (reporting only)")
    parser.add_argument("--cassette", type=Path, default=None, help="record/replay model calls in this file")
    parser.add_argument("--cassette-mode", default="replay", help="replay, record or auto")
    args = parser.parse_args(argv)
    if args.runs < 1 or (args.limit is not None and args.limit < 1) or (args.threads is not None and args.threads < 1):
        raise SituatedError("--runs, --limit and --threads must be >= 1")
    args.offset = _offsets(args.offset)
    check_temperature(args.temperature)
    return args


def _offsets(text: str) -> tuple[int, ...]:
    """`--offset`: one number or a comma list, each >= 0; SituatedError otherwise."""
    try:
        offsets = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise SituatedError(f"--offset must be a number or a comma list of numbers, not {text!r}") from None
    if any(o < 0 for o in offsets):
        raise SituatedError(f"--offset must be >= 0, got {text}")
    return offsets


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _arguments(argv)
        candidates = [parse_candidate(c) for c in args.candidate or ["default"]]
        if len({c.name for c in candidates}) != len(candidates):
            raise SituatedError("--candidate: two candidates have the same name")
        whole = load_dev_set(args.data, args.written, parts=[p.strip() for p in args.parts.split(",") if p.strip()])
        dev = whole
        if args.limit is not None and args.limit < len(whole):
            picked = dict.fromkeys((round(i * len(whole) / args.limit) + offset) % len(whole)
                                   for offset in args.offset for i in range(args.limit))
            dev = [whole[i] for i in picked]
        plans = load_example_plans(args.data / TRAIN_PLANS)
        if args.prompts_only:
            for candidate in candidates:
                print(f"{candidate.name} ({', '.join(f'{k}={v}' for k, v in candidate.config().items())}):")
                print_prompt_checks(candidate, prompt_checks(candidate, dev, plans))
                if args.apartment:
                    apartment = [DevTask(t, "environment 0, reporting only:", "env0") for t in load_apartment_tasks()]
                    print_prompt_checks(candidate, prompt_checks(candidate, apartment, plans))
            return 0
        spec = ModelSpec(args.model, threads=args.threads,
                         cassette=str(args.cassette) if args.cassette else None, cassette_mode=args.cassette_mode)
        llm = spec.open()
        results, summaries = {}, []
        for candidate in candidates:
            out = args.out / candidate.name if args.out is not None else None
            results[candidate.name] = evaluate(candidate, dev, llm, plans, runs=args.runs,
                                               temperature=args.temperature, seed=args.seed, out=out,
                                               model=args.model, whole=whole)
            checks = prompt_checks(candidate, dev, plans)
            summaries.append(report(candidate, results[candidate.name], dev, checks, args.seed))
        diffs = [differences(candidates[0], c, results[candidates[0].name], results[c.name], args.seed)
                 for c in candidates[1:]]
    except SituatedError as exc:  # DataError included: one line, exit 2
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"model": args.model, "runs": args.runs, "temperature": args.temperature,
                      "tasks": len(dev), "candidates": summaries, "differences": diffs}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Cost of a late navigation step against an early one for the VELMA agent, with and without prefix reuse.

Each repetition takes one real Map2seq dev instance whose gold route needs more than `--step` actions (a
different one each time: the backend keeps the KV state of the last long prompts, so a repeated instance would
find its directions cached) and drives it by its gold actions, so it lasts long enough; at every step the VELMA
agent's next-action call is made and timed (the call's own `seconds`), and the history shows the gold action.
Before each measured episode the agent takes the first step of another instance, so the shared head (task line,
actions, examples) is already cached, as it is in a run over many instances.

- with reuse: the embedded backend evaluates only the tokens new since the previous call; the ratio
  t(step N) / t(step 1) shows whether late steps stay cheap although the prompt has grown.
- without reuse (`reuse_prefix=False`): every call evaluates the whole prompt; timed at steps 1 and N only
  (each such call is independent of the others).

Prints one line per repetition and, as its last line, JSON: {"step_cost_ratio", "step_cost_ratio_no_reuse", ...}.

    .venv/bin/python benchmarks/navigation_steps.py [--model llamacpp:qwen2.5-coder-1.5b] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from situated.datasets.map2seq import load_split
from situated.envs.streets.env import NavInstance, StreetEnv
from situated.envs.streets.oracle import gold_actions
from situated.eval.systems.navigation_episodes import velma_examples
from situated.llm import load
from situated.planners.velma import ACTION_GRAMMAR, VelmaAgent
from situated.program import Call

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "velma"


def ask(agent: VelmaAgent, prompt: str) -> float:
    """One next-action call as the agent makes it; returns the backend's seconds."""
    done = agent.llm.complete(prompt, stop=("\n",), max_tokens=agent.max_tokens, grammar=ACTION_GRAMMAR)
    return done.seconds


def drive(env: StreetEnv, agent: VelmaAgent, instance: NavInstance, timed: set[int] | None) -> dict[int, float]:
    """Run `instance` on gold actions; time the agent's call at steps in `timed` (None: at every step)."""
    gold = gold_actions(env.graph, instance)
    agent.reset(instance)
    env.reset(instance)
    times: dict[int, float] = {}
    call = 0
    while not env.done:
        call += 1
        observation = env.observation
        prompt = agent.next_prompt(observation)
        if timed is None or call in timed:
            times[call] = ask(agent, prompt)
        action = gold[observation.step]
        agent.record(action)
        env.step(Call(action))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llamacpp:qwen2.5-coder-1.5b")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--step", type=int, default=40, help="the late step compared with step 1")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads")
    args = parser.parse_args()

    dev = load_split(args.data / "map2seq_unseen", "dev")
    seen = load_split(args.data / "map2seq_seen", "dev")
    examples = velma_examples(seen, seed=0)
    long_ones = [i for i in dev.instances if len(gold_actions(dev.graph, i)) > args.step + 1][: args.repeat]
    other = next(i for i in dev.instances if i not in long_ones)
    env = StreetEnv(dev.graph, max_steps=None)
    opts = {"n_threads": args.threads} if args.threads else {}
    reuse = VelmaAgent(load(args.model, **opts), examples)
    scratch = VelmaAgent(load(args.model, reuse_prefix=False, **opts), examples)

    first, late, first_cold, late_cold = [], [], [], []
    for rep, long_one in enumerate(long_ones):
        drive(env, reuse, other, {1})  # warm: the head is cached, the live prompt belongs to another episode
        times = drive(env, reuse, long_one, None)
        first.append(times[1])
        late.append(times[args.step])
        cold = drive(env, scratch, long_one, {1, args.step})
        first_cold.append(cold[1])
        late_cold.append(cold[args.step])
        print(
            f"rep {rep + 1} (instance {long_one.id}): reuse step 1 {times[1]:.3f}s, "
            f"step {args.step} {times[args.step]:.3f}s; "
            f"no reuse step 1 {cold[1]:.3f}s, step {args.step} {cold[args.step]:.3f}s"
        )
    t1, tn = statistics.median(first), statistics.median(late)
    c1, cn = statistics.median(first_cold), statistics.median(late_cold)
    prompt_steps = drive_prompt_tokens(env, reuse, long_ones[0], args.step)
    print(
        json.dumps(
            {
                "step_cost_ratio": round(tn / t1, 3),
                "step_cost_ratio_no_reuse": round(cn / c1, 3),
                "step1_s": round(t1, 3),
                f"step{args.step}_s": round(tn, 3),
                "step1_no_reuse_s": round(c1, 3),
                f"step{args.step}_no_reuse_s": round(cn, 3),
                "reuse_speedup_at_step": round(cn / tn, 1),
                "prompt_tokens": prompt_steps,
                "instances": [i.id for i in long_ones],
                "model": args.model,
                "threads": args.threads,
                "repeat": args.repeat,
            }
        )
    )


def drive_prompt_tokens(env: StreetEnv, agent: VelmaAgent, instance: NavInstance, step: int) -> dict[str, int]:
    """Prompt length in tokens at step 1 and at `step` (no model call besides tokenizing)."""
    gold = gold_actions(env.graph, instance)
    agent.reset(instance)
    env.reset(instance)
    lengths: dict[str, int] = {}
    for call in range(1, step + 1):
        observation = env.observation
        prompt = agent.next_prompt(observation)
        if call in (1, step):
            lengths[f"step{call}"] = agent.llm.count_tokens(prompt)
        agent.record(gold[observation.step])
        env.step(Call(gold[observation.step]))
    return lengths


if __name__ == "__main__":
    main()

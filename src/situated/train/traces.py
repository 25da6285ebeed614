"""Navigation traces for finetuning: a route's verbalized walk in the finetune template, with the actions to learn.

The finetune template is the prompting agent's own prompt (`planners.velma.VelmaAgent`) without solved examples:
task line, the actions with their glosses, the directions, and the numbered history. A trace is that text cut
into pieces: context, then after each "N." the action the history shows (" left\\n") with the action the model
should learn there. Built with the agent's own `next_prompt`, so the text the model trains on is, piece by piece,
the text it is shown when it runs (checked: every prompt extends the trace so far).

- `teacher_trace` (VELMA-FT): the gold actions, as the environment executed them (left on a plain street reads
  forward, as in the prompting agent's history).
- `student_trace` (VELMA-RBL): a policy drives; at each step the oracle names the action that brings it back to
  the route (`envs.streets.oracle.gold_action`), which becomes the target, while the history shows what the
  policy did. A trace whose walk ends at the goal keeps the policy's own actions as targets.

Training data: only routes wholly in the training area (every panorama in the `seen` partition) of a
`map2seq_seen` directory (`training_routes`); directories of unseen data are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from ..datasets.map2seq import load_split
from ..envs.streets.env import MAX_STEPS, NavInstance, StreetEnv
from ..envs.streets.graph import StreetGraph
from ..envs.streets.oracle import gold_action, gold_actions
from ..errors import DataError, SituatedError
from ..eval.systems.navigation_episodes import in_partition
from ..eval.systems.navigation_metrics import episode_metrics
from ..llm.base import LLM
from ..planners.velma import VelmaAgent
from ..program import Call

Policy = Callable[[str], str]
"""Picks the next action word given the prompt (which ends with "N.")."""


@dataclass(frozen=True)
class Piece:
    """Part of a trace: `text` as the sequence holds it; `target` the action word to learn there (None: context)."""

    text: str
    target: str | None = None


@dataclass(frozen=True)
class Trace:
    """One route's walk in the finetune template; `success`: its path ended at the goal (TC)."""

    id: str
    pieces: tuple[Piece, ...]
    success: bool = True

    @property
    def text(self) -> str:
        return "".join(piece.text for piece in self.pieces)

    @property
    def targets(self) -> list[str]:
        return [piece.target for piece in self.pieces if piece.target is not None]

    @property
    def shown(self) -> list[str]:
        """The actions the history shows (what was executed), one per target."""
        return [piece.text.strip() for piece in self.pieces if piece.target is not None]


def finetune_prompter() -> VelmaAgent:
    """The prompting agent with no solved examples: it writes the finetune template (it never calls a model
    here; the trace builders only use its prompts)."""
    return VelmaAgent(cast(LLM, None), ())


def _append(pieces: list[Piece], shown: str, prompt: str, executed: str, target: str, instance: NavInstance) -> str:
    if not prompt.startswith(shown):
        raise SituatedError(f"instance {instance.id}: the prompt does not extend the trace (template changed?)")
    pieces.append(Piece(prompt[len(shown):]))
    action = f" {executed}\n"
    pieces.append(Piece(action, target))
    return prompt + action


def teacher_trace(graph: StreetGraph, instance: NavInstance) -> Trace:
    """The gold walk of `instance` (VELMA-FT's teacher forcing): every target the executed gold action."""
    env = StreetEnv(graph, None, max_steps=None)
    agent = finetune_prompter()
    agent.reset(instance)
    env.reset(instance)
    pieces: list[Piece] = []
    shown = ""
    for action in gold_actions(graph, instance)[len(env.trajectory.actions):]:
        prompt = agent.next_prompt(env.observation)
        env.step(Call(action))
        executed = env.trajectory.actions[-1]
        shown = _append(pieces, shown, prompt, executed, executed, instance)
        agent.record(executed)
    if env.trajectory.pano_path != instance.route:
        raise DataError(f"instance {instance.id}: gold replay does not reproduce the route")
    return Trace(instance.id, tuple(pieces), True)


def student_trace(graph: StreetGraph, instance: NavInstance, policy: Policy, max_steps: int = MAX_STEPS) -> Trace:
    """`policy` walks `instance` (VELMA-RBL); targets are the oracle's corrective actions, or the policy's own
    actions when its walk ends at the goal. A state from which the oracle finds no way back ends the trace."""
    env = StreetEnv(graph, None, max_steps=max_steps)
    agent = finetune_prompter()
    agent.reset(instance)
    env.reset(instance)
    pieces: list[Piece] = []
    shown = ""
    while not env.done:
        trajectory = env.trajectory
        try:
            wanted = env.correct(gold_action(graph, instance.route, trajectory.states, trajectory.pano_path))
        except DataError:
            break
        prompt = agent.next_prompt(env.observation)
        env.step(Call(policy(prompt)))
        executed = env.trajectory.actions[-1]
        shown = _append(pieces, shown, prompt, executed, wanted, instance)
        agent.record(executed)
    success = bool(episode_metrics(graph, instance.route, env.trajectory.pano_path).tc)
    if success:
        pieces = [Piece(p.text, p.text.strip()) if p.target is not None else p for p in pieces]
    return Trace(instance.id, tuple(pieces), success)


def walk(graph: StreetGraph, instance: NavInstance, policy: Policy, max_steps: int = MAX_STEPS) -> bool:
    """Whether `policy` alone completes `instance` (TC; the selection metric)."""
    return student_trace(graph, instance, policy, max_steps).success


@dataclass(frozen=True)
class TrainingRoutes:
    """Routes to train on: their graph, the instances, and where they came from."""

    graph: StreetGraph
    instances: tuple[NavInstance, ...]
    sources: tuple[str, ...]
    skipped: int
    """Routes of the files that leave the training area (not trained on)."""


def training_routes(data: Path, splits: Sequence[str]) -> TrainingRoutes:
    """The training-area routes of `data`'s `splits` (a `map2seq_seen` directory: its dev and test files hold the
    1,172 routes that lie wholly in the training area), in file order, without repeats; DataError for unseen data
    or a split with no training-area route."""
    name = Path(data).resolve().name.lower()
    if "unseen" in name:
        raise DataError(f"{data}: training uses only training-area routes (map2seq_seen), never unseen data")
    graph = None
    chosen: dict[str, NavInstance] = {}
    sources: list[str] = []
    skipped = 0
    for split in splits:
        loaded = load_split(data, split, "map2seq")
        graph = graph or loaded.graph
        inside = [i for i in loaded.instances if in_partition(loaded.graph, i)]
        skipped += len(loaded.instances) - len(inside)
        if not inside:
            raise DataError(f"{data}/data/{split}.json: no route lies wholly in the training area")
        for instance in inside:
            chosen.setdefault(instance.id, instance)
        sources.append(str((Path(data) / "data" / f"{split}.json").resolve()))
    if graph is None:
        raise DataError("--split names no split file")
    return TrainingRoutes(graph, tuple(chosen.values()), tuple(sources), skipped)

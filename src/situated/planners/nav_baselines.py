"""Street-navigation agents without a language model: gold (oracle replay), forward-only and random."""

from __future__ import annotations

import random
from typing import Any, Protocol, runtime_checkable

from ..envs.streets.env import NavInstance, Observation
from ..envs.streets.graph import StreetGraph
from ..envs.streets.oracle import gold_actions
from ..errors import SituatedError
from .base import ModelUsage

#: The forward-only and random baselines stop once they have seen this many panoramas (release value).
MAX_PANORAMAS = 40


@runtime_checkable
class NavAgent(Protocol):
    """An agent that chooses one action word per observation."""

    usage: ModelUsage
    """What its model calls cost so far (zero without a model); the runner reads it before and after."""

    def reset(self, instance: NavInstance) -> None:
        """Prepare for a new episode of `instance`."""
        ...

    def act(self, observation: Observation) -> str:
        """The next action word: forward, left, right, turn_around or stop (others get corrected)."""
        ...

    def record(self, executed: str) -> None:
        """Hear which action the environment executed for the last word (left on a plain street: forward)."""
        ...


class ModelFreeAgent:
    """What the agents without a model share: no cost, and the executed actions are not needed."""

    def __init__(self) -> None:
        self.usage = ModelUsage()

    def record(self, executed: str) -> None:
        return None


class GoldAgent(ModelFreeAgent):
    """Replays the oracle's gold actions; reproduces the gold route exactly."""

    def __init__(self, graph: StreetGraph) -> None:
        super().__init__()
        self._graph = graph
        self._actions: list[str] = []

    def reset(self, instance: NavInstance) -> None:
        self._actions = gold_actions(self._graph, instance)

    def act(self, observation: Observation) -> str:
        return self._actions[observation.step] if observation.step < len(self._actions) else "stop"


class ForwardAgent(ModelFreeAgent):
    """Always forward; stops after `max_panoramas` panoramas (the release's forward-only baseline)."""

    def __init__(self, max_panoramas: int = MAX_PANORAMAS) -> None:
        super().__init__()
        self.max_panoramas = max_panoramas

    def reset(self, instance: NavInstance) -> None:
        return None

    def act(self, observation: Observation) -> str:
        return "stop" if observation.path_length >= self.max_panoramas else "forward"


class RandomAgent(ModelFreeAgent):
    """Forward, but random forward/left/right at intersections and forward/turn_around at a Touchdown start.

    Stops after `max_panoramas` panoramas. Each episode's choices depend only on the seed and the instance id,
    so runs are reproducible and resumable in any order.
    """

    def __init__(self, seed: int = 0, max_panoramas: int = MAX_PANORAMAS) -> None:
        super().__init__()
        self.seed = seed
        self.max_panoramas = max_panoramas
        self._rng = random.Random(seed)
        self._forced_start = False

    def reset(self, instance: NavInstance) -> None:
        self._rng = random.Random(f"{self.seed}:{instance.dataset}:{instance.id}")
        self._forced_start = instance.forced_first_forward

    def act(self, observation: Observation) -> str:
        if observation.path_length >= self.max_panoramas:
            return "stop"
        if observation.step == 0 and not self._forced_start:
            return self._rng.choice(["forward", "turn_around"])
        if observation.intersection is not None:
            return self._rng.choice(["forward", "left", "right"])
        return "forward"


#: Agent names `make_agent` knows.
AGENTS: tuple[str, ...] = ("gold", "forward", "random", "words", "llm", "route")


def make_agent(name: str, **opts: Any) -> NavAgent:
    """Build a navigation agent by name (words: `planners.velma_words.WordsAgent`, the route the directions' words
    give, no model). Options: `graph` (gold), `seed` (random); for llm (VELMA's prompting
    agent, `planners.velma.VelmaAgent`) `llm` (an LLM) and `examples` (solved example trajectories), optionally
    `shots` with `retriever` (examples retrieved per instance) and `stop_threshold` (stop by p(stop)); for route
    (`planners.velma_route.RouteAgent`: one call writes a counted route) `llm`, `examples` (example routes),
    `shots` and optionally `retriever` and `turn_words` (the grammar fixes the turns the directions name) or
    `word_counts` (and where they happen)."""
    if name == "gold":
        graph = opts.get("graph")
        if not isinstance(graph, StreetGraph):
            raise SituatedError("the gold agent needs the street graph (graph=...)")
        return GoldAgent(graph)
    if name == "forward":
        return ForwardAgent()
    if name == "random":
        return RandomAgent(seed=int(opts.get("seed", 0)))
    if name == "words":
        from .velma_words import WordsAgent

        return WordsAgent()
    if name == "llm":
        from .velma import VelmaAgent

        llm, examples = opts.get("llm"), opts.get("examples")
        if llm is None or examples is None:
            raise SituatedError("the llm agent needs a model (llm=...) and solved examples (examples=...)")
        return VelmaAgent(llm, examples, shots=opts.get("shots"), retriever=opts.get("retriever"),
                          stop_threshold=opts.get("stop_threshold"))
    if name == "route":
        from .velma_route import RouteAgent

        llm, examples = opts.get("llm"), opts.get("examples")
        if llm is None or not examples:
            raise SituatedError("the route agent needs a model (llm=...) and example routes (examples=...)")
        return RouteAgent(llm, examples, shots=int(opts.get("shots") or 0), retriever=opts.get("retriever"),
                          follow_turn_words=bool(opts.get("turn_words")),
                          follow_word_counts=bool(opts.get("word_counts")))
    raise SituatedError(f"unknown agent {name!r}; expected one of {', '.join(AGENTS)}")

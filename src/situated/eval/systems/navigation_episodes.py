"""Street-navigation episodes (VELMA): an agent picks one action per step, each a one-call program run by the
interpreter on the street environment; the trace records every step and what the agent was shown.

Also the solved examples of VELMA's prompt: gold routes from the training area, replayed through the same
environment and verbalizer as the test episodes.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...datasets.map2seq import NavDataset, detect_dataset, graph_dir
from ...envs.streets.env import MAX_STEPS, NavInstance, StreetEnv
from ...envs.streets.graph import StreetGraph, load_graph
from ...envs.streets.oracle import gold_actions
from ...envs.streets.visibility import VisibilitySource
from ...envs.streets.visibility_kinds import VISIBILITY_KINDS, make_visibility
from ...errors import DataError, SituatedError
from ...interpreter import interpret
from ...planners.nav_baselines import AGENTS, NavAgent, make_agent
from ...planners.retrieval import make_retriever
from ...planners.velma import Example
from ...planners.velma_route import RouteExample, route_example
from ...program import Call, Program
from ...trace import ObservationEvent, StepEvent, Trace
from ..episode import Cost, Episode
from ..episode_runner import Progress, run_episodes
from ..executors import EpisodeFn, Executor, ModelSpec
from ..store import ResultsStore, fingerprint
from .navigation_metrics import NAVIGATION_METRICS, as_metrics, episode_metrics

HARD_ACTION_CAP = 10_000
"""Safety net for environments without a step limit (gold replays): no real route needs this many actions."""


TRAINING_PARTITION = "seen"


def navigation_episode(env: StreetEnv, agent: NavAgent, instance: NavInstance, run: int = 0) -> Episode:
    """One episode of `agent` on `instance`, scored with TC / SPD / KPA."""
    usage = agent.usage
    before = (usage.calls, usage.tokens, usage.prompt_tokens, usage.seconds)
    agent.reset(instance)
    trace = Trace()
    start_text = env.reset(instance)
    trace.add(ObservationEvent(start_text if not env.trajectory.actions else env.trajectory.observations[0], 0))
    for forced in env.trajectory.actions:  # Map2seq's first forward is taken by the environment itself
        trace.add(StepEvent(f"{forced}()", True, "forced first step", (), 0, 0))
        trace.add(ObservationEvent(env.observation.text, len(env.trajectory.actions)))
    while not env.done:
        taken = len(env.trajectory.actions)
        if taken >= HARD_ACTION_CAP:
            raise SituatedError(f"instance {instance.id}: the agent did not stop within {HARD_ACTION_CAP} actions")
        word = agent.act(env.observation)
        trace.events += interpret(Program((Call(word, line=taken + 1),)), env).events
        if len(env.trajectory.actions) == taken:  # the environment refused the call (e.g. arguments)
            raise SituatedError(f"instance {instance.id}: the environment did not take {word!r}")
        agent.record(env.trajectory.actions[-1])  # what the rules actually executed
        trace.add(ObservationEvent(env.observation.text, len(env.trajectory.actions)))
    trajectory = env.trajectory
    metrics = episode_metrics(env.graph, instance.route, trajectory.pano_path)
    usage = agent.usage
    after = (usage.calls, usage.tokens, usage.prompt_tokens, usage.seconds)
    cost = Cost(tokens=after[1] - before[1], prompt_tokens=after[2] - before[2], calls=after[0] - before[0],
                model_seconds=after[3] - before[3])
    details = {
        "dataset": instance.dataset, "actions": list(trajectory.actions), "pano_path": list(trajectory.pano_path),
        "states": [[s.panoid, s.heading] for s in trajectory.states], "observations": list(trajectory.observations),
        "gold_path": list(instance.route),
    }
    return Episode(instance.id, instance.instruction, run, as_metrics(metrics), trace, cost, details)


def example_from_route(graph: StreetGraph, instance: NavInstance,
                       visibility: VisibilitySource | None = None, *, count_intersections: bool = False) -> Example:
    """Replay the gold actions of `instance` and record what the agent would have observed at each step.

    The history shows executed actions (after the environment's corrections); Map2seq's start observation
    is left out because a Map2seq agent never sees it (its first, forced forward happens in reset()).
    `count_intersections` must match the test episodes' environment (see `StreetEnv`).
    """
    env = StreetEnv(graph, visibility, max_steps=None, count_intersections=count_intersections)
    env.reset(instance)
    for action in gold_actions(graph, instance)[len(env.trajectory.actions):]:
        env.step(Call(action))
    trajectory = env.trajectory
    if trajectory.pano_path != instance.route:
        raise DataError(f"instance {instance.id}: gold replay does not reproduce the route")
    start = "" if instance.forced_first_forward else trajectory.observations[0]
    return Example(instance.id, instance.instruction, trajectory.actions, trajectory.observations[1:], start)


def in_partition(graph: StreetGraph, instance: NavInstance, partition: str = TRAINING_PARTITION) -> bool:
    """Whether every panorama of the route lies in `partition` (`seen` = the training area)."""
    return all(graph.nodes[p].partition == partition for p in instance.route)


def velma_examples(dataset: NavDataset, n: int | None = 2, *, seed: int = 0,
                   visibility: VisibilitySource | None = None, shortest_fraction: float = 0.25,
                   count_intersections: bool = False) -> tuple[Example, ...]:
    """`n` solved examples from training-area routes of `dataset`, chosen by `seed` (None: the whole pool, the
    candidates an example retriever chooses from).

    Candidates: routes wholly in the training area whose gold actions include a left or right turn; of these
    the `shortest_fraction` with the fewest actions (short examples keep the prompt small); then `n` drawn
    with `random.Random(seed)`, in id order for a stable prompt. `count_intersections` as in the test episodes'
    environment.
    """
    scored: list[tuple[int, str, NavInstance]] = []
    for instance in dataset.instances:
        if not in_partition(dataset.graph, instance):
            continue
        actions = gold_actions(dataset.graph, instance)
        if not {"left", "right"} & set(actions):
            continue
        scored.append((len(actions), instance.id, instance))
    if len(scored) < (n or 1):
        raise DataError(f"{dataset.name} {dataset.split}: only {len(scored)} training-area routes, need {n or 1}")
    scored.sort(key=lambda item: (item[0], item[1]))
    pool = scored[: max(n or 1, round(len(scored) * shortest_fraction))]
    chosen = sorted(random.Random(seed).sample(pool, n) if n is not None else pool, key=lambda item: item[1])
    return tuple(example_from_route(dataset.graph, item[2], visibility, count_intersections=count_intersections)
                 for item in chosen)


def route_examples(dataset: NavDataset) -> tuple[RouteExample, ...]:
    """Every training-area route of `dataset` with the counted route its gold path walks (the route agent's
    example pool, `planners.velma_route`), in id order."""
    chosen = sorted((i for i in dataset.instances if in_partition(dataset.graph, i)), key=lambda i: i.id)
    if not chosen:
        raise DataError(f"{dataset.name} {dataset.split}: no training-area routes for the route agent's examples")
    return tuple(route_example(dataset.graph, instance) for instance in chosen)


def navigation_summary(episodes: Sequence[Episode]) -> dict[str, float | int]:
    """Means over episodes as the papers report them: TC and KPA in percent, SPD in hops, and the count."""
    n = len(episodes)
    if n == 0:
        raise SituatedError("no navigation episodes to summarize")
    mean = {k: sum(e.metrics[k] for e in episodes) / n for k in NAVIGATION_METRICS}
    return {"tc": 100 * mean["tc"], "spd": mean["spd"], "kpa": 100 * mean["kpa"],
            "kpa_corrected": 100 * mean["kpa_corrected"], "n": n}


def navigation_config(instances: Sequence[NavInstance], **settings: object) -> dict[str, object]:
    """The configuration key of a navigation evaluation: the settings plus a digest of the instances."""
    return {**settings, "instances": fingerprint([(i.id, i.route, i.instruction, i.start_heading, i.landmarks)
                                                  for i in instances])}


def evaluate_navigation(env: StreetEnv, agent: NavAgent, instances: Sequence[NavInstance], *, out: Path | None,
                        config: Mapping[str, object], on_progress: Progress | None = None) -> list[Episode]:
    """Run `agent` on every instance (one run each), resuming from the results store `out` (None: in memory)."""
    with ResultsStore(out, config, system="navigation") as store:
        return run_episodes(instances, 1, lambda: lambda instance, run: navigation_episode(env, agent, instance, run),
                            store, on_progress=on_progress)


@dataclass(frozen=True)
class VisibilitySpec:
    """Which landmarks an agent sees (`envs.streets.visibility_kinds.make_visibility`'s options), as data."""

    kind: str = "none"
    file: str | None = None
    panoramas: str | None = None
    stats: str | None = None
    weights: str | None = None
    model: str = "ViT-B-32"

    def __post_init__(self) -> None:  # the cheap checks of make_visibility, before any worker starts
        if self.kind not in VISIBILITY_KINDS:
            raise DataError(f"--landmarks must be one of {', '.join(VISIBILITY_KINDS)}, not {self.kind!r}")
        if self.kind == "file" and self.file is None:
            raise DataError("--landmarks file needs --landmarks-file F (a situated-visibility/1 JSON file)")
        if self.kind == "clip" and None in (self.panoramas, self.stats, self.weights):
            raise DataError("--landmarks clip needs --panoramas DIR, --clip-stats F and --clip-weights F")

    def make(self, graph: StreetGraph) -> VisibilitySource:
        def path(value: str | None) -> Path | None:
            return Path(value) if value is not None else None

        return make_visibility(self.kind, file=path(self.file), panoramas=path(self.panoramas),
                               stats=path(self.stats), weights=path(self.weights), model=self.model,
                               centers={p: float(n.yaw) for p, n in graph.nodes.items()})


@dataclass(frozen=True)
class NavigationJob:
    """A navigation evaluation's episodes as data, for any executor: the agent, where the street graph is, what
    the agent sees, its model and solved examples (the LLM agent), the step limit. `build()` (in the worker,
    once) loads the graph, opens the model, makes the agent and the environment.

    `graph` may carry the graph already loaded in this process; it is never sent to another process (workers
    load it from `data`)."""

    agent: str
    data: str
    """The dataset directory (its `graph/`, or a sibling's: `datasets.map2seq.graph_dir`)."""
    dataset: str | None = None
    seed: int = 0
    model: ModelSpec | None = None
    examples: tuple[Example, ...] | tuple[RouteExample, ...] = ()
    """Solved trajectories (llm agent) or example routes (route agent)."""
    visibility: VisibilitySpec = VisibilitySpec()
    max_steps: int | None = MAX_STEPS
    graph: StreetGraph | None = field(default=None, compare=False, repr=False)
    shots: int | None = None
    """With `retriever`: the examples shown per episode, the nearest of `examples` to its directions."""
    retriever: str | None = None
    stop_threshold: float | None = None
    """Stop when the model's probability of `stop` reaches this (the LLM agent; needs a scoring backend)."""
    count_intersections: bool = False
    """The verbalizer says which intersection this is since the last turn (the examples must be made alike)."""
    turn_words: bool = False
    """The route agent's grammar fixes the turns the directions name (`RouteAgent.follow_turn_words`)."""
    word_counts: bool = False
    """... and where each happens, read from the words (`RouteAgent.follow_word_counts`)."""

    def __post_init__(self) -> None:
        if self.agent not in AGENTS:
            raise SituatedError(f"--agent must be one of {', '.join(AGENTS)}, not {self.agent!r}")

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "graph": None}

    def load_graph(self) -> StreetGraph:
        if self.graph is not None:
            return self.graph
        return load_graph(graph_dir(self.data, self.dataset or detect_dataset(self.data)))

    def build(self) -> EpisodeFn:
        graph = self.load_graph()
        llm = self.model.open() if self.model is not None else None
        retriever = make_retriever(self.retriever) if self.retriever is not None else None
        agent = make_agent(self.agent, graph=graph, seed=self.seed, llm=llm, examples=self.examples,
                           shots=self.shots, retriever=retriever, stop_threshold=self.stop_threshold,
                           turn_words=self.turn_words, word_counts=self.word_counts)
        env = StreetEnv(graph, self.visibility.make(graph), max_steps=self.max_steps,
                        count_intersections=self.count_intersections)
        return lambda instance, run: navigation_episode(env, agent, instance, run)


def evaluate_navigation_job(job: NavigationJob, instances: Sequence[NavInstance], executor: Executor, *,
                            out: Path | None, config: Mapping[str, object],
                            on_progress: Progress | None = None) -> list[Episode]:
    """Run `job`'s agent on every instance (one run each) with `executor`, resuming from the results store
    `out` (None: in memory); the same store as `evaluate_navigation` writes."""
    with ResultsStore(out, config, system="navigation") as store:
        return run_episodes(instances, 1, job, store, executor=executor, on_progress=on_progress)

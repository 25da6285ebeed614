"""Street-navigation metrics: task completion (TC), shortest-path distance (SPD), key-point accuracy (KPA).

- TC: the agent stopped at the target or at a graph neighbour of it (edges in either direction).
- SPD: hops from where the agent stopped to the target on the unweighted graph (directed BFS).
- KPA: correct decisions at key points / (key points + 1), the +1 being the stop (correct when TC holds).
  Key points are the start and every route panorama with more than two out-edges; a decision is the pair
  (panorama, next panorama). Two variants:

  * faithful (the released code): the start contributes two items, the start panorama (which every agent
    shares, so it is always counted correct) and the second panorama of the path; with every agent getting
    the first item for free, KPA never drops to zero for an agent that moves the right way at once.
  * corrected: the start is one decision, (start, next panorama), correct only when the agent's first move
    matches the route's; a start that is itself an intersection is not counted twice.

Reports show TC and KPA as percentages, SPD as mean hops.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ...envs.streets.graph import StreetGraph
from .base import Metric, keys

METRICS = (Metric("tc", "TC %", 100, 1), Metric("spd", "SPD (hops)", 1, 1, higher_is_better=False),
           Metric("kpa", "KPA %", 100, 1), Metric("kpa_corrected", "KPA corrected %", 100, 1))
"""The navigation metrics of an episode (fractions and hops), as reports show them (percent and hops)."""
NAVIGATION_METRICS: tuple[str, ...] = keys(METRICS)


@dataclass(frozen=True)
class EpisodeMetrics:
    """Metrics of one episode; kpa values are fractions in [0, 1]."""

    tc: bool
    spd: int
    kpa: float
    kpa_corrected: float


def _faithful_key_points(graph: StreetGraph, path: Sequence[str]) -> list[object]:
    if len(path) <= 1:
        return []
    points: list[object] = [path[0], path[1]]
    points += [(p, q) for p, q in itertools.pairwise(path) if graph.degree(p) > 2]
    return points


def _corrected_key_points(graph: StreetGraph, path: Sequence[str]) -> list[tuple[str, str]]:
    return [(p, q) for i, (p, q) in enumerate(itertools.pairwise(path)) if i == 0 or graph.degree(p) > 2]


def reached(graph: StreetGraph, stop: str, target: str) -> bool:
    """Whether stopping at `stop` completes a task with this target."""
    return stop == target or stop in graph.adjacent(target)


def episode_metrics(
    graph: StreetGraph, gold_path: Sequence[str], agent_path: Sequence[str]
) -> EpisodeMetrics:
    """TC, SPD and both KPA variants of one episode from the gold route and the agent's panorama path."""
    if not gold_path or not agent_path:
        raise ValueError("gold and agent paths must not be empty")
    target, stop = gold_path[-1], agent_path[-1]
    tc = reached(graph, stop, target)

    gold_faithful = _faithful_key_points(graph, gold_path)
    correct = len(set(gold_faithful) & set(_faithful_key_points(graph, agent_path))) + int(tc)
    kpa = correct / (len(gold_faithful) + 1)

    gold_points = Counter(_corrected_key_points(graph, gold_path))
    agent_points = Counter(_corrected_key_points(graph, agent_path))
    correct_corrected = sum((gold_points & agent_points).values()) + int(tc)
    kpa_corrected = correct_corrected / (sum(gold_points.values()) + 1)
    return EpisodeMetrics(tc=tc, spd=graph.hops(stop, target), kpa=kpa, kpa_corrected=kpa_corrected)


def as_metrics(m: EpisodeMetrics) -> dict[str, float]:
    """An episode's metrics as an Episode records them (fractions; reports show TC and KPA in percent)."""
    return {"tc": float(m.tc), "spd": float(m.spd), "kpa": m.kpa, "kpa_corrected": m.kpa_corrected}

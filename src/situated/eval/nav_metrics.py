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

All aggregates are percentages, except SPD (mean hops).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..envs.streets.graph import StreetGraph


@dataclass(frozen=True)
class EpisodeMetrics:
    """Metrics of one episode; kpa values are fractions in [0, 1]."""

    tc: bool
    spd: int
    kpa: float
    kpa_corrected: float


@dataclass(frozen=True)
class NavSummary:
    """Means over episodes: tc, kpa, kpa_corrected in percent, spd in hops."""

    n: int
    tc: float
    spd: float
    kpa: float
    kpa_corrected: float

    def as_dict(self) -> dict[str, float | int]:
        return {
            "tc": self.tc,
            "spd": self.spd,
            "kpa": self.kpa,
            "kpa_corrected": self.kpa_corrected,
            "n": self.n,
        }


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


def summarize(episodes: Sequence[EpisodeMetrics]) -> NavSummary:
    """Mean metrics over episodes (TC and KPA in percent)."""
    n = len(episodes)
    if n == 0:
        return NavSummary(0, 0.0, 0.0, 0.0, 0.0)
    return NavSummary(
        n=n,
        tc=100 * sum(e.tc for e in episodes) / n,
        spd=sum(e.spd for e in episodes) / n,
        kpa=100 * sum(e.kpa for e in episodes) / n,
        kpa_corrected=100 * sum(e.kpa_corrected for e in episodes) / n,
    )

"""The call graph of a library's current behaviours: composition depths and cycles in one topological pass.

Time and memory are linear in the graph (behaviours + calls): each behaviour's depth is computed once, after
those of its callees (Kahn's algorithm over the reversed edges), never by walking every path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class CallGraph:
    """Depths of the behaviours that are on no cycle, and the behaviours on or behind one."""

    depths: dict[str, int]
    """1 + the deepest behaviour called (skills and unknown names count 0)."""
    cyclic: tuple[str, ...]
    """Behaviours that are on a cycle or call one, by name."""


def call_graph(calls: Mapping[str, Sequence[str]]) -> CallGraph:
    """Depths and cycles of the behaviours `calls` maps (name → the names its current version calls)."""
    waiting = {name: len({c for c in callees if c in calls}) for name, callees in calls.items()}
    callers: dict[str, list[str]] = {}
    for name, callees in calls.items():
        for callee in {c for c in callees if c in calls}:
            callers.setdefault(callee, []).append(name)
    depths: dict[str, int] = {}
    ready = [name for name, count in waiting.items() if count == 0]
    while ready:
        name = ready.pop()
        depths[name] = 1 + max((depths[c] for c in calls[name] if c in calls), default=0)
        for caller in callers.get(name, ()):
            waiting[caller] -= 1
            if waiting[caller] == 0:
                ready.append(caller)
    return CallGraph(depths, tuple(sorted(name for name in calls if name not in depths)))


def a_cycle(calls: Mapping[str, Sequence[str]], graph: CallGraph, start: str | None = None) -> list[str]:
    """One cycle of behaviours, `[a, b, ..., a]`, reached from `start` (default: any behaviour in
    `graph.cyclic`); [] if there is none. Linear in the graph.

    Every behaviour left out of `graph.depths` calls another one left out, so following such calls from any
    of them must come back to a behaviour already seen.
    """
    stuck = set(graph.cyclic)
    if not stuck:
        return []
    path: list[str] = []
    seen: dict[str, int] = {}
    node = graph.cyclic[0] if start is None else start
    if node not in stuck:
        return []
    while node not in seen:
        seen[node] = len(path)
        path.append(node)
        node = next(c for c in calls[node] if c in stuck)
    return [*path[seen[node]:], node]

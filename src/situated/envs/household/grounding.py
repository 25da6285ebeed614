"""Grounding: an object's class name in a plan → one node id of the scene (PROTOCOLS.md §1).

Rule, in order: the only instance of the class; else the instance the grounding memory holds (the one the last
successful action on that name used: found, walked to, grabbed, ...); else a seeded choice among the instances in
the character's room, or among all instances when none is there. The choice depends only on (seed, name, the
candidate ids), never on the call history, so a run is reproducible under its seed.
"""

from __future__ import annotations

import random

from ...errors import UnknownObjectError
from .graph import SceneGraph


def normalize(name: str) -> str:
    """Plan names to VirtualHome class names: lower case, spaces and dashes as underscores, no quotes."""
    return name.strip().strip("'\"").lower().replace(" ", "_").replace("-", "_")


class Grounder:
    """Maps class names to node ids with a memory of the last instance used per name."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.memory: dict[str, int] = {}

    def reset(self) -> None:
        self.memory.clear()

    def candidates(self, graph: SceneGraph, name: str) -> list[int]:
        return graph.ids_of(normalize(name))

    def ground(self, graph: SceneGraph, name: str, character: int | None = None) -> int:
        """The node id for `name`; UnknownObjectError when the scene has no such object."""
        key = normalize(name)
        ids = graph.ids_of(key)
        if not ids:
            raise UnknownObjectError(f"unknown object {name!r} in this scene")
        if len(ids) == 1:
            return ids[0]
        remembered = self.memory.get(key)
        if remembered is not None and remembered in ids:
            return remembered
        pool = sorted(ids)
        if character is not None:
            room = graph.room_of(character)
            local = [i for i in pool if graph.room_of(i) == room]
            pool = local or pool
        return random.Random(f"{self.seed}:{key}:{','.join(map(str, pool))}").choice(pool)

    def remember(self, graph: SceneGraph, node_id: int) -> None:
        self.memory[graph.class_name(node_id)] = node_id

"""Derived states that VirtualHome's executor lacks and ProgPrompt's evaluation adds (PROTOCOLS.md §1).

Evaluated after every step; they are sticky (an object stays HEATED after the microwave is switched off):
- HEATED: food (category `Food` or property EATABLE) INSIDE a `microwave` that is ON, or ON/INSIDE a `fryingpan`
  that is ON a `stove` that is ON.
- WASHED: anything INSIDE a `washingmachine` that is ON, or INSIDE a `sink` while a `faucet` in the same room as
  that sink is ON (faucets stand on the counter beside the sink in VirtualHome scenes, never on the sink itself).
- USED: a phone (any class whose name contains `phone`: cellphone, phone, telephone, wallphone...) that is ON.
"""

from __future__ import annotations

from .graph import SceneGraph
from .semantics import ChangeLog


def is_food(g: SceneGraph, node: int) -> bool:
    return g.category(node) == "Food" or "EATABLE" in g.properties(node)


def _on(g: SceneGraph, node: int) -> bool:
    return "ON" in g.states(node)


def derived_facts(g: SceneGraph) -> set[tuple[int, str]]:
    """The (node id, state) pairs the rules make true in the current graph."""
    facts: set[tuple[int, str]] = set()
    for oven in g.ids_of("microwave"):
        if _on(g, oven):
            facts.update((x, "HEATED") for x in g.sources(oven, "INSIDE") if is_food(g, x))
    for stove in g.ids_of("stove"):
        if not _on(g, stove):
            continue
        for pan in g.sources(stove, "ON"):
            if g.class_name(pan) == "fryingpan":
                for rel in ("ON", "INSIDE"):
                    facts.update((x, "HEATED") for x in g.sources(pan, rel) if is_food(g, x))
    for machine in g.ids_of("washingmachine"):
        if _on(g, machine):
            facts.update((x, "WASHED") for x in g.sources(machine, "INSIDE"))
    running_rooms = {g.room_of(f) for f in g.ids_of("faucet") if _on(g, f)}
    running_rooms.discard(None)
    if running_rooms:
        for sink in g.ids_of("sink"):
            if g.room_of(sink) in running_rooms:
                facts.update((x, "WASHED") for x in g.sources(sink, "INSIDE"))
    for cls in g.class_names():
        if "phone" in cls:
            facts.update((p, "USED") for p in g.ids_of(cls) if _on(g, p))
    return facts


def apply_derived(g: SceneGraph, log: ChangeLog) -> None:
    """Add the derived states that hold now (never removes one)."""
    for node, state in sorted(derived_facts(g)):
        log.add_state(node, state)

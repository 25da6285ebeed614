"""Class-level condition sets, the facts ProgPrompt's metrics compare ("salmon INSIDE microwave", "tv ON").

Every edge of the graph becomes `"<from class> <RELATION> <to class>"` and every node state `"<class> <STATE>"`;
instances of a class are merged. All relation types count, CLOSE and FACING included, and the character's own
facts too: that is what ProgPrompt's evaluation counts, and the released numbers (ground-truth replay GCR 0.992 on
environment 1: 11 of the 12 goal facts of "microwave chicken", most of them CLOSE facts) are only reproducible
with them. `positions=False` drops CLOSE and FACING (agent-position facts) for a stricter, position-free reading.
"""

from __future__ import annotations

from .graph import SceneGraph

POSITION_RELATIONS = frozenset({"CLOSE", "FACING"})


def class_conditions(graph: SceneGraph | dict, *, positions: bool = True) -> frozenset[str]:
    """The class-level relation and state facts of a graph (a SceneGraph or VirtualHome JSON data)."""
    g = graph if isinstance(graph, SceneGraph) else SceneGraph.from_dict(graph)
    facts = {f"{g.class_name(a)} {rel} {g.class_name(b)}" for a, rel, b in g.edges()
             if positions or rel not in POSITION_RELATIONS}
    facts.update(f"{g.class_name(i)} {s}" for i in g.ids() for s in g.states(i))
    return frozenset(facts)

"""Preconditions and effects of every VirtualHome script action, on a mutable SceneGraph.

Written anew after the semantics of VirtualHome's evolving-graph executor (`evolving_graph/execution.py`): the
same checks on node properties (GRABBABLE, CAN_OPEN, HAS_SWITCH, SITTABLE, ...) and states (OPEN/CLOSED,
ON/OFF, SITTING, ...), the same effects on CLOSE / FACING / INSIDE / ON / HOLDS_RH / HOLDS_LH edges and states,
applied in place to dict indexes instead of a copied graph per step. Deliberate differences (see
docs/fidelity.md): objects are selected by node id only after grounding; a missing node id is a failed step, not
an exception; `walktowards` is `walk`, `lookat_short`/`lookat_long` are `lookat`; `turnleft`, `turnright` and
`walkforward` (ProgPrompt primitives VirtualHome's executor lacks) succeed without changing the graph.

Every check runs before any effect, so a failed action leaves the graph unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..base import StepResult
from .graph import SceneGraph

HOLDS = ("HOLDS_RH", "HOLDS_LH")


@dataclass
class World:
    """The mutable simulation state: the graph, the acting character and where grabbed objects came from.

    `journal` records every primitive change in order, so `rewind()` restores the initial graph in time
    proportional to what changed instead of copying the whole graph.
    """

    graph: SceneGraph
    character: int
    grabbed_from: dict[int, tuple[int, str]] = field(default_factory=dict)
    journal: list[tuple] = field(default_factory=list)

    def copy(self) -> World:
        return World(self.graph.copy(), self.character, dict(self.grabbed_from))

    def rewind(self) -> None:
        """Undo every journaled change (back to the graph this world started from) and forget grabs."""
        g = self.graph
        for kind, added, *key in reversed(self.journal):
            if kind == "e":
                (g.remove_edge if added else g.add_edge)(*key)
            else:
                (g.remove_state if added else g.add_state)(*key)
        self.journal.clear()
        self.grabbed_from.clear()


class ChangeLog:
    """Applies edge/state changes to a graph and remembers the net difference, in order of first change."""

    def __init__(self, graph: SceneGraph, journal: list[tuple] | None = None) -> None:
        self.graph = graph
        self.journal = [] if journal is None else journal
        self.net: dict[tuple, bool] = {}   # ("e", a, rel, b) | ("s", id, state) -> True added / False removed

    def _note(self, key: tuple, added: bool) -> None:
        self.journal.append((key[0], added, *key[1:]))
        if self.net.get(key, added) != added:
            del self.net[key]          # back to how it was before this step
        else:
            self.net[key] = added

    def add_edge(self, a: int, rel: str, b: int, both: bool = False) -> None:
        if self.graph.add_edge(a, rel, b):
            self._note(("e", a, rel, b), True)
        if both:
            self.add_edge(b, rel, a)

    def remove_edge(self, a: int, rel: str, b: int) -> None:
        if self.graph.remove_edge(a, rel, b):
            self._note(("e", a, rel, b), False)

    def remove_edges(self, node: int, relations: tuple[str, ...], both: bool = False) -> None:
        """Remove every `node -rel-> x` edge (and every `x -rel-> node` edge when `both`)."""
        g = self.graph
        for rel in relations:
            for b in list(g.targets(node, rel)):
                self.remove_edge(node, rel, b)
            if both:
                for a in list(g.sources(node, rel)):
                    self.remove_edge(a, rel, node)

    def add_state(self, node: int, state: str) -> None:
        if self.graph.add_state(node, state):
            self._note(("s", node, state), True)

    def remove_state(self, node: int, state: str) -> None:
        if self.graph.remove_state(node, state):
            self._note(("s", node, state), False)

    def describe(self) -> tuple[str, ...]:
        """`+ salmon INSIDE microwave`, `- fridge CLOSED`, ...; a symmetric CLOSE pair is listed once."""
        g = self.graph
        out: list[str] = []
        for key, added in self.net.items():
            sign = "+" if added else "-"
            if key[0] == "s":
                out.append(f"{sign} {g.class_name(key[1])} {key[2]}")
                continue
            _, a, rel, b = key
            if rel == "CLOSE" and a > b and self.net.get(("e", b, rel, a)) == added:
                continue
            out.append(f"{sign} {g.class_name(a)} {rel} {g.class_name(b)}")
        return tuple(out)


# ---------------------------------------------------------------------------------------------- shared checks

def is_close(g: SceneGraph, char: int, node: int) -> bool:
    """VirtualHome's closeness: the character is CLOSE to the node, or CLOSE to something that is CLOSE to it
    or that it lies ON."""
    close = g.targets(char, "CLOSE")
    if node in close:
        return True
    return any(g.has_edge(other, "CLOSE", node) or g.has_edge(node, "ON", other) for other in close)


def is_facing(g: SceneGraph, char: int, node: int) -> bool:
    facing = g.targets(char, "FACING")
    return node in facing or any(g.has_edge(f, "FACING", node) for f in facing)


def closed_around(g: SceneGraph, node: int) -> int | None:
    """The closed thing (not a room) the node is INSIDE, if any."""
    return next((c for c in sorted(g.targets(node, "INSIDE")) if "CLOSED" in g.states(c) and not g.is_room(c)), None)


def inside_closed(g: SceneGraph, node: int) -> bool:
    """Whether the node is INSIDE something (not a room) that is CLOSED."""
    return any("CLOSED" in g.states(c) and not g.is_room(c) for c in g.targets(node, "INSIDE"))


def inside_closed_reason(g: SceneGraph, node: int) -> str:
    """Why `node` cannot be reached, naming the closed container, so a planner knows what to open."""
    container = closed_around(g, node)
    where = g.label(container) if container is not None else "something"
    return f"{g.label(node)} is inside {where}, which is closed (open it first)"


def free_hand(g: SceneGraph, char: int) -> str | None:
    for hand in HOLDS:
        if not g.targets(char, hand):
            return hand
    return None


def holding_hand(g: SceneGraph, char: int, node: int) -> str | None:
    for hand in HOLDS:
        if g.has_edge(char, hand, node):
            return hand
    return None


def held(g: SceneGraph, char: int) -> list[int]:
    return sorted(n for hand in HOLDS for n in g.targets(char, hand))


# ---------------------------------------------------------------------------------------------- actions
# Each action: (world, log, ids) -> failure reason or None (effects applied). Checks come before effects.

Action = Callable[[World, ChangeLog, tuple[int, ...]], "str | None"]

_SIT_MAX = {"couch": 4, "bed": 4, "chair": 1, "loveseat": 2, "sofa": 4, "toilet": 1, "pianobench": 2, "bench": 2}
_LIE_MAX = {"couch": 2, "bathtub": 2, "bed": 3, "loveseat": 2, "sofa": 2, "bench": 1}
_SQUEEZABLE = frozenset({"cleaning_solution", "tooth_paste", "shampoo", "food_peanut_butter", "dish_soap", "soap",
                         "towel", "rag", "paper", "sponge", "food_lemon", "check"})


def _not_close(g: SceneGraph, node: int) -> str:
    return f"the character is not close to {g.label(node)}"


def _walk(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    g, char = w.graph, w.character
    (node,) = ids
    states = g.states(char)
    if "SITTING" in states or "LYING" in states:
        return "the character is sitting or lying (stand up first)"
    char_room = g.room_of(char)
    if char_room is None:
        return "the character is in no room"
    node_room = g.room_of(node)
    if node_room is None:
        return f"{g.label(node)} is in no room"
    in_hands = held(g, char)
    log.remove_edges(char, ("INSIDE", "CLOSE", "FACING"), both=True)
    log.add_edge(char, "INSIDE", node_room)
    if node_room != node:
        for box in [b for b in g.targets(node, "INSIDE") if not g.is_room(b)]:
            log.add_edge(char, "CLOSE", box, both=True)
        for part in g.ids_with("BODY_PART"):
            log.add_edge(char, "CLOSE", part, both=True)
        log.add_edge(char, "CLOSE", node, both=True)
    for obj in in_hands:
        log.remove_edges(obj, ("INSIDE", "CLOSE", "FACING"), both=True)
    for obj in in_hands:
        log.add_edge(char, "CLOSE", obj, both=True)
        log.add_edge(obj, "INSIDE", char_room)   # VirtualHome: the room the character left (see docs/fidelity.md)
    if "CAN_OPEN" in g.properties(node):
        for obj in list(g.sources(node, "INSIDE")):
            log.add_edge(char, "CLOSE", obj, both=True)
    for support in list(g.targets(node, "ON")):
        log.add_edge(char, "CLOSE", support, both=True)
    return None


def _find(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    g, char = w.graph, w.character
    (node,) = ids
    if not (g.has_edge(node, "ON", char) or "BODY_PART" in g.properties(node) or is_close(g, char, node)):
        return _walk(w, log, ids)
    if not is_close(g, char, node):
        return _not_close(g, node)
    for target in list(g.targets(char, "FACING")):
        log.remove_edge(char, "FACING", target)
    log.add_edge(char, "CLOSE", node, both=True)
    return None


def _sit_or_lie(lie: bool) -> Action:
    def act(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
        g, char = w.graph, w.character
        (node,) = ids
        if not is_close(g, char, node):
            return _not_close(g, node)
        posture, other, prop = ("LYING", "SITTING", "LIEABLE") if lie else ("SITTING", "LYING", "SITTABLE")
        if posture in g.states(char):
            return f"the character is already {posture.lower()}"
        if prop not in g.properties(node):
            return f"{g.label(node)} cannot be {'lain' if lie else 'sat'} on"
        limit = (_LIE_MAX if lie else _SIT_MAX).get(g.class_name(node), 1)
        if len(g.sources(node, "ON")) >= limit:
            return f"there are too many things on {g.label(node)}"
        log.add_edge(char, "ON", node)
        if not lie:
            for target in list(g.targets(node, "FACING")):
                log.add_edge(char, "FACING", target)
        log.remove_state(char, other)
        log.add_state(char, posture)
        return None
    return act


def _standup(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    states = w.graph.states(w.character)
    if "SITTING" not in states and "LYING" not in states:
        return "the character is not sitting or lying"
    log.remove_state(w.character, "SITTING")
    log.remove_state(w.character, "LYING")
    return None


def _first_support(g: SceneGraph, node: int) -> tuple[int, str] | None:
    """What a grabbed object came from: the first non-room node it is ON, else INSIDE, else CLOSE to.

    VirtualHome takes the first in its id set's iteration order; rebuilding a set element by element reproduces
    that tie-break for most objects (it only matters among several CLOSE neighbours: see docs/fidelity.md).
    """
    for rel in ("ON", "INSIDE", "CLOSE"):
        in_set_order: set[int] = set()
        for other in g.targets(node, rel):
            in_set_order.add(other)
        for other in in_set_order:
            if not g.is_room(other):
                return other, rel
    return None


def _grab(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    g, char = w.graph, w.character
    (node,) = ids
    if "GRABBABLE" not in g.properties(node) and g.class_name(node) not in ("water", "child"):
        return f"{g.label(node)} cannot be grabbed"
    if node in w.grabbed_from:
        return f"{g.label(node)} is already grabbed"
    if not is_close(g, char, node):
        return _not_close(g, node)
    if inside_closed(g, node):
        return inside_closed_reason(g, node)
    hand = free_hand(g, char)
    if hand is None:
        return "the character has no free hand"
    char_room = g.room_of(char)
    support = _first_support(g, node)
    log.remove_edges(node, ("ON", "INSIDE", "CLOSE", "HOLDS_LH", "HOLDS_RH"), both=True)
    log.add_edge(char, "CLOSE", node, both=True)
    log.add_edge(char, hand, node)
    if char_room is not None:
        log.add_edge(node, "INSIDE", char_room)
    if support is not None:
        log.add_edge(char, "CLOSE", support[0], both=True)
        w.grabbed_from[node] = support
    return None


def _open_or_close(close: bool) -> Action:
    def act(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
        g, char = w.graph, w.character
        (node,) = ids
        if "CAN_OPEN" not in g.properties(node) and g.class_name(node) not in ("desk", "window"):
            return f"{g.label(node)} cannot be opened or closed"
        if not is_close(g, char, node):
            return _not_close(g, node)
        if not close and free_hand(g, char) is None:
            return "the character has no free hand"
        needed, result = ("OPEN", "CLOSED") if close else ("CLOSED", "OPEN")
        if needed not in g.states(node):
            return f"{g.label(node)} is already {'closed' if close else 'open'}" if result in g.states(node) \
                else f"{g.label(node)} is not {needed.lower()}"
        if not close and "ON" in g.states(node):
            return f"{g.label(node)} is switched on (switch it off first)"
        log.remove_state(node, needed)
        log.add_state(node, result)
        return None
    return act


def _check_put(w: World, src: int, dest: int, rel: str) -> str | None:
    g, char = w.graph, w.character
    if holding_hand(g, char, src) is None:
        return f"the character is not holding {g.label(src)}"
    if not is_close(g, char, dest):
        return _not_close(g, dest)
    if rel == "INSIDE" and "CAN_OPEN" in g.properties(dest) and "OPEN" not in g.states(dest):
        return f"{g.label(dest)} is not open"
    return None


def _apply_put(w: World, log: ChangeLog, src: int, dest: int, rel: str) -> None:
    char = w.character
    for hand in HOLDS:
        log.remove_edge(char, hand, src)
    log.add_edge(char, "CLOSE", dest, both=True)
    log.add_edge(src, "CLOSE", dest, both=True)
    log.add_edge(src, rel, dest)
    w.grabbed_from.pop(src, None)


def _put(rel: str) -> Action:
    def act(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
        src, dest = ids
        reason = _check_put(w, src, dest, rel)
        if reason is None:
            _apply_put(w, log, src, dest, rel)
        return reason
    return act


def _putobjback(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    (src,) = ids
    if src not in w.grabbed_from:
        return f"{w.graph.label(src)} was not grabbed from anywhere"
    dest, rel = w.grabbed_from[src]
    reason = _check_put(w, src, dest, rel)
    if reason is None:
        _apply_put(w, log, src, dest, rel)
    return reason


def _switch(on: bool) -> Action:
    def act(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
        g, char = w.graph, w.character
        (node,) = ids
        if "HAS_SWITCH" not in g.properties(node):
            return f"{g.label(node)} has no switch"
        if not is_close(g, char, node):
            return _not_close(g, node)
        needed, result = ("OFF", "ON") if on else ("ON", "OFF")
        if needed not in g.states(node):
            return f"{g.label(node)} is already {result.lower()}" if result in g.states(node) \
                else f"{g.label(node)} is not {needed.lower()}"
        if on and "PLUGGED_OUT" in g.states(node):
            return f"{g.label(node)} is unplugged"
        log.remove_state(node, needed)
        log.add_state(node, result)
        return None
    return act


def _needs_props(props: tuple[str, ...], what: str, *, hold: bool = False, close: bool = False,
                 reachable: bool = False) -> Action:
    """An action without effects whose checks are: one of `props`, held, close, not inside a closed thing."""
    def act(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
        g, char = w.graph, w.character
        (node,) = ids
        if props and not (set(props) & g.properties(node)):
            return f"{g.label(node)} is not {what}"
        if hold and holding_hand(g, char, node) is None:
            return f"the character is not holding {g.label(node)}"
        if close and not is_close(g, char, node):
            return _not_close(g, node)
        if reachable and inside_closed(g, node):
            return inside_closed_reason(g, node)
        return None
    return act


def _turnto(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    (node,) = ids
    for target in list(w.graph.targets(w.character, "FACING")):
        log.remove_edge(w.character, "FACING", target)
    log.add_edge(w.character, "FACING", node)
    return None


def _lookat(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    (node,) = ids
    if not is_facing(w.graph, w.character, node):
        return f"the character is not facing {w.graph.label(node)} (turn to it first)"
    return None


def _clean(needs_holding: bool) -> Action:
    def act(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
        g, char = w.graph, w.character
        (node,) = ids
        if not is_close(g, char, node):
            return _not_close(g, node)
        if needs_holding and not held(g, char):
            return "the character holds nothing to wipe with"
        log.remove_state(node, "DIRTY")
        log.add_state(node, "CLEAN")
        return None
    return act


def _puton(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    g, char = w.graph, w.character
    (node,) = ids
    if holding_hand(g, char, node) is None:
        return f"the character is not holding {g.label(node)}"
    if "CLOTHES" not in g.properties(node):
        return f"{g.label(node)} is not clothes"
    log.add_edge(node, "ON", char)
    for hand in HOLDS:
        log.remove_edge(char, hand, node)
    return None


def _putoff(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    g, char = w.graph, w.character
    (node,) = ids
    if not g.has_edge(node, "ON", char):
        return f"the character is not wearing {g.label(node)}"
    if "CLOTHES" not in g.properties(node):
        return f"{g.label(node)} is not clothes"
    log.remove_edge(node, "ON", char)
    return None


def _drop(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    g, char = w.graph, w.character
    (node,) = ids
    if holding_hand(g, char, node) is None:
        return f"the character is not holding {g.label(node)}"
    room = g.room_of(char)
    for hand in HOLDS:
        log.remove_edge(char, hand, node)
    if room is not None:
        log.add_edge(node, "INSIDE", room)
    w.grabbed_from.pop(node, None)
    return None


def _pour(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    g, char = w.graph, w.character
    src, dest = ids
    if not {"POURABLE", "DRINKABLE"} & g.properties(src):
        return f"{g.label(src)} cannot be poured"
    if "RECIPIENT" not in g.properties(dest) and g.class_name(dest) not in ("hands_both", "sponge", "face"):
        return f"{g.label(dest)} cannot receive anything poured"
    if holding_hand(g, char, src) is None:
        return f"the character is not holding {g.label(src)}"
    if not is_close(g, char, dest):
        return _not_close(g, dest)
    log.add_edge(src, "INSIDE", dest)
    if g.class_name(src) == "water":
        for hand in HOLDS:
            log.remove_edge(char, hand, src)
    return None


def _type(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    g = w.graph
    (node,) = ids
    if not is_close(g, w.character, node):
        return _not_close(g, node)
    if g.class_name(node) != "keyboard" and "HAS_SWITCH" not in g.properties(node):
        return f"{g.label(node)} cannot be typed on"
    return None


def _watch(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    g, char = w.graph, w.character
    (node,) = ids
    if "LOOKABLE" not in g.properties(node):
        return f"{g.label(node)} cannot be watched"
    node_room, char_room = g.room_of(node), g.room_of(char)
    if node_room is None or node_room != char_room:
        return f"{g.label(node)} is not in the character's room"
    if not is_facing(g, char, node):
        return f"the character is not facing {g.label(node)} (turn to it first)"
    if inside_closed(g, node):
        return inside_closed_reason(g, node)
    return None


def _move(push: bool) -> Action:
    def act(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
        g, char = w.graph, w.character
        (node,) = ids
        cls = g.class_name(node)
        if "MOVABLE" not in g.properties(node) and not push and cls not in ("button", "chair", "curtain"):
            return f"{g.label(node)} cannot be moved"
        if not is_close(g, char, node):
            return _not_close(g, node)
        if inside_closed(g, node):
            return inside_closed_reason(g, node)
        if free_hand(g, char) is None:
            return "the character has no free hand"
        return None
    return act


def _squeeze(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    g, char = w.graph, w.character
    (node,) = ids
    if free_hand(g, char) is None:
        return "the character has no free hand"
    if not is_close(g, char, node):
        return _not_close(g, node)
    if "CLOTHES" not in g.properties(node) and g.class_name(node) not in _SQUEEZABLE:
        return f"{g.label(node)} cannot be squeezed"
    return None


def _plug(plug_in: bool) -> Action:
    def act(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
        g, char = w.graph, w.character
        (node,) = ids
        if "HAS_PLUG" not in g.properties(node):
            return f"{g.label(node)} has no plug"
        if not is_close(g, char, node):
            return _not_close(g, node)
        if free_hand(g, char) is None:
            return "the character has no free hand"
        needed, result = ("PLUGGED_OUT", "PLUGGED_IN") if plug_in else ("PLUGGED_IN", "PLUGGED_OUT")
        if needed not in g.states(node):
            return f"{g.label(node)} is not {needed.lower().replace('_', ' ')}"
        log.remove_state(node, needed)
        log.add_state(node, result)
        return None
    return act


def _cut(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    g, char = w.graph, w.character
    (node,) = ids
    if free_hand(g, char) is None:
        return "the character has no free hand"
    if not is_close(g, char, node):
        return _not_close(g, node)
    if "EATABLE" not in g.properties(node) or "CUTTABLE" not in g.properties(node):
        return f"{g.label(node)} cannot be cut"
    if not any("knife" in g.class_name(n) for n in held(g, char)):
        return "the character is not holding a knife"
    return None


def _eat(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    g = w.graph
    (node,) = ids
    if not is_close(g, w.character, node):
        return _not_close(g, node)
    if "EATABLE" in g.properties(node) or any("EATABLE" in g.properties(n) for n in g.sources(node, "ON")):
        return None
    return f"{g.label(node)} is not eatable"


def _resting(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    states = w.graph.states(w.character)
    if "SITTING" not in states and "LYING" not in states:
        return "the character is not lying or sitting"
    return None


def _greet(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    (node,) = ids
    if "PERSON" not in w.graph.properties(node):
        return f"{w.graph.label(node)} is not a person"
    return None


def _noop(w: World, log: ChangeLog, ids: tuple[int, ...]) -> str | None:
    return None


ACTIONS: dict[str, tuple[int, Action]] = {
    "walk": (1, _walk), "run": (1, _walk), "walktowards": (1, _walk), "find": (1, _find),
    "sit": (1, _sit_or_lie(False)), "lie": (1, _sit_or_lie(True)), "standup": (0, _standup),
    "grab": (1, _grab), "open": (1, _open_or_close(False)), "close": (1, _open_or_close(True)),
    "putback": (2, _put("ON")), "putin": (2, _put("INSIDE")), "putobjback": (1, _putobjback),
    "switchon": (1, _switch(True)), "switchoff": (1, _switch(False)),
    "drink": (1, _needs_props(("DRINKABLE", "RECIPIENT"), "drinkable", hold=True)),
    "read": (1, _needs_props(("READABLE",), "readable", hold=True)),
    "touch": (1, _needs_props((), "", close=True, reachable=True)),
    "turnto": (1, _turnto), "lookat": (1, _lookat), "lookat_short": (1, _lookat), "lookat_long": (1, _lookat),
    "pointat": (1, _lookat), "watch": (1, _watch),
    "wipe": (1, _clean(True)), "wash": (1, _clean(False)), "rinse": (1, _clean(False)), "scrub": (1, _clean(False)),
    "puton": (1, _puton), "putoff": (1, _putoff), "drop": (1, _drop), "release": (1, _drop),
    "greet": (1, _greet), "pour": (2, _pour), "type": (1, _type),
    "push": (1, _move(True)), "pull": (1, _move(False)), "move": (1, _move(False)),
    "squeeze": (1, _squeeze), "plugin": (1, _plug(True)), "plugout": (1, _plug(False)),
    "cut": (1, _cut), "eat": (1, _eat), "sleep": (0, _resting), "wakeup": (0, _resting),
    "turnleft": (0, _noop), "turnright": (0, _noop), "walkforward": (0, _noop),
}


def apply_action(world: World, action: str, ids: tuple[int, ...],
            after: Callable[[SceneGraph, ChangeLog], None] | None = None) -> StepResult:
    """Run one grounded action in place; a failed action leaves the world unchanged.

    `after` runs on the graph after a successful action, its changes logged with the action's (derived states).
    """
    g = world.graph
    name = action.lower()
    entry = ACTIONS.get(name)
    if entry is None:
        return StepResult(False, f"unknown action {action!r}")

    def what() -> str:
        return " ".join([name, *(g.class_name(i) if i in g else str(i) for i in ids)])

    arity, act = entry
    if len(ids) != arity:
        return StepResult(False, f"{what()}: {name} takes {arity} object(s), got {len(ids)}")
    for i in ids:
        if i not in g:
            return StepResult(False, f"{what()}: there is no object with id {i} in this scene")
    log = ChangeLog(g, world.journal)
    reason = act(world, log, ids)
    if reason is not None:
        return StepResult(False, f"{what()}: {reason}")
    if after is not None:
        after(g, log)
    return StepResult(True, "", log.describe())

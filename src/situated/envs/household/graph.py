"""SceneGraph: a VirtualHome-format scene graph with dict indexes by id, class and relation.

The JSON format is VirtualHome's: `{"nodes": [{"id", "class_name", "category", "properties", "states", ...}],
"edges": [{"from_id", "relation_type", "to_id"}]}`. Edges are kept in two indexes, `(from_id, relation) -> {to_id}`
and `(to_id, relation) -> {from_id}`, so every neighbour query is a dict look-up. `copy()` copies the indexes
(sets and state sets), never the node dictionaries' static parts, so it is cheap enough to take per episode.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ... import files
from ...errors import DataError
from ...files import at, check_type

Edge = tuple[int, str, int]


class SceneGraph:
    """A mutable scene graph; nodes' static data is shared between copies, states and edges are not."""

    __slots__ = ("_by_class", "_by_prop", "_in", "_out", "_states", "_static")

    def __init__(self) -> None:
        self._static: dict[int, dict[str, Any]] = {}   # id -> node dict without "states" (never mutated)
        self._states: dict[int, set[str]] = {}
        self._out: dict[tuple[int, str], set[int]] = {}
        self._in: dict[tuple[int, str], set[int]] = {}
        self._by_class: dict[str, list[int]] = {}
        self._by_prop: dict[str, tuple[int, ...]] = {}   # filled lazily; properties never change

    # ------------------------------------------------------------------ loading / saving
    @classmethod
    def from_dict(cls, data: Any, source: str = "<graph>") -> SceneGraph:
        """Build from VirtualHome JSON data; DataError `source: field nodes[3].states[0]: ...` when a node is not
        `{"id": int, "class_name": str, "category": str|null, "properties": [str], "states": [str], ...}`, an id
        repeats, or an edge is not `{"from_id": int, "relation_type": str, "to_id": int}` between known nodes.
        Repeated edges are merged."""
        if not isinstance(data, dict) or not isinstance(data.get("nodes"), list) \
                or not isinstance(data.get("edges"), list):
            raise DataError(f"{source}: a scene graph needs the fields 'nodes' and 'edges' (lists)")
        graph = cls()
        for k, node in enumerate(data["nodes"]):
            check_node(node, k, source)
            if node["id"] in graph._static:
                raise DataError(f"{at(source, field=f'nodes[{k}].id')}: duplicate node id {node['id']} "
                                f"(also {graph.label(node['id'])})")
            graph._add_node(node)
        static, out, inn = graph._static, graph._out, graph._in
        for k, edge in enumerate(data["edges"]):   # the hot loop of loading: kept free of method calls
            try:
                a, rel, b = edge["from_id"], edge["relation_type"].upper(), edge["to_id"]
            except (KeyError, TypeError, AttributeError):
                raise DataError(f"{source}: edges[{k}] needs 'from_id', 'relation_type' (a string) and "
                                "'to_id'") from None
            if type(a) is not int or type(b) is not int:
                end, value = ("from_id", a) if type(a) is not int else ("to_id", b)
                check_type(value, int, source, name=f"edges[{k}].{end}")
            if a not in static or b not in static:
                missing = a if a not in static else b
                raise DataError(f"{source}: edges[{k}] refers to unknown node id {missing!r}")
            targets = out.get((a, rel))
            if targets is None:
                out[(a, rel)] = {b}
            else:
                targets.add(b)
            origins = inn.get((b, rel))
            if origins is None:
                inn[(b, rel)] = {a}
            else:
                origins.add(a)
        return graph

    @classmethod
    def load(cls, path: str | Path) -> SceneGraph:
        """Read a household scene from a JSON file (through `situated.files`: a regular file, UTF-8, bounded
        JSON); DataError naming the file, line and field when it is not a scene graph or has no character."""
        graph = cls.from_dict(files.read_json(path, what="scene graph"), str(path))
        if not graph.ids_of("character"):
            raise DataError(f"{path}: the scene graph has no node of class 'character' (the agent)")
        return graph

    def to_dict(self) -> dict[str, list[dict[str, Any]]]:
        """The graph as VirtualHome JSON data (nodes in id order, edges sorted)."""
        nodes = [{**{k: v for k, v in self._static[i].items() if k != "_props"}, "states": sorted(self._states[i])}
                 for i in sorted(self._static)]
        edges = [{"from_id": a, "relation_type": r, "to_id": b} for a, r, b in sorted(self.edges())]
        return {"nodes": nodes, "edges": edges}

    def save(self, path: str | Path) -> None:
        """Write the graph as JSON, replacing `path` in one step (see `files.write_text_atomic`)."""
        files.write_text_atomic(path, json.dumps(self.to_dict()))

    def copy(self) -> SceneGraph:
        """An independent copy (states and edges copied, static node data shared)."""
        other = SceneGraph()
        other._static = self._static
        other._by_class = self._by_class
        other._by_prop = self._by_prop
        other._states = {i: set(s) for i, s in self._states.items()}
        other._out = {k: set(v) for k, v in self._out.items() if v}
        other._in = {k: set(v) for k, v in self._in.items() if v}
        return other

    def _add_node(self, node: dict[str, Any]) -> None:
        nid = node["id"]
        static = {k: v for k, v in node.items() if k != "states"}
        static["properties"] = [p.upper() for p in node.get("properties") or ()]
        static.setdefault("category", None)
        static["_props"] = frozenset(static["properties"])
        self._by_class.setdefault(node["class_name"], []).append(nid)
        self._static[nid] = static
        self._states[nid] = {s.upper() for s in node.get("states") or ()}

    # ------------------------------------------------------------------ nodes
    def __contains__(self, node_id: object) -> bool:
        return node_id in self._static

    def __len__(self) -> int:
        return len(self._static)

    def ids(self) -> Iterator[int]:
        return iter(self._static)

    def class_name(self, node_id: int) -> str:
        return self._static[node_id]["class_name"]

    def category(self, node_id: int) -> str | None:
        return self._static[node_id]["category"]

    def is_room(self, node_id: int) -> bool:
        return self._static[node_id]["category"] == "Rooms"

    def properties(self, node_id: int) -> frozenset[str]:
        return self._static[node_id]["_props"]

    def states(self, node_id: int) -> set[str]:
        """The node's states (the live set: mutate only through set_states/add_state/remove_state)."""
        return self._states[node_id]

    def add_state(self, node_id: int, state: str) -> bool:
        states = self._states[node_id]
        if state in states:
            return False
        states.add(state)
        return True

    def remove_state(self, node_id: int, state: str) -> bool:
        states = self._states[node_id]
        if state not in states:
            return False
        states.discard(state)
        return True

    def ids_of(self, class_name: str) -> list[int]:
        """Ids of the nodes of a class, in file order."""
        return list(self._by_class.get(class_name, ()))

    def ids_with(self, prop: str) -> tuple[int, ...]:
        """Ids of the nodes having a property (e.g. BODY_PART), in id order."""
        found = self._by_prop.get(prop)
        if found is None:
            found = self._by_prop[prop] = tuple(sorted(i for i, s in self._static.items() if prop in s["_props"]))
        return found

    def class_names(self) -> list[str]:
        return sorted(self._by_class)

    def label(self, node_id: int) -> str:
        """`salmon (id 327)`: how messages name a node."""
        return f"{self.class_name(node_id)} (id {node_id})"

    def character(self, index: int = 0) -> int:
        """Id of the index-th character (characters ordered by id, as in VirtualHome)."""
        chars = sorted(self._by_class.get("character", ()))
        if index >= len(chars):
            raise DataError(f"scene graph has no character number {index} ({len(chars)} characters)")
        return chars[index]

    # ------------------------------------------------------------------ edges
    def targets(self, node_id: int, relation: str) -> set[int]:
        """Ids `b` with an edge `node_id -relation-> b` (a live set: do not mutate)."""
        return self._out.get((node_id, relation), _EMPTY)

    def sources(self, node_id: int, relation: str) -> set[int]:
        """Ids `a` with an edge `a -relation-> node_id` (a live set: do not mutate)."""
        return self._in.get((node_id, relation), _EMPTY)

    def has_edge(self, a: int, relation: str, b: int) -> bool:
        return b in self._out.get((a, relation), _EMPTY)

    def add_edge(self, a: int, relation: str, b: int) -> bool:
        """Add an edge; False when it was already there."""
        out = self._out.setdefault((a, relation), set())
        if b in out:
            return False
        out.add(b)
        self._in.setdefault((b, relation), set()).add(a)
        return True

    def remove_edge(self, a: int, relation: str, b: int) -> bool:
        """Remove an edge; False when it was not there."""
        out = self._out.get((a, relation))
        if not out or b not in out:
            return False
        out.discard(b)
        self._in[(b, relation)].discard(a)
        return True

    def edges(self) -> Iterator[Edge]:
        for (a, rel), targets in self._out.items():
            for b in targets:
                yield (a, rel, b)

    def edges_from(self, node_id: int, relations: Iterable[str]) -> list[Edge]:
        return [(node_id, r, b) for r in relations for b in self.targets(node_id, r)]

    # ------------------------------------------------------------------ places
    def room_of(self, node_id: int) -> int | None:
        """The room a node is in (VirtualHome's rule: a room itself; else follow INSIDE edges up to a room)."""
        if self.is_room(node_id):
            return node_id
        inside = self.targets(node_id, "INSIDE")
        if len(inside) > 1:
            rooms = [n for n in inside if self.is_room(n)]
            return min(rooms) if rooms else None
        seen = {node_id}
        while len(inside) == 1:
            (parent,) = inside
            if self.is_room(parent):
                return parent
            if parent in seen:
                return None
            seen.add(parent)
            inside = self.targets(parent, "INSIDE")
        if len(inside) > 1:
            rooms = [n for n in inside if self.is_room(n)]
            return min(rooms) if rooms else None
        return None


_EMPTY: set[int] = set()

_NODE_FIELDS: tuple[tuple[str, Any, bool], ...] = (  # (field, type, required)
    ("id", int, True), ("class_name", str, True), ("category", str | None, False),
    ("properties", list[str] | None, False), ("states", list[str] | None, False),
)


def check_node(node: Any, k: int, source: str) -> None:
    """DataError `source: field nodes[k].<field>: ...` unless `node` has the fields a scene graph relies on,
    correctly typed: an integer `id` (not a boolean), a string `class_name`, `category` a string or null, and
    `properties` and `states` lists of strings (or null)."""
    if type(node) is dict and type(node.get("id")) is int and type(node.get("class_name")) is str \
            and type(node.get("category", "")) is str \
            and _strings(node.get("properties", ())) and _strings(node.get("states", ())):
        return  # the common case, without the general check
    if not isinstance(node, dict):
        check_type(node, dict, source, name=f"nodes[{k}]")
    for name, kind, required in _NODE_FIELDS:
        if name in node:
            check_type(node[name], kind, source, name=f"nodes[{k}].{name}")
        elif required:
            raise DataError(f"{at(source, field=f'nodes[{k}].{name}')}: missing (a node needs an integer 'id' "
                            "and a string 'class_name')")


def _strings(value: Any) -> bool:
    return value is None or (type(value) is list and all(type(x) is str for x in value))

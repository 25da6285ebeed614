"""Street graphs in the Touchdown / Map2seq format: `nodes.txt` and `links.txt`.

`nodes.txt`: `panoid,yaw,lat,lng,partition` (yaw: heading of the capture vehicle, degrees).
`links.txt`: `start_panoid,heading,end_panoid` (a directed edge leaving `start_panoid` at `heading` degrees).
Headings are compass degrees (0 = north, clockwise), stored as integers in [0, 360).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from ... import files
from ...errors import DataError
from ...files import at


@dataclass(frozen=True)
class Node:
    """One panorama: where it is and which way its capture vehicle faced."""

    panoid: str
    yaw: int
    lat: float
    lng: float
    partition: str


class StreetGraph:
    """A directed street graph; out-edges of a node are keyed by heading, in file order."""

    def __init__(self, nodes: Mapping[str, Node], out_edges: Mapping[str, Mapping[int, str]]) -> None:
        self.nodes: Mapping[str, Node] = MappingProxyType(dict(nodes))
        self._out = {p: MappingProxyType(dict(out_edges.get(p, {}))) for p in self.nodes}
        adjacent: dict[str, set[str]] = {p: set() for p in self.nodes}
        for start, edges in self._out.items():
            for end in edges.values():
                adjacent[start].add(end)
                adjacent[end].add(start)
        self._adjacent = {p: frozenset(s) for p, s in adjacent.items()}

    def __contains__(self, panoid: object) -> bool:
        return panoid in self.nodes

    def __len__(self) -> int:
        return len(self.nodes)

    def out_edges(self, panoid: str) -> Mapping[int, str]:
        """Heading → neighbour panorama for every edge leaving `panoid` (file order)."""
        return self._out[panoid]

    def degree(self, panoid: str) -> int:
        """Number of out-edges: 1 is a dead end, 2 a plain street, more an intersection."""
        return len(self._out[panoid])

    def heading_to(self, start: str, end: str) -> int | None:
        """Heading of the edge start → end, or None when there is no such edge."""
        for heading, neighbour in self._out[start].items():
            if neighbour == end:
                return heading
        return None

    def adjacent(self, panoid: str) -> frozenset[str]:
        """Neighbours in either direction (predecessors and successors)."""
        return self._adjacent[panoid]

    def shortest_path(self, start: str, goal: str) -> list[str] | None:
        """Fewest-hops directed path start → goal (BFS, neighbours in file order), or None."""
        if start == goal:
            return [start]
        parent: dict[str, str] = {start: start}
        queue = deque([start])
        while queue:
            current = queue.popleft()
            for neighbour in self._out[current].values():
                if neighbour in parent:
                    continue
                parent[neighbour] = current
                if neighbour == goal:
                    path = [goal]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return path[::-1]
                queue.append(neighbour)
        return None

    def hops(self, start: str, goal: str) -> int:
        """Edges on the shortest directed path; along edges in either direction if no directed path exists."""
        path = self.shortest_path(start, goal)
        if path is not None:
            return len(path) - 1
        seen = {start}
        frontier = [start]
        distance = 0
        while frontier:
            distance += 1
            nxt = []
            for current in frontier:
                for neighbour in self._adjacent[current]:
                    if neighbour == goal:
                        return distance
                    if neighbour not in seen:
                        seen.add(neighbour)
                        nxt.append(neighbour)
            frontier = nxt
        raise DataError(f"no path between panoramas {start} and {goal}")


def _fields(line: str, count: int, path: Path, number: int, layout: str) -> list[str]:
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != count or not all(parts):
        raise DataError(f"{at(str(path), number)}: expected `{layout}`, got {line.strip()[:200]!r}")
    return parts


_MAX_NUMBER_CHARS = 40
"""Longer numbers are refused before conversion (coordinates and headings need a dozen characters)."""


def _number(text: str, field: str, path: Path, number: int) -> float:
    """A finite number; DataError `PATH: line N: field F: ...` for text that is not one (NaN, inf, 1e999,
    4,300 digits)."""
    where = at(str(path), number, field=field)
    if len(text) > _MAX_NUMBER_CHARS:
        raise DataError(f"{where}: number with {len(text)} characters (limit {_MAX_NUMBER_CHARS})")
    try:
        value = float(text)
    except ValueError:
        raise DataError(f"{where}: not a number: {text!r}") from None
    if not math.isfinite(value):
        raise DataError(f"{where}: {text!r} is not a finite number")
    return value


def _read_lines(path: Path) -> list[str]:
    """The lines of a graph file, read through `situated.files` (regular file, size limit, UTF-8)."""
    return files.read_text(path, what="street graph file").split("\n")  # line numbers as editors count them


def load_graph(graph_dir: str | Path) -> StreetGraph:
    """Load `nodes.txt` and `links.txt` from a directory; DataError names the file and line of any problem."""
    directory = Path(graph_dir)
    nodes_file, links_file = directory / "nodes.txt", directory / "links.txt"
    nodes: dict[str, Node] = {}
    for number, line in enumerate(_read_lines(nodes_file), start=1):
        if not line.strip():
            continue
        panoid, yaw, lat, lng, partition = _fields(
            line, 5, nodes_file, number, "panoid,yaw,lat,lng,partition"
        )
        if panoid in nodes:
            raise DataError(f"{at(str(nodes_file), number, field='panoid')}: duplicate panorama {panoid}")
        nodes[panoid] = Node(
            panoid=panoid,
            yaw=round(_number(yaw, "yaw", nodes_file, number)) % 360,
            lat=_number(lat, "lat", nodes_file, number),
            lng=_number(lng, "lng", nodes_file, number),
            partition=partition,
        )
    out: dict[str, dict[int, str]] = {}
    for number, line in enumerate(_read_lines(links_file), start=1):
        if not line.strip():
            continue
        start, heading_text, end = _fields(line, 3, links_file, number, "start_panoid,heading,end_panoid")
        heading = round(_number(heading_text, "heading", links_file, number)) % 360
        for field, panoid in (("start_panoid", start), ("end_panoid", end)):
            if panoid not in nodes:
                raise DataError(f"{at(str(links_file), number, field=field)}: {panoid} is not in {nodes_file.name}")
        edges = out.setdefault(start, {})
        if heading in edges:
            raise DataError(f"{at(str(links_file), number, field='heading')}: second edge leaving {start} at "
                            f"heading {heading}")
        edges[heading] = end
    return StreetGraph(nodes, out)

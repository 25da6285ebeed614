"""Loaders for Map2seq and Touchdown navigation data in the VELMA release layout.

A dataset directory holds `graph/{nodes,links}.txt` and `data/<split>.json` (JSON lines). Map2seq lines carry
`id`, `route_panoids`, `navigation_text`, `start_heading`; Touchdown lines carry `route_id` instead of `id`.
Landmark lists (Map2seq) come from the VELMA landmarks file `{"instances": {id: {"unfiltered": [...]}}}`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..envs.streets.env import DATASETS, NavInstance
from ..envs.streets.graph import StreetGraph, load_graph
from ..envs.streets.landmarks import filter_landmarks
from ..errors import DataError


@dataclass(frozen=True)
class NavDataset:
    """A loaded split: its graph, instances and which dataset they come from."""

    name: str
    split: str
    graph: StreetGraph
    instances: tuple[NavInstance, ...]


def detect_dataset(directory: str | Path) -> str:
    """ "map2seq" or "touchdown" from the directory name (e.g. `map2seq_unseen`) or its first instance."""
    path = Path(directory)
    name = path.resolve().name.lower()
    for dataset in DATASETS:
        if dataset in name:
            return dataset
    data = path / "data"
    for file in sorted(data.glob("*.json")) if data.is_dir() else []:
        with file.open(encoding="utf-8") as handle:
            first = handle.readline()
        try:
            record = json.loads(first)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            return "touchdown" if "route_id" in record else "map2seq"
    raise DataError(
        f"{path}: cannot tell whether this is map2seq or touchdown data; pass the dataset explicitly"
    )


def load_landmarks(path: str | Path) -> dict[str, tuple[str, ...]]:
    """Instance id → filtered landmark names from a VELMA landmarks file."""
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as err:
        raise DataError(f"cannot read landmarks file {file}: {err.strerror or err}") from None
    except json.JSONDecodeError as err:
        raise DataError(f"{file}:{err.lineno}: not valid JSON ({err.msg})") from None
    instances = data.get("instances") if isinstance(data, dict) else None
    if not isinstance(instances, dict):
        raise DataError(f"{file}: field instances must be an object of id → entry")
    landmarks: dict[str, tuple[str, ...]] = {}
    for key, entry in instances.items():
        items = entry.get("unfiltered") if isinstance(entry, dict) else None
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise DataError(f"{file}: instances.{key}.unfiltered must be a list of strings")
        landmarks[str(key)] = filter_landmarks(items)
    return landmarks


def _instance(
    record: object, dataset: str, graph: StreetGraph, landmarks: Mapping[str, tuple[str, ...]], where: str
) -> NavInstance:
    if not isinstance(record, dict):
        raise DataError(f"{where}: expected a JSON object")
    id_field = "route_id" if dataset == "touchdown" else "id"
    raw_id = record.get(id_field, record.get("id"))
    if raw_id is None:
        raise DataError(f"{where}: missing field {id_field}")
    route = record.get("route_panoids")
    if not isinstance(route, list) or not route or not all(isinstance(p, str) for p in route):
        raise DataError(f"{where}: field route_panoids must be a non-empty list of panorama ids")
    text = record.get("navigation_text")
    if not isinstance(text, str):
        raise DataError(f"{where}: field navigation_text must be a string")
    try:
        heading = float(record["start_heading"])
    except KeyError:
        raise DataError(f"{where}: missing field start_heading") from None
    except (TypeError, ValueError):
        raise DataError(f"{where}: field start_heading is not a number") from None
    for index, panoid in enumerate(route):
        if panoid not in graph:
            raise DataError(f"{where}: route_panoids[{index}] {panoid} is not in the graph")
    for index, (here, there) in enumerate(itertools.pairwise(route)):
        if graph.heading_to(here, there) is None:
            raise DataError(f"{where}: route_panoids[{index}] -> [{index + 1}] is not an edge of the graph")
    return NavInstance(
        id=str(raw_id),
        dataset=dataset,
        route=tuple(route),
        start_heading=heading,
        instruction=text.strip(),
        landmarks=landmarks.get(str(raw_id), ()),
    )


def load_instances(
    path: str | Path, graph: StreetGraph, dataset: str, landmarks: Mapping[str, tuple[str, ...]] | None = None
) -> list[NavInstance]:
    """Read a JSON-lines instance file; DataError names the file, line and field of a malformed instance."""
    if dataset not in DATASETS:
        raise DataError(f"unknown dataset {dataset!r}; expected one of {', '.join(DATASETS)}")
    file = Path(path)
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise DataError(f"cannot read instance file {file}: {err.strerror or err}") from None
    instances: list[NavInstance] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{file}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(f"{where}: not valid JSON ({err.msg})") from None
        instances.append(_instance(record, dataset, graph, landmarks or {}, where))
    return instances


def default_landmarks_file(directory: str | Path, dataset: str) -> Path | None:
    """The release's landmarks file beside the dataset directory (`../landmarks/<dataset>_*.json`), if any."""
    folder = Path(directory).resolve().parent / "landmarks"
    matches = sorted(folder.glob(f"{dataset}_*.json")) if folder.is_dir() else []
    return matches[0] if matches else None


def graph_dir(directory: str | Path, dataset: str) -> Path:
    """`<directory>/graph`, or else the graph of a sibling directory of the same dataset.

    The release ships the seen and unseen scenarios of a dataset on one street graph; this checkout has it only
    under `*_unseen`, so `map2seq_seen` borrows `map2seq_unseen/graph`.
    """
    path = Path(directory)
    if (path / "graph").is_dir():
        return path / "graph"
    parent = path.resolve().parent
    siblings = sorted(parent.glob(f"{dataset}_*/graph")) if parent.is_dir() else []
    if siblings:
        return siblings[0]
    raise DataError(f"{path}: no graph/ directory with nodes.txt and links.txt")


def load_split(
    directory: str | Path, split: str, dataset: str | None = None, landmarks_file: str | Path | None = None
) -> NavDataset:
    """Load `<directory>/data/<split>.json` on its graph (see `graph_dir`), with landmarks (given or default)."""
    path = Path(directory)
    if not path.is_dir():
        raise DataError(f"{path}: no such dataset directory")
    name = dataset or detect_dataset(path)
    graph = load_graph(graph_dir(path, name))
    instance_file = path / "data" / f"{split}.json"
    if not instance_file.is_file():
        raise DataError(f"{instance_file}: no such split file")
    source = Path(landmarks_file) if landmarks_file is not None else default_landmarks_file(path, name)
    landmarks = load_landmarks(source) if source is not None else {}
    return NavDataset(name, split, graph, tuple(load_instances(instance_file, graph, name, landmarks)))


def examples_dir(data: Path, dataset: str) -> Path:
    """Where training-area example routes are: the sibling `<dataset>_seen` directory, else Map2seq's."""
    parent = Path(data).resolve().parent
    for name in (f"{dataset}_seen", "map2seq_seen"):
        if (parent / name / "data").is_dir():
            return parent / name
    raise DataError(f"no {dataset}_seen directory beside {data}; give --examples-data DIR")

"""Loaders for Map2seq and Touchdown navigation data in the VELMA release layout.

A dataset directory holds `graph/{nodes,links}.txt` and `data/<split>.json` (JSON lines). Map2seq lines carry
`id`, `route_panoids`, `navigation_text`, `start_heading`; Touchdown lines carry `route_id` instead of `id`.
Landmark lists (Map2seq) come from the VELMA landmarks file `{"instances": {id: {"unfiltered": [...]}}}`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import files
from ..envs.streets.env import DATASETS, NavInstance
from ..envs.streets.graph import StreetGraph, load_graph
from ..envs.streets.landmarks import filter_landmarks
from ..errors import DataError
from ..files import at, field_path


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
        lines = files.read_json_lines(file, what="instance file")
        try:
            first = next(lines, (0, None))[1]
        except DataError:
            continue
        finally:
            lines.close()
        if isinstance(first, dict):
            return "touchdown" if "route_id" in first else "map2seq"
    raise DataError(
        f"{path}: cannot tell whether this is map2seq or touchdown data; pass the dataset explicitly"
    )


def load_landmarks(path: str | Path) -> dict[str, tuple[str, ...]]:
    """Instance id → filtered landmark names from a VELMA landmarks file."""
    file = Path(path)
    data = files.read_json(file, what="landmarks file")
    instances = files.field(data, "instances", dict[str, dict[str, Any]], str(file))
    landmarks: dict[str, tuple[str, ...]] = {}
    for key, entry in instances.items():
        name = field_path(field_path("instances", key), "unfiltered")
        if "unfiltered" not in entry:
            raise DataError(f"{at(str(file), field=name)}: missing")
        landmarks[str(key)] = filter_landmarks(files.check_type(entry["unfiltered"], list[str], str(file), name=name))
    return landmarks


def _instance(
    record: object, dataset: str, graph: StreetGraph, landmarks: Mapping[str, tuple[str, ...]], where: str
) -> NavInstance:
    files.check_type(record, dict, where)
    id_field = "route_id" if dataset == "touchdown" else "id"
    raw_id = files.field(record, id_field if id_field in record else "id", int | str, where)
    route = files.field(record, "route_panoids", list[str], where)
    if not route:
        raise DataError(f"{at(where, field='route_panoids')}: expected a non-empty list of panorama ids")
    text = files.field(record, "navigation_text", str, where)
    heading = _heading(files.field(record, "start_heading", float | str, where), where)
    for index, panoid in enumerate(route):
        if panoid not in graph:
            raise DataError(f"{at(where, field=f'route_panoids[{index}]')}: {panoid} is not in the graph")
    for index, (here, there) in enumerate(itertools.pairwise(route)):
        if graph.heading_to(here, there) is None:
            raise DataError(f"{at(where, field=f'route_panoids[{index}]')}: {here} -> {there} (route_panoids"
                            f"[{index + 1}]) is not an edge of the graph")
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
    instances: list[NavInstance] = []
    for number, record in files.read_json_lines(file, what="instance file"):
        instances.append(_instance(record, dataset, graph, landmarks or {}, at(str(file), number)))
    if not instances:
        raise DataError(f"{file}: no instances (the split is empty)")
    return instances


def _heading(value: float | str, where: str) -> float:
    """A start heading: a finite number, or text holding one (some releases write numbers as strings)."""
    if isinstance(value, str):
        try:
            number = float(value) if len(value) <= 40 else math.nan
        except ValueError:
            raise DataError(f"{at(where, field='start_heading')}: not a number: {value[:40]!r}") from None
    else:
        number = float(value)
    if not math.isfinite(number):
        raise DataError(f"{at(where, field='start_heading')}: expected a finite number of degrees, got "
                        f"{value if isinstance(value, float) else repr(value[:40])}")
    return number


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

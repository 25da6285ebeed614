"""Map2seq / Touchdown loaders (graph, instances, landmarks) on small hand-made files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes import write_street_dataset
from situated.datasets.map2seq import (
    detect_dataset,
    filter_landmarks,
    load_instances,
    load_landmarks,
    load_split,
)
from situated.envs.streets.env import NavInstance
from situated.envs.streets.graph import load_graph
from situated.errors import DataError


@pytest.mark.parametrize(
    ("file", "content", "problem"),
    [
        ("nodes.txt", "A,0,40.0,-74.0\n", r"nodes.txt: line 1: expected"),
        ("nodes.txt", "A,0,40.0,-74.0,unseen\nB,north,40.0,-74.0,unseen\n", r"nodes.txt: line 2: field yaw"),
        ("links.txt", "A,0,B\nB,x,A\n", r"links.txt: line 2: field heading"),
        ("links.txt", "A,0,B\nA,90,Q\n", r"links.txt: line 2: field end_panoid: Q is not in nodes.txt"),
        ("links.txt", "A,0,B\nA,0,C\n", r"links.txt: line 2: field heading: second edge leaving A at heading 0"),
    ],
)
def test_graph_loader_names_file_and_line(tmp_path: Path, file: str, content: str, problem: str) -> None:
    directory = write_street_dataset(tmp_path)
    (directory / "graph" / file).write_text(content)
    with pytest.raises(DataError, match=problem):
        load_graph(directory / "graph")


def test_graph_loader_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"nodes\.txt"):
        load_graph(tmp_path)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("{not json", "dev.json: line 2, column 2: invalid JSON"),
        ('{"id": 9, "navigation_text": "x", "start_heading": 0}', "dev.json: line 2: field route_panoids: missing"),
        (
            '{"id": 9, "route_panoids": ["A", "Q"], "navigation_text": "x", "start_heading": 0}',
            r"route_panoids\[1\]: Q is not in",
        ),
        ('{"id": 9, "route_panoids": ["A", "C"], "navigation_text": "x", "start_heading": 0}', "not an edge"),
        ('{"id": 9, "route_panoids": ["A", "B"], "navigation_text": "x"}', "field start_heading: missing"),
        ('{"route_panoids": ["A", "B"], "navigation_text": "x", "start_heading": 0}', "field id: missing"),
    ],
)
def test_instance_loader_names_line_and_field(tmp_path: Path, line: str, problem: str) -> None:
    good = json.dumps({"id": 1, "route_panoids": ["A", "B"], "navigation_text": "Go.", "start_heading": 0})
    directory = write_street_dataset(tmp_path, lines=[good, line])
    graph = load_graph(directory / "graph")
    with pytest.raises(DataError, match=problem):
        load_instances(directory / "data" / "dev.json", graph, "map2seq")


def test_dataset_kind_from_directory_name_or_content(tmp_path: Path) -> None:
    assert detect_dataset(write_street_dataset(tmp_path, "touchdown_unseen")) == "touchdown"
    assert detect_dataset(write_street_dataset(tmp_path, "map2seq_seen")) == "map2seq"
    td = json.dumps(
        {"route_id": 5, "route_panoids": ["A", "B"], "navigation_text": "x", "start_heading": 3.5}
    )
    other = write_street_dataset(tmp_path, "streets", lines=[td])
    assert detect_dataset(other) == "touchdown"
    loaded = load_split(other, "dev")
    assert loaded.name == "touchdown" and loaded.instances[0].id == "5"
    with pytest.raises(DataError, match="no such split"):
        load_split(other, "test")


def test_landmarks_file_is_filtered_and_attached(tmp_path: Path) -> None:
    directory = write_street_dataset(tmp_path)
    (tmp_path / "landmarks").mkdir()
    entries = {
        "1": {"unfiltered": ["Starbucks", "traffic lights", "the intersection", "Starbucks", "a bank"]}
    }
    (tmp_path / "landmarks" / "map2seq_gpt3.json").write_text(json.dumps({"instances": entries}))
    loaded = load_split(directory, "dev")
    assert loaded.instances[0].landmarks == ("Starbucks", "a bank")
    assert loaded.instances[1].landmarks == ()
    assert filter_landmarks([" a building", "side street", "", "Joe's"]) == ("Joe's",)
    (tmp_path / "bad.json").write_text(json.dumps({"instances": {"1": {"unfiltered": "Starbucks"}}}))
    with pytest.raises(DataError, match=r"instances.1.unfiltered"):
        load_landmarks(tmp_path / "bad.json")


@pytest.fixture()
def dataset(tmp_path: Path):
    return load_split(write_street_dataset(tmp_path), "dev")


def test_instance_ids_are_strings(dataset) -> None:
    assert all(isinstance(i, NavInstance) and isinstance(i.id, str) for i in dataset.instances)


def test_seen_split_without_graph_uses_the_sibling_graph(tmp_path: Path) -> None:
    write_street_dataset(tmp_path, "map2seq_unseen")
    seen = tmp_path / "map2seq_seen" / "data"
    seen.mkdir(parents=True)
    line = {"id": 8, "route_panoids": ["A", "B", "C"], "navigation_text": "Go.", "start_heading": 0}
    (seen / "dev.json").write_text(json.dumps(line) + "\n")
    loaded = load_split(tmp_path / "map2seq_seen", "dev")
    assert loaded.instances[0].route == ("A", "B", "C") and "K" in loaded.graph
    with pytest.raises(DataError, match="no graph/ directory"):
        load_split(write_street_dataset(tmp_path, "touchdown_seen") / "data", "dev", dataset="touchdown")

"""Loaders, metrics, the resumable runner and the `situated navigate` CLI on small hand-made files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import situated.cli as cli
from situated.datasets.map2seq import (
    detect_dataset,
    filter_landmarks,
    load_instances,
    load_landmarks,
    load_split,
)
from situated.envs.streets.env import NavInstance, StreetEnv
from situated.envs.streets.graph import load_graph
from situated.errors import DataError, SituatedError
from situated.eval.nav_metrics import episode_metrics, summarize
from situated.eval.nav_runner import read_results, run_agent, summarize_records
from situated.planners.nav_baselines import ForwardAgent, GoldAgent, RandomAgent, make_agent

# A street running north: A - B - C - D - E, with a side street B -> W, and a spur C -> K.
NODES = """A,0,40.0000,-74.0,unseen
B,0,40.0001,-74.0,unseen
C,0,40.0002,-74.0,unseen
D,0,40.0003,-74.0,unseen
E,0,40.0004,-74.0,unseen
W,90,40.0001,-74.0001,unseen
K,90,40.0002,-73.9999,unseen
"""
LINKS = """A,0,B
B,180,A
B,0,C
B,270,W
W,90,B
C,180,B
C,0,D
C,90,K
K,270,C
D,180,C
D,0,E
E,180,D
"""


def write_dataset(root: Path, name: str = "map2seq_unseen", lines: list[str] | None = None) -> Path:
    directory = root / name
    (directory / "graph").mkdir(parents=True)
    (directory / "data").mkdir()
    (directory / "graph" / "nodes.txt").write_text(NODES)
    (directory / "graph" / "links.txt").write_text(LINKS)
    if lines is None:
        lines = [
            json.dumps(
                {"id": 1, "route_panoids": ["A", "B", "C", "D"], "navigation_text": "Go.", "start_heading": 0}
            ),
            json.dumps(
                {"id": 2, "route_panoids": ["A", "B", "W"], "navigation_text": "Left.", "start_heading": 0}
            ),
            json.dumps(
                {"id": 3, "route_panoids": ["A", "B", "C", "K"], "navigation_text": "R.", "start_heading": 0}
            ),
        ]
    (directory / "data" / "dev.json").write_text("\n".join(lines) + "\n")
    return directory


@pytest.mark.parametrize(
    ("file", "content", "problem"),
    [
        ("nodes.txt", "A,0,40.0,-74.0\n", r"nodes.txt:1: expected"),
        ("nodes.txt", "A,0,40.0,-74.0,unseen\nB,north,40.0,-74.0,unseen\n", r"nodes.txt:2: field yaw"),
        ("links.txt", "A,0,B\nB,x,A\n", r"links.txt:2: field heading"),
        ("links.txt", "A,0,B\nA,90,Q\n", r"links.txt:2: end_panoid Q is not in nodes.txt"),
        ("links.txt", "A,0,B\nA,0,C\n", r"links.txt:2: second edge leaving A at heading 0"),
    ],
)
def test_graph_loader_names_file_and_line(tmp_path: Path, file: str, content: str, problem: str) -> None:
    directory = write_dataset(tmp_path)
    (directory / "graph" / file).write_text(content)
    with pytest.raises(DataError, match=problem):
        load_graph(directory / "graph")


def test_graph_loader_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"nodes\.txt"):
        load_graph(tmp_path)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("{not json", "dev.json:2: not valid JSON"),
        ('{"id": 9, "navigation_text": "x", "start_heading": 0}', "dev.json:2: field route_panoids"),
        (
            '{"id": 9, "route_panoids": ["A", "Q"], "navigation_text": "x", "start_heading": 0}',
            r"\[1\] Q is not in",
        ),
        ('{"id": 9, "route_panoids": ["A", "C"], "navigation_text": "x", "start_heading": 0}', "not an edge"),
        ('{"id": 9, "route_panoids": ["A", "B"], "navigation_text": "x"}', "missing field start_heading"),
        ('{"route_panoids": ["A", "B"], "navigation_text": "x", "start_heading": 0}', "missing field id"),
    ],
)
def test_instance_loader_names_line_and_field(tmp_path: Path, line: str, problem: str) -> None:
    good = json.dumps({"id": 1, "route_panoids": ["A", "B"], "navigation_text": "Go.", "start_heading": 0})
    directory = write_dataset(tmp_path, lines=[good, line])
    graph = load_graph(directory / "graph")
    with pytest.raises(DataError, match=problem):
        load_instances(directory / "data" / "dev.json", graph, "map2seq")


def test_dataset_kind_from_directory_name_or_content(tmp_path: Path) -> None:
    assert detect_dataset(write_dataset(tmp_path, "touchdown_unseen")) == "touchdown"
    assert detect_dataset(write_dataset(tmp_path, "map2seq_seen")) == "map2seq"
    td = json.dumps(
        {"route_id": 5, "route_panoids": ["A", "B"], "navigation_text": "x", "start_heading": 3.5}
    )
    other = write_dataset(tmp_path, "streets", lines=[td])
    assert detect_dataset(other) == "touchdown"
    loaded = load_split(other, "dev")
    assert loaded.name == "touchdown" and loaded.instances[0].id == "5"
    with pytest.raises(DataError, match="no such split"):
        load_split(other, "test")


def test_landmarks_file_is_filtered_and_attached(tmp_path: Path) -> None:
    directory = write_dataset(tmp_path)
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
    return load_split(write_dataset(tmp_path), "dev")


def test_metrics_perfect_and_neighbour_stops(dataset) -> None:
    graph = dataset.graph
    perfect = episode_metrics(graph, ["A", "B", "C", "D"], ["A", "B", "C", "D"])
    assert perfect.tc and perfect.spd == 0 and perfect.kpa == 1 and perfect.kpa_corrected == 1
    short = episode_metrics(graph, ["A", "B", "C", "D"], ["A", "B", "C"])
    assert short.tc and short.spd == 1  # a neighbour of the target counts as reached
    assert not episode_metrics(graph, ["A", "B", "C", "D"], ["A", "B"]).tc


def test_kpa_faithful_counts_the_start_for_free_corrected_does_not(dataset) -> None:
    graph = dataset.graph
    # Gold A->B->C->D: key points are the start and B (3 out-edges) and C (3 out-edges), then the stop.
    # An agent that turned off at B into W and stopped there:
    wrong = episode_metrics(graph, ["A", "B", "C", "D"], ["A", "B", "W"])
    # faithful: items [A, B, (B,C), (C,D)] + stop; A and B are shared -> 2 / 5
    assert wrong.kpa == pytest.approx(2 / 5)
    # corrected: decisions (A,B), (B,C), (C,D) + stop; only (A,B) right -> 1 / 4
    assert wrong.kpa_corrected == pytest.approx(1 / 4)
    # An agent that never moved: its path has no key points at all in either variant
    stay = episode_metrics(graph, ["A", "B", "C", "D"], ["A"])
    assert stay.kpa == 0 and stay.kpa_corrected == 0 and stay.spd == 3
    summary = summarize([wrong, stay])
    assert summary.n == 2 and summary.kpa == pytest.approx(20.0) and summary.tc == 0


def test_agents_on_a_small_split(dataset) -> None:
    env = StreetEnv(dataset.graph)
    gold = run_agent(env, GoldAgent(dataset.graph), dataset.instances)
    assert [r["pano_path"] for r in gold] == [list(i.route) for i in dataset.instances]
    assert summarize_records(gold).tc == 100
    forward = run_agent(env, ForwardAgent(max_panoramas=3), dataset.instances)
    assert all(r["pano_path"] == ["A", "B", "C"] and r["actions"][-1] == "stop" for r in forward)
    first = run_agent(env, RandomAgent(seed=7), dataset.instances)
    again = run_agent(env, RandomAgent(seed=7), list(reversed(dataset.instances)))
    assert [r["actions"] for r in first] == [r["actions"] for r in reversed(again)]


def test_make_agent_hook() -> None:
    assert isinstance(make_agent("forward"), ForwardAgent)
    with pytest.raises(SituatedError, match="the llm agent needs"):
        make_agent("llm", model="llamacpp:x")
    with pytest.raises(SituatedError, match="unknown agent"):
        make_agent("teleport")


def test_runner_resumes_and_survives_a_partial_last_line(dataset, tmp_path: Path) -> None:
    out = tmp_path / "out" / "results.jsonl"
    env = StreetEnv(dataset.graph)
    calls: list[tuple[int, int]] = []
    run_agent(env, ForwardAgent(), dataset.instances[:2], out, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(0, 2), (1, 2), (2, 2)]
    with out.open("a") as handle:
        handle.write('{"id": "3", "dataset": "map2seq", "acti')  # interrupted mid-write
    resumed: list[tuple[int, int]] = []
    records = run_agent(
        env, ForwardAgent(), dataset.instances, out, progress=lambda d, t: resumed.append((d, t))
    )
    assert resumed == [(2, 3), (3, 3)]
    assert [r["id"] for r in records] == ["1", "2", "3"]
    assert [r["id"] for r in read_results(out)] == ["1", "2", "3"]
    assert len(out.read_text().splitlines()) == 3


def test_runner_rejects_a_corrupt_line_in_the_middle(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text('{"id": "1"}\ngarbage\n{"id": "2"}\n')
    with pytest.raises(DataError, match=r"r.jsonl:2"):
        read_results(out)


def run_cli(args: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    return cli.main(args)


def test_cli_json_summary_is_the_last_line(
    dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "map2seq_unseen")
    code = run_cli(
        ["navigate", "--data", data, "--agent", "gold", "--json", "--out", str(tmp_path / "o")], monkeypatch
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary == {"tc": 100.0, "spd": 0.0, "kpa": 100.0, "kpa_corrected": 100.0, "n": 3}
    assert len((tmp_path / "o" / "map2seq_dev_gold.jsonl").read_text().splitlines()) == 3


def test_cli_bad_input_is_one_line_and_exit_2(
    dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "map2seq_unseen")
    assert run_cli(["navigate", "--data", data, "--agent", "llm"], monkeypatch) == 2
    assert capsys.readouterr().err.strip().startswith("error: the llm agent needs")
    assert run_cli(["navigate", "--data", str(tmp_path / "nowhere")], monkeypatch) == 2
    assert run_cli(["navigate", "--data", data, "--landmarks", "file"], monkeypatch) == 2
    assert "--landmarks-file" in capsys.readouterr().err


def test_cli_show_draws_a_route(
    dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    image = tmp_path / "route.png"
    data = str(tmp_path / "map2seq_unseen")
    assert (
        run_cli(
            ["navigate", "show", "3", "--data", data, "--agent", "forward", "--out", str(image)], monkeypatch
        )
        == 0
    )
    assert image.read_bytes().startswith(b"\x89PNG")
    assert run_cli(["navigate", "show", "99", "--data", data, "--out", str(image)], monkeypatch) == 2
    assert "no instance with id 99" in capsys.readouterr().err


def test_instance_ids_are_strings(dataset) -> None:
    assert all(isinstance(i, NavInstance) and isinstance(i.id, str) for i in dataset.instances)


def test_seen_split_without_graph_uses_the_sibling_graph(tmp_path: Path) -> None:
    write_dataset(tmp_path, "map2seq_unseen")
    seen = tmp_path / "map2seq_seen" / "data"
    seen.mkdir(parents=True)
    line = {"id": 8, "route_panoids": ["A", "B", "C"], "navigation_text": "Go.", "start_heading": 0}
    (seen / "dev.json").write_text(json.dumps(line) + "\n")
    loaded = load_split(tmp_path / "map2seq_seen", "dev")
    assert loaded.instances[0].route == ("A", "B", "C") and "K" in loaded.graph
    with pytest.raises(DataError, match="no graph/ directory"):
        load_split(write_dataset(tmp_path, "touchdown_seen") / "data", "dev", dataset="touchdown")

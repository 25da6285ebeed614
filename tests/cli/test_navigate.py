"""`situated navigate` (run agents, draw a route) on a small hand-made street dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import situated.cli as cli
from fakes import write_street_dataset
from situated.datasets.map2seq import load_split


@pytest.fixture()
def dataset(tmp_path: Path):
    return load_split(write_street_dataset(tmp_path), "dev")


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
    assert len((tmp_path / "o" / "map2seq_dev_gold" / "episodes.jsonl").read_text().splitlines()) == 3


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




def _seen_beside(tmp_path: Path) -> Path:
    """A training-area dataset beside the unseen one (the same street, every panorama in the seen partition)."""
    seen = write_street_dataset(tmp_path, "map2seq_seen")
    nodes = seen / "graph" / "nodes.txt"
    nodes.write_text(nodes.read_text().replace(",unseen", ",seen"))
    return seen


@pytest.mark.slow
def test_llm_agent_levers_reach_the_episodes(dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The real 0.5B model: with a stop threshold this low the agent stops at its first decision, in every
    episode, whatever the model would have written; retrieved examples and intersection counts are part of the
    run's configuration and its folder name."""
    _seen_beside(tmp_path)
    data = str(tmp_path / "map2seq_unseen")
    args = ["navigate", "--data", data, "--agent", "llm", "--model", "llamacpp:qwen2.5-coder-0.5b", "--threads", "1",
            "--examples", "retrieved", "--retriever", "bm25", "--shots", "1", "--count-intersections",
            "--stop-threshold", "1e-9", "--out", str(tmp_path / "o"), "--json"]
    assert run_cli(args, monkeypatch) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["n"] == 3
    (store,) = (tmp_path / "o").iterdir()
    assert store.name.endswith("-shots1-bm25-stop1e-09-counted")
    config = json.loads((store / "run.json").read_text())["config"]
    assert config["retriever"] == "bm25" and config["shots"] == 1 and config["count_intersections"] is True
    for line in (store / "episodes.jsonl").read_text().splitlines():
        actions = json.loads(line)["details"]["actions"]
        assert actions[-1] == "stop" and len(actions) <= 2, actions  # Map2seq's forced forward, then stop


def test_llm_agent_lever_options_are_checked(dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    data = str(tmp_path / "map2seq_unseen")
    for extra, needle in ((["--agent", "llm", "--model", "m", "--examples", "nearest"], "--examples must be"),
                          (["--agent", "llm", "--model", "m", "--examples", "retrieved", "--shots", "0"], "--shots"),
                          (["--agent", "llm", "--model", "m", "--stop-threshold", "1.5"], "--stop-threshold"),
                          (["--agent", "forward", "--count-intersections"], "for --agent llm"),
                          (["--agent", "llm", "--model", "m", "--turn-words"], "for --agent route"),
                          (["--agent", "words", "--word-counts"], "for --agent route")):
        assert run_cli(["navigate", "--data", data, *extra], monkeypatch) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error:") and needle in err and "\n" not in err, err


def test_route_agent_writes_one_route_per_episode_and_walks_it(
    dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--agent route`: the nearest example routes (retrieved, 5 by default) go into one prompt per episode, and
    the written route is walked by counting: "stop at intersection 1" stops on arriving at B."""
    from fakes import ScriptedLLM
    from situated.eval.executors import ModelSpec

    _seen_beside(tmp_path)
    llm = ScriptedLLM(default="stop at intersection 1\n")
    monkeypatch.setattr(ModelSpec, "open", lambda spec: llm)
    monkeypatch.setattr("situated.llm.models.ensure_model", lambda *args, **kwargs: None)
    data = str(tmp_path / "map2seq_unseen")
    args = ["navigate", "--data", data, "--agent", "route", "--model", "llamacpp:qwen2.5-coder-1.5b",
            "--retriever", "bm25", "--out", str(tmp_path / "o"), "--json"]
    assert run_cli(args, monkeypatch) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["n"] == 3 and len(llm.calls) == 3  # one call per episode
    (store,) = (tmp_path / "o").iterdir()
    assert store.name == "map2seq_dev_route-llamacpp_qwen2.5-coder-1.5b-shots5-bm25"
    config = json.loads((store / "run.json").read_text())["config"]
    assert config["agent"] == "route" and config["shots"] == 5 and config["retriever"] == "bm25"
    for line in (store / "episodes.jsonl").read_text().splitlines():
        record = json.loads(line)
        assert record["details"]["pano_path"][-1] == "B"
        assert record["cost"]["calls"] == 1 and record["cost"]["prompt_tokens"] == llm.prompt_tokens
    # the seen sibling's three training-area routes are the pool (fewer than 5), less the one with the task's id
    assert [p.count("Directions:") for p in llm.prompts] == [3, 3, 3]


def test_route_agent_options_are_checked(dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    data = str(tmp_path / "map2seq_unseen")
    for extra, needle in ((["--agent", "route", "--model", "m", "--shots", "0"], "--shots must be >= 1"),
                          (["--agent", "route", "--model", "m", "--stop-threshold", "0.5"], "for --agent llm"),
                          (["--agent", "forward", "--shots", "3"], "for --agent llm or route"),
                          (["--agent", "route"], "the route agent needs a model")):
        assert run_cli(["navigate", "--data", data, *extra], monkeypatch) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error:") and needle in err and "\n" not in err, err


def test_words_agent_needs_no_model_and_turns_where_the_directions_say(
    velma_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--agent words` runs on the real Map2seq dev file with no model: it calls none, and it turns (the
    forward-only agent never does)."""
    args = ["navigate", "--data", str(velma_data / "map2seq_unseen"), "--agent", "words", "--limit", "10",
            "--json", "--out", str(tmp_path)]
    assert run_cli(args, monkeypatch) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["n"] == 10
    episodes = [json.loads(line) for line in (tmp_path / "map2seq_dev_words" / "episodes.jsonl").open()]
    assert all(e["cost"]["calls"] == 0 for e in episodes)
    assert sum(action in ("left", "right") for e in episodes for action in e["details"]["actions"]) >= 10

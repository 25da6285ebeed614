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



"""`situated navigate train` end to end on CPU with the embedded 0.5B model as the base: a few training steps on
a handful of routes lower the loss, the run resumes, and its adapter runs with `navigate --lora`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import situated.cli as cli
from fakes import write_street_dataset
from situated.llm.models import REGISTRY
from train.conftest import need

pytestmark = pytest.mark.slow


def _seen(root: Path) -> Path:
    seen = write_street_dataset(root, "map2seq_seen")
    nodes = seen / "graph" / "nodes.txt"
    nodes.write_text(nodes.read_text().replace(",unseen", ",seen"))
    return seen


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, base_gguf: Path) -> tuple[Path, list[str]]:
    """A run of three epochs over the hand-made street's routes (one held out), one route per optimizer step."""
    need("torch", "transformers", "peft", "gguf")
    root = tmp_path_factory.mktemp("train")
    args = ["navigate", "train", "--data", str(_seen(root)), "--split", "dev", "--base", "llamacpp:qwen2.5-coder-0.5b",
            "--out", str(root / "run"), "--epochs", "3", "--batch", "1", "--held", "1", "--lr", "2e-3",
            "--threads", "2", "--json"]
    assert cli.main(args) == 0
    return root, args


def test_training_lowers_the_loss_and_records_what_it_trained_on(trained: tuple[Path, list[str]]) -> None:
    root, _ = trained
    record = json.loads((root / "run" / "record.json").read_text())
    losses = record["loss_by_epoch"]
    assert losses["3"] < losses["1"], losses
    assert record["base"]["sha256"] == REGISTRY["qwen2.5-coder-0.5b"].sha256
    assert record["data"]["training_area_only"] and "never on map2seq_unseen" in record["data"]["note"]
    assert record["data"]["trained_routes"] == 2 and len(record["data"]["held_out_ids"]) == 1
    assert [e["epoch"] for e in record["evaluations"]] == [0, 1, 2, 3]
    assert (root / "run" / "adapter.gguf").stat().st_size > 0
    assert json.loads((root / "run" / "adapter" / "adapter_config.json").read_text())["r"] == 8
    assert (root / "run" / "curves.png").read_bytes().startswith(b"\x89PNG")


def test_the_same_command_again_resumes_instead_of_retraining(
    trained: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, args = trained
    state = json.loads((root / "run" / "checkpoint" / "state.json").read_text())["progress"]
    capsys.readouterr()
    assert cli.main(args) == 0
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["resumed"] is True
    after = json.loads((root / "run" / "checkpoint" / "state.json").read_text())["progress"]
    assert len(after["losses"]) == len(state["losses"]) == 6  # 3 epochs x 2 routes, none trained again


def test_the_adapter_runs_with_navigate_lora(trained: tuple[Path, list[str]],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    need("llama_cpp")
    root, _ = trained
    data = str(write_street_dataset(root))
    capsys.readouterr()
    code = cli.main(["navigate", "--data", data, "--agent", "llm", "--shots", "0", "--model",
                     "llamacpp:qwen2.5-coder-0.5b", "--lora", str(root / "run" / "adapter.gguf"), "--threads", "2",
                     "--out", str(root / "episodes"), "--json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["n"] == 3
    (store,) = (root / "episodes").iterdir()
    assert "-lora_run" in store.name
    assert "#sha256:" in json.loads((store / "run.json").read_text())["config"]["lora"]


def test_rbl_learns_from_the_models_own_walks(trained: tuple[Path, list[str]]) -> None:
    """VELMA-RBL with lambda 1: the base model walks every route itself (it only goes forward) and learns the
    oracle's corrections, so its first route costs more than the same route teacher-forced (both start from
    the base: a fresh LoRA adds nothing)."""
    root, args = trained
    out = root / "rbl"
    rbl = [*args[: args.index("--out")], "--out", str(out), "--method", "rbl", "--mix", "1", "--epochs", "1",
           "--batch", "1", "--held", "1", "--threads", "2"]
    assert cli.main(rbl) == 0
    record = json.loads((out / "record.json").read_text())
    assert record["method"].startswith("VELMA-RBL") and record["settings"]["mix"] == 1.0
    first = {name: json.loads((root / name / "checkpoint" / "state.json").read_text())["progress"]["losses"][0]
             for name in ("run", "rbl")}
    assert first["run"]["route"] == first["rbl"]["route"]
    assert first["rbl"]["loss"] > first["run"]["loss"], first

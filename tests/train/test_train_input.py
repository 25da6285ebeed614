"""Bad input to `navigate train` is one line and exit code 2, before any model is loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

import situated.cli as cli
from fakes import write_street_dataset


@pytest.mark.parametrize(("extra", "needle"), [
    (["--method", "xyz"], "--method must be one of ft, rbl"),
    (["--split", "foo"], "--split must list dev, test or train"),
    (["--epochs", "0"], "--epochs must be at least 1"),
    (["--lr", "5"], "--lr must lie in (0, 1)"),
    (["--held", "3"], "too few to hold out 3"),
])
def test_bad_training_options_are_one_line_and_exit_2(
    extra: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = write_street_dataset(tmp_path, "map2seq_seen")
    (seen / "graph" / "nodes.txt").write_text((seen / "graph" / "nodes.txt").read_text().replace(",unseen", ",seen"))
    code = cli.main(["navigate", "train", "--data", str(seen), "--split", "dev", "--out", str(tmp_path / "o"),
                     "--base", str(tmp_path / "no-model"), *extra])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("error:") and "\n" not in err and needle in err, err


def test_unseen_data_is_never_trained_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unseen = write_street_dataset(tmp_path)
    assert cli.main(["navigate", "train", "--data", str(unseen), "--out", str(tmp_path / "o"), "--split", "dev"]) == 2
    assert "never unseen data" in capsys.readouterr().err

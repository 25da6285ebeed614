"""The papers' published numbers: transcribed as PROTOCOLS.md states them, cited, immutable, matched to runs."""

from __future__ import annotations

import re

import pytest

from fakes import ROOT
from situated.eval.systems.papers import PAPER_RESULTS
from situated.eval.systems.registry import SYSTEMS

PROTOCOLS = ROOT.parent / "shared" / "design" / "PROTOCOLS.md"


def test_rows_are_cited_unique_and_in_their_units() -> None:
    keys = [(r.paper, r.setting, r.model, r.split) for r in PAPER_RESULTS]
    assert len(keys) == len(set(keys))
    for row in PAPER_RESULTS:
        assert row.source and ("arXiv:" in row.source or "Autonomous Robots" in row.source)
        assert row.table or row.note, row  # where in the paper, or why it is not from a table
        if row.system in ("household", "tabletop"):
            names = {"success", "gcr", "exec"} if row.system == "household" else {"success", "exec", "plan_success"}
            assert set(row.metrics) == names and all(0 <= v <= 1 for v in row.metrics.values())
        elif row.system == "eai":
            assert set(row.metrics) == {"success"} and 0 <= row.metrics["success"] <= 100
        else:
            assert "tc" in row.metrics and 0 <= row.metrics["tc"] <= 100
    with pytest.raises(TypeError):
        PAPER_RESULTS[0].metrics["success"] = 1.0  # type: ignore[index]


def _protocol_rows(text: str) -> dict[str, tuple[float, ...]]:
    """ProgPrompt's environment-0 table in PROTOCOLS.md: setup → (SR, Exec, GCR)."""
    section = text.split("### Numbers to beat", 1)[1].split("###", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.match(r"\d", cells[1]):
            rows[cells[0]] = tuple(float(c.split("±")[0]) for c in cells[1:])
    return rows


def test_progprompt_rows_match_the_protocol_table() -> None:
    if not PROTOCOLS.is_file():
        pytest.skip(f"{PROTOCOLS} not found")
    text = PROTOCOLS.read_text()
    table = _protocol_rows(text)
    assert len(table) == 7
    env0 = [r for r in PAPER_RESULTS if r.split == "env0"]
    assert sorted((r.metrics["success"], r.metrics["exec"], r.metrics["gcr"]) for r in env0) == sorted(table.values())
    numbers = re.search(r"Environments 1 / 2 \(GPT-3\): SR (\d\.\d+) / (\d\.\d+), Exec (\d\.\d+) / "
                        r"(\d\.\d+), GCR (\d\.\d+) / (\d\.\d+)", text)
    assert numbers is not None
    sr1, sr2, ex1, ex2, gcr1, gcr2 = map(float, numbers.groups())
    for split, (sr, ex, gcr) in (("env1", (sr1, ex1, gcr1)), ("env2", (sr2, ex2, gcr2))):
        (row,) = SYSTEMS["household"].comparable(split)
        assert dict(row.metrics) == {"success": sr, "exec": ex, "gcr": gcr}


def test_velma_rows_match_the_protocol_table() -> None:
    if not PROTOCOLS.is_file():
        pytest.skip(f"{PROTOCOLS} not found")
    section = PROTOCOLS.read_text().split("### Numbers (unseen areas, TC %)", 1)[1].split("Finetuning:", 1)[0]
    columns = ["touchdown/dev", "map2seq/dev", "touchdown/test", "map2seq/test"]
    published = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and re.match(r"[\d–]", cells[1]):
            for split, cell in zip(columns, cells[1:], strict=True):
                if cell != "–":
                    published[(cells[0], split)] = float(cell.split()[0])
    ours = {r.split: r for r in PAPER_RESULTS if r.system == "navigation"}
    assert len(published) == sum(1 for r in PAPER_RESULTS if r.system == "navigation") == 16
    assert sorted(published.values()) == sorted(r.metrics["tc"] for r in PAPER_RESULTS if r.system == "navigation")
    assert set(ours) == set(columns)


def test_tabletop_rows_match_docs_tabletop() -> None:
    """The real-robot rows (§V-C) are the ones docs/tabletop.md compares the 1.5B run with."""
    docs = (ROOT / "docs" / "tabletop.md").read_text()
    row_pattern = r"\| paper[^|]*, (no distractors|with distractors) \| ([\d.]+ \| [\d.]+ \| [\d.]+) \|"
    found = dict(re.findall(row_pattern, docs))
    assert len(found) == 2
    config = {"planner": "progprompt_tabletop", "slip_probability": 0.0}
    for part, cells in found.items():
        (row,) = SYSTEMS["tabletop"].comparable(f"{SYSTEMS['tabletop'].split_of(config)}/{part}")
        assert [row.metrics[k] for k in ("success", "exec", "plan_success")] == [float(c) for c in cells.split("|")]
        assert row.agent == SYSTEMS["tabletop"].setting_of(config) and row.tasks == 4 and row.runs == 1


def test_runs_are_matched_by_system_and_split() -> None:
    household = {"split": "env2", "planner": "progprompt", "ablation": "no-comments"}
    assert SYSTEMS["household"].split_of(household) == "env2"
    assert SYSTEMS["household"].setting_of(household) == "no-comments"
    assert [r.split for r in SYSTEMS["household"].comparable("env2")] == ["env2"]
    # a household split the papers did not report is shown against environment 0, the paper's main table
    assert {r.split for r in SYSTEMS["household"].comparable("test_seen")} == {"env0"}
    navigation = {"dataset": "map2seq", "split": "dev", "agent": "forward"}
    rows = SYSTEMS["navigation"].comparable(SYSTEMS["navigation"].split_of(navigation))
    assert {r.split for r in rows} == {"map2seq/dev"} and len(rows) == 6
    assert [r.metrics for r in rows if r.agent == SYSTEMS["navigation"].setting_of(navigation)] == [
        {"tc": 0.8, "spd": 37.9, "kpa": 37.2}]
    assert SYSTEMS["navigation"].comparable("touchdown/train") == ()


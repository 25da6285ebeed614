"""`situated report` over stores the evaluation commands wrote: household runs replayed from the recorded model
calls (with and without grounded decoding), navigation runs on the small street dataset. Bad input is one line
and exit code 2; the stores are only read."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from fakes import CASSETTES, write_street_dataset
from situated.cli import main

CASSETTE = CASSETTES / "progprompt_qwen0.5b.jsonl"


@pytest.fixture(scope="module")
def household(progprompt_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two replayed evaluations of the first two env1 tasks: grounded decoding (the default) and --repairs 0."""
    root = tmp_path_factory.mktemp("household")
    stores = (root / "grounded", root / "open-loop")
    for out, extra in zip(stores, ([], ["--repairs", "0"]), strict=True):
        args = ["eval", "progprompt", "--data", str(progprompt_data), "--split", "env1", "--limit", "2",
                "--model", "llamacpp:qwen2.5-coder-0.5b", "--cassette", str(CASSETTE), "--cassette-mode", "replay",
                "--out", str(out), "--json", *extra]
        assert main(args) == 0
    return stores


@pytest.fixture(scope="module")
def navigation(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """`situated navigate --out DIR` for the gold and forward agents (each DIR holds its store one level down)."""
    root = tmp_path_factory.mktemp("navigation")
    data = write_street_dataset(root)
    outs = (root / "gold", root / "forward")
    for out, agent in zip(outs, ("gold", "forward"), strict=True):
        assert main(["navigate", "--data", str(data), "--agent", agent, "--out", str(out), "--json"]) == 0
    return outs


def last_json(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def fingerprint(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def test_household_report(household: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = [fingerprint(d) for d in household]
    out = tmp_path / "report.html"
    assert main(["report", *map(str, household), "--out", str(out), "--json", "--resamples", "200"]) == 0
    summary = last_json(capsys)
    assert [fingerprint(d) for d in household] == before  # read only: no lock file, nothing rewritten
    assert summary["system"] == "household" and summary["bytes"] == out.stat().st_size > 10_000
    assert [r["label"] for r in summary["runs"]] == ["grounded", "open-loop"]
    stored = [[json.loads(line) for line in (d / "episodes.jsonl").read_text().splitlines()] for d in household]
    for run, episodes in zip(summary["runs"], stored, strict=True):
        assert run["episodes"] == 2
        assert run["metrics"]["exec"]["mean"] == round(sum(e["metrics"]["exec"] for e in episodes) / 2, 4)
    exec_difference = next(d for d in summary["differences"] if d["metric"] == "exec")
    assert exec_difference["paired"] and exec_difference["low"] <= exec_difference["mean"] <= exec_difference["high"]
    tokens = [c["tokens"] for c in summary["cost"]]
    assert tokens == [sum(e["cost"]["tokens"] for e in episodes) for episodes in stored] and tokens[0] > tokens[1]
    html = out.read_text()
    assert "repairs (5 / 0)" in html and "ProgPrompt (Singh et al., ICRA 2023), Table III" in html
    assert "http://" not in html and "https://" not in html


def test_navigation_report_from_the_navigate_out_directories(navigation: tuple[Path, Path], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "nav.md"
    assert main(["report", *map(str, navigation), "--out", str(out), "--format", "md", "--maps", "2",
                 "--json"]) == 0
    summary = last_json(capsys)
    assert [r["label"] for r in summary["runs"]] == ["map2seq_dev_gold", "map2seq_dev_forward"]
    assert summary["runs"][0]["metrics"]["tc"]["mean"] == 1.0 and summary["maps"] == 2
    text = out.read_text()
    assert "## Route maps" in text and "| where the agent stopped |" in text
    assert summary["files"] == 1 + len(list((tmp_path / "nav_figures").iterdir()))


@pytest.mark.parametrize(("args", "message"), [
    (["{empty}"], "not a results directory"),
    (["{missing}"], "no such results directory"),
    (["{household}", "{navigation}"], "cannot compare runs of different systems"),
    (["{household}", "{household}"], "given twice"),
    (["{household}", "--format", "pdf"], "--format must be one of html, md"),
    (["{household}", "--maps", "-1"], "--maps must be >= 0"),
    (["{household}", "--out", "{empty}"], "found a directory"),
])
def test_bad_input_is_one_line_and_exit_2(household: tuple[Path, Path], navigation: tuple[Path, Path],
                                          tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                          message: str) -> None:
    (tmp_path / "empty").mkdir()
    places = {"empty": tmp_path / "empty", "missing": tmp_path / "missing", "household": household[0],
              "navigation": navigation[0]}
    argv = ["report", *(a.format(**places) for a in args)]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "r.html")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and message in err and "\n" not in err
    assert not (tmp_path / "r.html").exists()


def test_a_broken_store_names_its_file_and_line(household: tuple[Path, Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "run.json").write_text((household[0] / "run.json").read_text())
    (broken / "episodes.jsonl").write_text("{not json}\n")
    assert main(["report", str(broken), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert "episodes.jsonl: line 1" in err and "\n" not in err
    (broken / "episodes.jsonl").write_text("")  # an evaluation that has not finished an episode yet
    assert main(["report", str(broken), "--out", str(tmp_path / "r.html")]) == 2
    assert "no finished episodes yet" in capsys.readouterr().err


def test_eai_report_shows_sr_esr_errors_and_the_published_table(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """An EAI store (4 tasks replayed from the 1.5B model's recorded answers, judged by EAI's evaluator) renders
    like the others: SR and ESR with intervals, the error breakdown of its episodes, EAI's published SR rows."""
    pytest.importorskip("virtualhome_eval")
    store = tmp_path / "eai"
    assert main(["eval", "eai", "--limit", "4", "--model", "llamacpp:qwen2.5-coder-1.5b", "--cassette",
                 str(CASSETTES / "eai_open_1.5b.jsonl"), "--out", str(store), "--json"]) == 0
    run = last_json(capsys)
    out = tmp_path / "report.md"
    assert main(["report", str(store), "--out", str(out), "--format", "md", "--json", "--resamples", "200"]) == 0
    summary = last_json(capsys)
    assert summary["system"] == "eai" and summary["paper_rows"] == 4
    metrics = summary["runs"][0]["metrics"]
    assert metrics["success"]["mean"] * 100 == pytest.approx(run["sr"], abs=0.1)
    assert metrics["executable"]["mean"] * 100 == pytest.approx(run["esr"], abs=0.1)
    text = out.read_text()
    assert text.startswith("# EAI action sequencing evaluation report")
    assert "Error breakdown" in text and "missing step" in text
    assert "GPT-4o" in text and "61.6" in text and "| SR [95% CI] | ESR [95% CI] |" in text

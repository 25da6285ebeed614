"""`situated eval progprompt` and `situated plan` from the command line: bad input is one line and exit code 2;
an evaluation replayed from recorded model calls prints its table and a final JSON line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes import CASSETTES, ROOT, ScriptedLLM
from situated.cli import main

CASSETTE = CASSETTES / "progprompt_qwen0.5b.jsonl"


@pytest.mark.parametrize(("extra", "message"), [
    (["--ablation", "no-asserts"], "ablation"),
    (["--jobs", "2"], "--jobs must be 1"),
    (["--assert-check", "oracle"], "assert-check"),
    (["--split", "env9"], "split 'env9' not found"),
    (["--examples", "many"], "--examples must be fixed, retrieved or a number"),
    (["--examples", "retrieved", "--retriever", "tfidf"], "--retriever must be one of minilm, bm25"),
    (["--examples", "retrieved", "--k", "0"], "--k >= 1"),
    (["--goals", "--langprompt"], "--goals needs ProgPrompt"),
    (["--goals", "--repairs", "0"], "--goals needs grounded decoding"),
    (["--plan-tokens", "0"], "--plan-tokens"),
])
def test_bad_eval_options_end_in_one_line(progprompt_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                          extra: list[str], message: str) -> None:
    args = ["eval", "progprompt", "--data", str(progprompt_data), "--split", "env1",
            "--model", "llamacpp:qwen2.5-coder-0.5b", "--cassette", str(tmp_path / "none.jsonl"),
            "--cassette-mode", "record", "--out", str(tmp_path / "out"), *extra]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and message in err and "\n" not in err


def test_missing_data_dir(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["eval", "progprompt", "--data", str(tmp_path / "nope"), "--split", "env1"]) == 2
    assert "not found" in capsys.readouterr().err


def test_plan_with_bad_scene(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    scene = tmp_path / "scene.json"
    scene.write_text("{not json")
    assert main(["plan", "microwave salmon", "--scene", str(scene)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_eval_replayed_from_cassette(progprompt_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    if not CASSETTE.is_file():
        pytest.fail(f"cassette {CASSETTE} missing")
    args = ["eval", "progprompt", "--data", str(progprompt_data), "--split", "env1", "--limit", "2",
            "--model", "llamacpp:qwen2.5-coder-0.5b", "--cassette", str(CASSETTE), "--cassette-mode", "replay",
            "--out", str(tmp_path / "out"), "--json"]
    assert main(args) == 0
    out = capsys.readouterr().out
    summary = json.loads(out.strip().splitlines()[-1])
    assert list(summary)[:6] == ["sr", "sr_std", "gcr", "exec", "tasks", "runs"]
    assert summary["tasks"] == 2 and summary["runs"] == 1 and summary["unknown"] == 0
    # the default prompt: the 5 plans nearest to the task (MiniLM) among those naming the fewest objects the scene
    # lacks, grounded decoding with 5 repairs, walks to rooms and closed containers opened
    assert summary["variant"] == "progprompt-full-grounded5-minilm5-scene-rooms-open"
    assert "watch tv" in out
    # grounded decoding is on by default: statements the scene rejected were replaced, and each is recorded
    records = [json.loads(x) for x in (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()]
    assert summary["repairs"] == sum(len(r["details"]["rejected"]) for r in records) > 0
    assert all("is not possible" not in r["details"]["program"] for r in records)
    # A second run resumes: nothing is planned again, the same numbers come out.
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert again == summary
    lines = (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 2


def test_plan_prints_program_trace_and_goals(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from situated.cli import models

    plan = (ROOT / "examples" / "plans" / "microwave_salmon.py").read_text().split("():\n\t", 1)[1]

    llm = ScriptedLLM([plan])
    monkeypatch.setattr(models, "open_model", lambda *a, **k: llm)
    code = main(["plan", "microwave salmon", "--scene", str(ROOT / "examples" / "scenes" / "apartment.json"),
                 "--tasks", str(ROOT / "examples" / "tasks" / "apartment_tasks.json"),
                 "--examples-file", str(ROOT / "examples" / "plans")])
    out = capsys.readouterr().out
    assert code == 0
    assert "putin('salmon', 'microwave')" in out and "✓ switchon('microwave')" in out
    assert "goal conditions: 3/3" in out
    assert llm.prompts[0].endswith("def microwave_salmon():\n\t") and llm.calls[0]["grammar"]


def test_examples_as_a_number_is_the_fixed_choice(progprompt_data: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    """`--examples 3` (the flag as it was) is `--examples fixed --k 3`: same prompts, same replayed results,
    and the same results store resumes under either spelling."""
    args = ["eval", "progprompt", "--data", str(progprompt_data), "--split", "env1", "--limit", "1",
            "--model", "llamacpp:qwen2.5-coder-0.5b", "--cassette", str(CASSETTE), "--out", str(tmp_path / "o"),
            "--json"]
    assert main([*args, "--examples", "3", "--k", "7"]) == 0
    old = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert main([*args, "--examples", "fixed", "--k", "3"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == old
    assert main([*args, "--k", "2"]) == 2  # two examples would be another configuration: refused, not mixed
    assert "another configuration" in capsys.readouterr().err


def test_default_examples_are_retrieved_and_the_paper_s_set_up_stays_one_flag_away() -> None:
    from situated.eval.systems.household_run import example_choice

    assert example_choice(None, None, "minilm") == (5, "minilm")               # ProgPrompt's default
    assert example_choice("fixed", None, "minilm") == (3, None)                 # the paper's 3 fixed examples
    assert example_choice(None, None, "minilm", langprompt=True) == (3, None)   # the LangPrompt baseline as published
    assert example_choice("retrieved", 2, "bm25") == (2, "bm25")
    assert example_choice("4", None, "minilm") == (4, None)


def _programs(out: Path) -> dict[int, str]:
    records = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    return {r["run"]: r["details"]["program"] for r in records}


def test_sampled_runs_differ_a_rerun_repeats_them_and_greedy_runs_agree(
        progprompt_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`--runs 2 --temperature 0.8` (recorded from the real 0.5B model): the runs' plans differ, a rerun draws
    the same ones, and the summary shows mean ± std with the 95 % interval over tasks; greedy runs agree."""
    args = ["eval", "progprompt", "--data", str(progprompt_data), "--split", "env1", "--limit", "1",
            "--examples", "fixed", "--repairs", "0", "--model", "llamacpp:qwen2.5-coder-0.5b",
            "--cassette", str(CASSETTE), "--json"]
    sampled = [*args, "--runs", "2", "--temperature", "0.8"]
    assert main([*sampled, "--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["runs"] == 2 and summary["variant"].endswith("-t0.8")
    assert "T 0.8" in out and "95 % intervals over tasks: SR" in out
    for key in ("sr", "sr_std", "gcr_std", "exec_std", "sr_ci", "gcr_ci", "exec_ci"):
        assert key in summary
    assert summary["abandoned_per_split"] == {"env1": 0}
    first = _programs(tmp_path / "a")
    assert len(set(first.values())) > 1  # sampled runs write different plans
    assert main([*sampled, "--out", str(tmp_path / "b")]) == 0  # a rerun from scratch draws the same samples
    capsys.readouterr()
    assert _programs(tmp_path / "b") == first
    assert main([*args, "--runs", "2", "--out", str(tmp_path / "greedy")]) == 0
    greedy = _programs(tmp_path / "greedy")
    assert greedy[0] == greedy[1] and json.loads(capsys.readouterr().out.strip().splitlines()[-1])["sr_std"] == 0.0


def test_temperature_out_of_range_is_one_line(progprompt_data: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    assert main(["eval", "progprompt", "--data", str(progprompt_data), "--split", "env1", "--temperature", "3",
                 "--cassette", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "--temperature must be between 0 and 2" in err and "\n" not in err

"""`situated eval eai` end to end on recorded calls of the 1.5B model: EAI's own evaluator scores the answers, the
store resumes, and bad options are one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes import CASSETTES
from situated.cli import main

pytest.importorskip("virtualhome_eval")

CASSETTE = CASSETTES / "eai_open_1.5b.jsonl"
LIMIT = 20  # the cassette holds the first 20 scored tasks


def test_open_loop_scored_by_eais_evaluator_and_resumed(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "out"
    args = ["eval", "eai", "--limit", str(LIMIT), "--model", "llamacpp:qwen2.5-coder-1.5b",
            "--cassette", str(CASSETTE), "--out", str(out), "--json"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    summary = json.loads(printed.strip().splitlines()[-1])
    assert summary["tasks"] == LIMIT and summary["mode"] == "open loop" and summary["calls"] == LIMIT
    records = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == LIMIT and len({r["task"] for r in records}) == LIMIT
    # EAI's SR is the share of tasks its evaluator calls successful; ours per task must add up to the same
    assert summary["sr"] == pytest.approx(100 * sum(r["metrics"]["success"] for r in records) / LIMIT, abs=0.1)
    assert summary["esr"] == pytest.approx(100 * sum(r["metrics"]["executable"] for r in records) / LIMIT, abs=0.1)
    for r in records:  # every answer was parsed into EAI's step format, or its rejection says why
        assert r["details"]["protocol"] == "1.0.5" and (r["details"]["steps"] or r["details"]["error_type"])
    assert f"EAI's evaluator: SR {summary['sr']}  ESR {summary['esr']}" in printed
    assert main(args) == 0  # a rerun plans nothing again and reports the same
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["sr"] == summary["sr"]


def test_worker_processes_give_the_same_answers_and_verdicts(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`--executor processes --jobs 2`: two worker processes replay the recorded calls; the store holds what one
    process writes, task by task, and EAI's evaluator over all answers says the same."""
    base = ["eval", "eai", "--limit", "4", "--model", "llamacpp:qwen2.5-coder-1.5b", "--cassette", str(CASSETTE),
            "--json"]
    assert main([*base, "--out", str(tmp_path / "one")]) == 0
    one = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert main([*base, "--out", str(tmp_path / "two"), "--executor", "processes", "--jobs", "2"]) == 0
    two = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert {k: v for k, v in one.items() if k not in ("out", "seconds")} == \
        {k: v for k, v in two.items() if k not in ("out", "seconds")}

    def by_task(out: Path) -> dict[str, tuple]:
        records = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
        return {r["task"]: (r["details"]["answer"], r["metrics"]) for r in records}

    assert by_task(tmp_path / "one") == by_task(tmp_path / "two") and len(by_task(tmp_path / "two")) == 4


@pytest.mark.parametrize(("option", "value", "needle"), [
    ("--task", "goal_interpretation", "--task"), ("--protocol", "2.0", "protocol"), ("--limit", "0", "--limit"),
    ("--repairs", "-1", "--repairs"), ("--also-score", "1.0.5", "--also-score"), ("--also-score", "2", "protocol")])
def test_bad_options_are_one_line(option: str, value: str, needle: str, capsys: pytest.CaptureFixture,
                                  tmp_path: Path) -> None:
    assert main(["eval", "eai", option, value, "--out", str(tmp_path / "o"), "--cassette", str(CASSETTE)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err and needle in err, err


def test_hints_need_the_grounded_check(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    assert main(["eval", "eai", "--hints", "--out", str(tmp_path / "o"), "--cassette", str(CASSETTE)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err and "--repairs" in err, err
    assert not (tmp_path / "o").exists()


def test_approach_is_part_of_the_configuration(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    out = tmp_path / "o"
    base = ["eval", "eai", "--limit", "1", "--model", "llamacpp:qwen2.5-coder-1.5b", "--cassette", str(CASSETTE),
            "--out", str(out), "--json"]
    assert main(base) == 0          # an open-loop store (its configuration as before: no approach key)...
    capsys.readouterr()
    assert main([*base, "--approach"]) == 2   # ...is not resumed by an approach run
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err, err


def test_shots_are_bounded_and_part_of_the_configuration(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert main(["eval", "eai", "--shots", "9", "--out", str(out), "--cassette", str(CASSETTE)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err and "--shots" in err, err
    base = ["eval", "eai", "--limit", "1", "--model", "llamacpp:qwen2.5-coder-1.5b", "--cassette", str(CASSETTE),
            "--out", str(out), "--json"]
    assert main(base) == 0          # a store without examples (its configuration as before: no shots key)...
    capsys.readouterr()
    assert main([*base, "--shots", "1"]) == 2   # ...is not resumed by a run with examples
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err, err


def test_worked_examples_get_a_context_that_holds_the_longest_task(monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture,
                                                                  tmp_path: Path) -> None:
    """The longest task's prompt with both examples is 8,310 tokens (601_2): over the default 8,192, so the run
    crashed there; with --shots the embedded model gets SHOTS_CONTEXT."""
    from fakes import ScriptedLLM
    from situated.datasets.eai_actions import load_tasks
    from situated.eval.executors import ModelSpec
    from situated.eval.systems import eai_run as cli
    from situated.planners.eai import model_prompt

    opened: list[int | None] = []
    answer = '{\n  "WALK": ["floor_lamp", "1000"],\n  "SWITCHON": ["floor_lamp", "1000"]\n}'

    def fake_open(spec: ModelSpec) -> ScriptedLLM:
        opened.append(spec.n_ctx)
        return ScriptedLLM([answer], uri=spec.uri)

    monkeypatch.setattr(ModelSpec, "open", fake_open)
    monkeypatch.setattr("situated.llm.models.ensure_model", lambda *args, **kwargs: None)  # no weights needed
    base = ["eval", "eai", "--limit", "1", "--model", "llamacpp:qwen2.5-coder-1.5b", "--json"]
    assert main([*base, "--shots", "2", "--out", str(tmp_path / "shots")]) == 0
    assert main([*base, "--out", str(tmp_path / "none")]) == 0
    assert opened == [cli.SHOTS_CONTEXT, None]
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["shots"] == 0
    longest = max(load_tasks(), key=lambda t: len(t.prompt("1.0.5")))
    prompt = model_prompt(ScriptedLLM([], uri="llamacpp:qwen2.5-coder-1.5b"), longest, "1.0.5", shots=2)
    assert len(prompt) / 2.5 < cli.SHOTS_CONTEXT - 768     # generous: Qwen averages over 3 characters a token


def test_the_same_answers_are_also_scored_by_the_104_evaluator(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """`--also-score 1.0.4`: the run's 1.0.5 answers, rewritten names only, judged by the published table's
    evaluator (no model call); where every named object is the last listed of its name the verdicts agree."""
    from situated.datasets.eai_actions import load_tasks
    from situated.eval.systems.eai_evaluator import isolated_env_dir

    if not (isolated_env_dir() / "bin" / "python").exists():
        pytest.skip("the 1.0.4 evaluator is not set up: sh benchmarks/eai_setup_104.sh")
    out = tmp_path / "o"
    args = ["eval", "eai", "--limit", "6", "--model", "llamacpp:qwen2.5-coder-1.5b", "--cassette", str(CASSETTE),
            "--out", str(out), "--json", "--also-score", "1.0.4"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    summary = json.loads(printed.strip().splitlines()[-1])
    also = summary["also_scored"]
    assert also["evaluator"] == "eai-eval 1.0.4" and also["tasks"] == 6 and summary["tasks"] == 6
    assert f"The same answers under 1.0.4: SR {also['sr']}  ESR {also['esr']}" in printed
    written = json.loads(next((out / "evaluator-1.0.4").rglob("*_outputs.json")).read_text())
    tasks = {t.task_id: t for t in load_tasks()}
    records = {r["task"]: r for r in map(json.loads, (out / "episodes.jsonl").read_text().splitlines())}
    info = json.loads((out / "evaluator-1.0.4" / "per_task.json").read_text())
    compared = 0
    for item in written:
        task, text = tasks[item["identifier"]], item["llm_output"]
        assert not any(char.isdigit() for char in text)      # names only
        steps = records[item["identifier"]]["details"]["steps"]
        ids = [int(s.rsplit("(", 1)[1].rstrip(")")) for s in steps]
        if all(task.names_only_id(task.name_of(i)) == i for i in ids):   # nothing changes object: same verdict
            record, verdict = records[item["identifier"]], info[item["identifier"]]
            assert (verdict["executable"], verdict["error_type"]) == \
                (record["metrics"]["executable"], record["details"]["error_type"])
            compared += 1
    assert compared > 0   # the recorded answers include tasks whose objects keep their meaning

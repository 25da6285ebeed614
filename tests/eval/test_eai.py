"""EAI's own evaluator run on scripted answers: metrics, the subset that divides by zero, the identical-plan trap,
names-only vs name+id, and the isolated 1.0.4 evaluator (skipped where it is not set up)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from situated.datasets.eai_actions import load_tasks
from situated.errors import DataError, SituatedError
from situated.eval.systems.eai_evaluator import evaluate, evaluator_python, isolated_env_dir, run_eai, write_answers
from situated.llm.base import Completion
from situated.llm.chat_template import RAW, ChatTemplate
from situated.planners.eai import Step, convert_answer, format_answer

pytest.importorskip("virtualhome_eval")

GOOD = '{\n  "WALK": ["floor_lamp", "1000"],\n  "SWITCHON": ["floor_lamp", "1000"]\n}'   # 11_1: turn on light
NO_WALK = '{\n  "SWITCHON": ["floor_lamp", "1000"]\n}'
KEYS = {"sr", "esr", "tasks", "successes", "executable", "parsing", "hallucination", "predicate_argument_number",
        "wrong_order", "missing_step", "affordance", "additional_step", "state_goal", "relation_goal",
        "action_goal", "total_goal", "identical_to_gold", "goal_check_identical", "protocol", "evaluator"}


@dataclass
class _TaskLLM:
    texts: list[str]
    uri: str = "scripted"
    chat_template: ChatTemplate = RAW

    def complete(self, prompt: str, **options: object) -> Completion:
        return Completion(self.texts.pop(0), "stop", 10, 10)

    def json(self, messages: list[dict], schema: dict, **options: object) -> object:
        raise AssertionError("not used")

    def count_tokens(self, text: str) -> int:
        return 1


@pytest.fixture(scope="module")
def tasks():
    return {t.task_id: t for t in load_tasks()}


def test_scripted_answers_through_eais_evaluator(tasks, tmp_path: Path) -> None:
    """Answers planned by a scripted model: one succeeds, one misses a step, one has two goals, one half done."""
    answers = {
        "11_1": GOOD,
        "120_1": '{\n  "WALK": ["light", "411"],\n  "SWITCHON": ["light", "411"]\n}',   # 245 stays off
        "125_2": NO_WALK.replace("floor_lamp", "computer").replace("1000", "417"),
        "150_2": '{\n  "WALK": ["bathroom", "1"]\n}',
    }
    llm = _TaskLLM(list(answers.values()))
    run = run_eai(llm, [tasks[k] for k in answers], "1.0.5", workdir=tmp_path)
    assert [p.text for p in run.plans] == list(answers.values())
    assert run.cost()["calls"] == 4 and run.cost()["calls_per_task"] == 1.0
    result = run.evaluation
    m = result.metrics
    assert m.keys() >= KEYS
    assert m["tasks"] == 4 and m["successes"] == 1 and m["sr"] == 25.0
    assert m["executable"] == 3 and m["esr"] == 75.0 and m["missing_step"] == 25.0
    assert m["hallucination"] == m["parsing"] == 0.0
    assert m["relation_goal"] is None   # no edge goal in this subset: EAI's own summary divides by zero here
    assert result.summary is None
    assert result.per_task["125_2"]["error_type"] == "missing_step"
    answers_file = tmp_path / "responses" / "situated" / "virtualhome" / "action_sequencing" / "situated_outputs.json"
    assert answers_file.is_file()


def test_metrics_equal_eais_summary_when_it_writes_one(tasks, tmp_path: Path) -> None:
    """A subset with node, edge and action goals: EAI writes its summary, and our percentages are its numbers."""
    picked = [t for t in tasks.values() if t.action_goals][:2] + [t for t in tasks.values() if t.edge_goals][:2]
    picked.append(tasks["11_1"])
    answers = {t.task_id: GOOD if t.task_id == "11_1" else format_answer(
        [Step("WALK", (o.name,), (o.id,)) for o in t.objects if o.name != "character"][:2], "1.0.5") for t in picked}
    result = evaluate(answers, "1.0.5", workdir=tmp_path)
    summary = result.summary
    assert summary is not None
    goals, trajectory = summary["goal_evaluation"], summary["trajectory_evaluation"]
    m = result.metrics
    assert m["sr"] == goals["task_success_rate"] and m["total_goal"] == goals["total_goal"]
    assert m["state_goal"] == goals["state_goal"] and m["action_goal"] == goals["action_goal"]
    assert round(m["esr"], 1) == trajectory["execution_success_rate"]
    assert m["missing_step"] == trajectory["runtime_error"]["missing_step"]
    assert m["affordance"] == trajectory["runtime_error"]["affordance_error"]
    assert m["hallucination"] == trajectory["grammar_error"]["hallucination"]
    saved = json.loads((result.output_dir / "summary.json").read_text())
    assert saved == summary


def test_in_process_and_subprocess_agree(tasks, tmp_path: Path) -> None:
    answers = {"11_1": GOOD, "120_1": NO_WALK}
    a = evaluate(answers, "1.0.5", workdir=tmp_path / "a").metrics
    b = evaluate(answers, "1.0.5", workdir=tmp_path / "b", in_process=True).metrics
    assert a == b and a["sr"] == 50.0


@pytest.mark.parametrize("in_process", [False, True])
def test_model_text_reaches_eais_evaluator_only_as_data(tasks, tmp_path: Path, in_process: bool) -> None:
    """EAI's evaluator runs in a subprocess with our code and argv of paths; answers go to it in a file, which it
    reads with a regex and json.loads (its `eval` calls read the dataset's goal strings, in functions action
    sequencing does not call). Python written in an answer is scored as a bad answer and never runs."""
    marker = tmp_path / "ran"
    code = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    answers = {
        "11_1": code,                                                  # the whole answer is code
        "120_1": '{\n  "WALK": [' + code + "]\n}",                    # code as an argument list
        "125_2": GOOD[:-1] + f',\n  "WALK": ["{code}", "1000"]\n}}',   # code as an object name
    }
    result = evaluate(answers, "1.0.5", workdir=tmp_path / "eval", in_process=in_process)
    assert not marker.exists()
    assert result.metrics["tasks"] == 3 and result.metrics["successes"] == 0
    assert result.metrics["parsing"] + result.metrics["hallucination"] > 0


def test_names_only_answers_are_parse_errors_to_105(tasks) -> None:
    old = convert_answer(GOOD, tasks["11_1"], "1.0.5", "1.0.4")
    m = evaluate({"11_1": old}, "1.0.5").metrics
    assert m["parsing"] == 100.0 and m["sr"] == 0.0


def test_a_plan_identical_to_the_ground_truth_is_never_goal_checked(tasks) -> None:
    """EAI's trap: `actions == gd_actions` counts the plan executable and skips the goal check. The ground-truth
    program is read here only to build that one answer (never for prompting)."""
    from situated.datasets.eai import eai_root, read_eai_program

    root = eai_root()
    scene = "TrimmedTestScene1_graph"
    program = read_eai_program(root, scene, root / "executable_programs" / scene / "results_intentions_march-13-18"
                               / "file11_1.txt")
    task = tasks["11_1"]
    gold = format_answer([Step(s.action.upper(), tuple(task.name_of(i) for i in s.ids), s.ids)
                          for s in program.steps], "1.0.5")
    eai = evaluate({"11_1": gold}, "1.0.5").metrics
    assert eai["identical_to_gold"] == 1 and eai["esr"] == 100.0 and eai["sr"] == 0.0
    fixed = evaluate({"11_1": gold}, "1.0.5", goal_check_identical=True).metrics
    assert fixed["sr"] == 100.0 and fixed["goal_check_identical"] is True


def test_write_answers_and_bad_inputs(tmp_path: Path) -> None:
    path = write_answers({"11_1": GOOD}, tmp_path, "m1")
    assert json.loads(path.read_text()) == [{"identifier": "11_1", "llm_output": GOOD}]
    with pytest.raises(DataError, match="plain file name"):
        write_answers({"11_1": GOOD}, tmp_path, "../x")
    with pytest.raises(DataError, match="no answers"):
        evaluate({}, "1.0.5")
    with pytest.raises(DataError, match="unknown EAI protocol"):
        evaluate({"11_1": GOOD}, "2.0")
    with pytest.raises(DataError, match=r"eai_setup_104\.sh"):
        evaluator_python("1.0.4", tmp_path / "nowhere")


def _isolated() -> Path:
    env = isolated_env_dir()
    if not (env / "bin" / "python").exists():
        pytest.skip(f"the 1.0.4 evaluator is not set up ({env}): sh benchmarks/eai_setup_104.sh")
    return env


def test_isolated_104_evaluator_scores_names_only_answers(tasks) -> None:
    _isolated()
    lamp, lights = tasks["11_1"], tasks["120_1"]
    answers = {
        "11_1": convert_answer(GOOD, lamp, "1.0.5", "1.0.4"),
        # a bare "light" is the last listed light (245): switching it on leaves 411 off
        "120_1": '{\n  "WALK": ["light"],\n  "SWITCHON": ["light"]\n}',
    }
    result = evaluate(answers, "1.0.4")
    m = result.metrics
    assert m["evaluator"] == "eai-eval 1.0.4" and m["tasks"] == 2
    assert m["successes"] == 1 and m["executable"] == 2
    assert result.per_task["120_1"]["actions"] == [f"[WALK] <light> ({lights.names_only_id('light')})",
                                                  f"[SWITCHON] <light> ({lights.names_only_id('light')})"]
    # the same plans with ids score the same under 1.0.5
    same = {"11_1": GOOD, "120_1": '{\n  "WALK": ["light", "245"],\n  "SWITCHON": ["light", "245"]\n}'}
    m105 = evaluate(same, "1.0.5").metrics
    assert (m105["sr"], m105["esr"]) == (m["sr"], m["esr"])


def test_a_105_answer_is_not_scored_by_the_104_evaluator(tasks) -> None:
    _isolated()
    m = evaluate({"11_1": GOOD}, "1.0.4").metrics
    assert m["hallucination"] == 100.0 and m["sr"] == 0.0   # "1000" is read as an object name


def test_a_grounded_run_records_the_approach_grammar_of_its_first_answer(tasks, tmp_path: Path) -> None:
    """`--approach --repairs N`: the store says the approach grammar wrote the first answers only, so neither an
    open-loop approach store nor a plain grounded store is resumed by it."""
    from situated.eval.systems.eai_episodes import evaluate_eai
    from situated.planners.eai import APPROACH, APPROACH_FIRST

    out, one = tmp_path / "store", [tasks["11_1"]]
    episodes, verdict = evaluate_eai(one, _TaskLLM([GOOD]), "1.0.5", repairs=2, out=out, config={}, approach=True,
                                     workdir=tmp_path / "eval")
    assert verdict.metrics["successes"] == 1 and episodes[0].details["mode"] == "grounded"
    assert episodes[0].details["approach"] is True and episodes[0].details["repairs"] == 0
    config = json.loads((out / "run.json").read_text())["config"]
    assert config["approach"] == APPROACH_FIRST != APPROACH and config["repairs"] == 2
    for repairs, approach in ((2, False), (0, True)):
        with pytest.raises(DataError):
            evaluate_eai(one, _TaskLLM([GOOD]), "1.0.5", repairs=repairs, out=out, config={}, approach=approach,
                         workdir=tmp_path / "eval")


def test_a_grounded_run_with_hints_is_scored_with_the_inserted_steps_and_kept_apart(tasks, tmp_path: Path) -> None:
    """`--hints`: the step the private scene put before a failing step is in the answer EAI scores and in the
    episode's record; a plain grounded store is not resumed by a run with hints."""
    from situated.eval.systems.eai_episodes import evaluate_eai

    out, one = tmp_path / "store", [tasks["11_1"]]
    walked_elsewhere = '{\n  "WALK": ["bedroom", "67"],\n  "SWITCHON": ["floor_lamp", "1000"]\n}'
    episodes, verdict = evaluate_eai(one, _TaskLLM([walked_elsewhere]), "1.0.5", repairs=2, out=out, config={},
                                     hints=True, workdir=tmp_path / "eval")
    assert verdict.metrics["successes"] == 1 and episodes[0].details["repairs"] == 0
    assert episodes[0].details["inserted"] == [
        "step 2: [WALK] <floor_lamp> (1000) before [SWITCHON] <floor_lamp> (1000)"]
    assert json.loads((out / "run.json").read_text())["config"]["hints"] is True
    with pytest.raises(DataError):
        evaluate_eai(one, _TaskLLM([walked_elsewhere]), "1.0.5", repairs=2, out=out, config={},
                     workdir=tmp_path / "eval")
    with pytest.raises(SituatedError, match="--repairs"):
        evaluate_eai(one, _TaskLLM([GOOD]), "1.0.5", repairs=0, out=None, config={}, hints=True,
                     workdir=tmp_path / "eval")

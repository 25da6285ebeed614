"""Running EAI's own action-sequencing evaluator on answers, and reading its metrics.

EAI's evaluator (`virtualhome_eval.evaluation.action_sequencing.scripts.evaluate_results.evaluate_results`)
reads `<responses>/virtualhome/action_sequencing/<model>_outputs.json` (a list of `{"identifier",
"llm_output"}`), executes each answer on its evolving graph and writes `summary.json` and `error_info.json`.
Two versions matter:

- 1.0.5 (the project's venv; name+id answers): run by the venv's own Python, in a subprocess (default) or in
  process.
- 1.0.4 (names-only answers, the published numbers): run by the Python of an isolated environment,
  `benchmarks/eai_setup_104.sh` (default location `isolated_env_dir()`), always in a subprocess.

Both run `_run_evaluator` below (its source is sent to the subprocess: it needs only the standard library and
the installed `virtualhome_eval`). It calls EAI's function unchanged, with three hooks that do not change its
verdicts: the counters are read from its frame when it writes `summary.json` (or when it divides by zero: it
does for a subset without action, edge or node goals), and plans identical to EAI's ground truth are counted
(`identical_to_gold`; such a plan is counted executable but never goal-checked, so it can never succeed).
`goal_check_identical=True` changes exactly that: the comparison never matches, so such a plan is executed and
goal-checked like any other. Subprocesses run with PYTHONHASHSEED=0: the evaluator turns the action goals into a
`set`, so their order, which its ordered action-goal check depends on, follows the hash seed.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from situated.datasets.eai_actions import check_protocol
from situated.errors import DataError

ISOLATED_VERSION = "1.0.4"
RESULT_MARK = "@@situated-eai-result@@ "
HASH_SEED = "0"
SETUP_COMMAND = "sh benchmarks/eai_setup_104.sh"

RATE_KEYS: tuple[tuple[str, str], ...] = (
    ("parsing", "all_parsing_wrong"),
    ("hallucination", "all_hallucination"),
    ("predicate_argument_number", "all_parameter_wrong"),
)
"""Grammar errors: our key, the evaluator's counter (its summary names them the same)."""

RUNTIME_KEYS: tuple[tuple[str, int], ...] = (
    ("wrong_order", 0), ("missing_step", 1), ("affordance", 2), ("additional_step", 4),
)
"""Runtime errors: our key (the evaluator's summary name, `affordance_error` shortened), its error code."""

GOAL_KEYS: tuple[tuple[str, str, str], ...] = (
    ("state_goal", "all_matched_node", "all_node_goals"),
    ("relation_goal", "all_matched_edge", "all_edge_goals"),
    ("action_goal", "all_matched_action", "all_action_goals"),
    ("total_goal", "all_matched_all", "all_goals"),
)


@dataclass(frozen=True)
class EaiEvaluation:
    """EAI's verdicts on a set of answers: `metrics` (percentages, as EAI reports them, plus counts),
    `per_task` (EAI's `error_info`: executable, error_type, error_action, actions), the official `summary`
    (None when the evaluator could not write one) and where its output went."""

    metrics: dict[str, Any]
    per_task: dict[str, Any] = field(repr=False)
    summary: dict[str, Any] | None = field(repr=False)
    output_dir: Path


def isolated_env_dir() -> Path:
    """Where `benchmarks/eai_setup_104.sh` puts the 1.0.4 evaluator: `<user cache>/eai-eval-1.0.4`."""
    root = os.environ.get("SITUATED_CACHE_DIR") or platformdirs.user_cache_dir("situated")
    return Path(root) / f"eai-eval-{ISOLATED_VERSION}"


def evaluator_python(protocol: str, env_dir: Path | None = None) -> Path:
    """The Python that runs EAI's evaluator for `protocol`; DataError with the setup command when missing."""
    check_protocol(protocol)
    if protocol == "1.0.5":
        try:
            version = importlib.metadata.version("eai-eval")
        except importlib.metadata.PackageNotFoundError:
            version = None
        if version != "1.0.5":
            raise DataError(f"the 1.0.5 evaluator needs eai-eval==1.0.5 in this environment (found {version}): "
                            "pip install --no-deps eai-eval==1.0.5")
        return Path(sys.executable)
    env_dir = isolated_env_dir() if env_dir is None else Path(env_dir)
    python = env_dir / "bin" / "python"
    if not python.exists():
        raise DataError(f"{python}: the 1.0.4 evaluator's isolated environment is missing; create it with "
                        f"{SETUP_COMMAND} {env_dir}")
    return python


def write_answers(answers: Mapping[str, str], responses_dir: Path, model_name: str = "situated") -> Path:
    """Write answers (task id → answer text) where EAI's evaluator reads them; returns the file."""
    if not model_name or any(c in model_name for c in "/\\") or model_name.startswith("."):
        raise DataError(f"model name {model_name!r}: must be a plain file name")
    path = Path(responses_dir) / "virtualhome" / "action_sequencing" / f"{model_name}_outputs.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    items = [{"identifier": task_id, "llm_output": text} for task_id, text in answers.items()]
    path.write_text(json.dumps(items, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _run_evaluator(args: dict) -> dict:
    """Run EAI's action-sequencing evaluator unchanged but for read-only hooks; returns its verdicts and counters.

    Self-contained (standard library + virtualhome_eval): its source also runs in the isolated environment.
    """
    import importlib.metadata as metadata
    import json as jsonlib
    import os as oslib
    import sys as syslib
    import types

    import virtualhome_eval
    from virtualhome_eval.evaluation.action_sequencing.scripts import evaluate_results as er

    root = oslib.path.dirname(virtualhome_eval.__file__)
    target = er.evaluate_results.__code__
    seen: dict = {"gold": None, "file": None, "identical": [], "counters": None}

    class NeverEqual(list):
        __hash__ = None  # type: ignore[assignment]

        def __eq__(self, other: object) -> bool:
            return False

        def __ne__(self, other: object) -> bool:
            return True

    def construct_planner(*a, **k):
        out = original_planner(*a, **k)
        seen["gold"], seen["file"] = list(out[2]), k.get("script_id")
        if args["goal_check_identical"]:
            out = (out[0], out[1], NeverEqual(out[2]), *out[3:])
        return out

    def json_to_action(*a, **k):
        out = original_json_to_action(*a, **k)
        if out == seen["gold"]:
            seen["identical"].append(seen["file"])
        return out

    def frame_counters(frame) -> dict:
        names = ("program_num", "all_parsing_wrong", "all_hallucination", "all_parameter_wrong",
                 "all_executable_plan", "all_correct_plan", "all_matched_node", "all_matched_edge",
                 "all_matched_action", "all_matched_all", "all_node_goals", "all_edge_goals", "all_action_goals",
                 "all_goals", "error_code_to_number", "error_info")
        return {n: frame.f_locals.get(n) for n in names}

    def dump(obj, fp, *a, **k):
        frame = syslib._getframe(1)
        if frame.f_code is target and frame.f_locals.get("model_name") == args["model"] \
                and seen["counters"] is None:
            seen["counters"] = frame_counters(frame)
        return jsonlib.dump(obj, fp, *a, **k)

    proxy = types.SimpleNamespace(**{n: getattr(jsonlib, n) for n in dir(jsonlib) if not n.startswith("__")})
    proxy.dump = dump
    original_planner, original_json_to_action, original_json = er.construct_planner, er.json_to_action, er.json
    er.construct_planner, er.json_to_action, er.json = construct_planner, json_to_action, proxy

    class Args:
        pass

    ns = Args()
    ns.dataset = "virtualhome"
    ns.llm_response_path = args["responses"]
    ns.resource_dir = oslib.path.join(root, "resources")
    ns.dataset_dir = oslib.path.join(root, "dataset")
    ns.evaluation_dir = oslib.path.join(root, "evaluation")
    ns.output_dir = args["output"]
    ns.scene_id = 1
    ns.num_workers = 1
    summary, crash = None, None
    try:
        results = er.evaluate_results(ns)
        summary = results[args["model"]][0]
    except ZeroDivisionError as exc:
        crash = f"ZeroDivisionError: {exc}"
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code is target:
                seen["counters"] = frame_counters(tb.tb_frame)
            tb = tb.tb_next
    finally:
        er.construct_planner, er.json_to_action, er.json = original_planner, original_json_to_action, original_json
    counters = seen["counters"]
    if counters is None:
        raise RuntimeError(f"no counters read from the evaluator ({crash})")
    counters["error_code_to_number"] = {str(k): v for k, v in counters["error_code_to_number"].items()}
    return {"version": metadata.version("eai-eval"), "summary": summary, "counters": counters,
            "identical": seen["identical"], "crash": crash}


def metrics_from(result: Mapping[str, Any], protocol: str, goal_check_identical: bool) -> dict[str, Any]:
    """EAI's percentages from the evaluator's counters (as its summary computes them, 4 decimals; None where the
    subset has nothing to divide by), with the counts beside them."""
    c = result["counters"]
    n = c["program_num"] or 0

    def pct(part: int, whole: int) -> float | None:
        return round(100.0 * part / whole, 4) if whole else None

    metrics: dict[str, Any] = {
        "sr": pct(c["all_correct_plan"], n),
        "esr": pct(c["all_executable_plan"], n),
        "tasks": n,
        "successes": c["all_correct_plan"],
        "executable": c["all_executable_plan"],
    }
    for key, counter in RATE_KEYS:
        metrics[key] = pct(c[counter], n)
    codes = c["error_code_to_number"]
    for key, code in RUNTIME_KEYS:
        metrics[key] = pct(codes.get(str(code), 0), n)
    for key, matched, total in GOAL_KEYS:
        metrics[key] = pct(c[matched], c[total])
    metrics.update({
        "identical_to_gold": len(result["identical"]),
        "goal_check_identical": goal_check_identical,
        "protocol": protocol,
        "evaluator": f"eai-eval {result['version']}",
    })
    return metrics


def evaluate(answers: Mapping[str, str], protocol: str = "1.0.5", *, workdir: Path | None = None,
             model_name: str = "situated", in_process: bool = False, goal_check_identical: bool = False,
             env_dir: Path | None = None, timeout: float | None = None) -> EaiEvaluation:
    """Score `answers` (task id → answer text in `protocol`'s format) with EAI's own evaluator.

    `workdir` receives `responses/<model_name>/` (the answers file) and `output/<model_name>/` (EAI's
    summary.json, error_info.json); a temporary directory when None. `in_process=True` (1.0.5 only) runs it in
    this interpreter: its action-goal order then follows this process's PYTHONHASHSEED. DataError when the
    evaluator is missing or fails.
    """
    check_protocol(protocol)
    if not answers:
        raise DataError("no answers to evaluate")
    if in_process and protocol != "1.0.5":
        raise DataError("only the 1.0.5 evaluator (this environment's) runs in process; 1.0.4 runs isolated")
    python = evaluator_python(protocol, env_dir)
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="situated-eai-") as tmp:
            return _evaluate(answers, protocol, Path(tmp), model_name, in_process, goal_check_identical,
                             python, timeout)
    return _evaluate(answers, protocol, Path(workdir), model_name, in_process, goal_check_identical, python, timeout)


def _evaluate(answers: Mapping[str, str], protocol: str, workdir: Path, model_name: str, in_process: bool,
              goal_check_identical: bool, python: Path, timeout: float | None) -> EaiEvaluation:
    # one responses folder per model name: EAI evaluates every `*_outputs.json` it finds there
    responses, output = workdir / "responses" / model_name, workdir / "output"
    answers_file = write_answers(answers, responses, model_name)
    args = {"responses": str(responses), "output": str(output), "model": model_name,
            "goal_check_identical": goal_check_identical}
    result = _run_here(args) if in_process else _run_subprocess(python, args, workdir, answers_file, timeout)
    expected = protocol
    if result["version"] != expected:
        raise DataError(f"{python}: runs eai-eval {result['version']}, the {protocol} protocol needs {expected}")
    counters = result["counters"]
    return EaiEvaluation(
        metrics=metrics_from(result, protocol, goal_check_identical),
        per_task=dict(counters.get("error_info") or {}),
        summary=result["summary"],
        output_dir=output / model_name,
    )


def _run_here(args: dict) -> dict:
    try:
        result = _run_evaluator(args)
    except ImportError as exc:
        raise DataError(f"EAI's evaluator cannot be imported ({exc}): pip install --no-deps eai-eval==1.0.5") from None
    return json.loads(json.dumps(result))   # the same plain data a subprocess returns


def _run_subprocess(python: Path, args: dict, workdir: Path, answers_file: Path, timeout: float | None) -> dict:
    source = textwrap.dedent(inspect.getsource(_run_evaluator))
    code = (f"{source}\nimport json, sys\nresult = _run_evaluator(json.loads(sys.argv[1]))\n"
            f"print({RESULT_MARK!r} + json.dumps(result))\n")
    env = {**os.environ, "PYTHONHASHSEED": HASH_SEED}
    env.pop("PYTHONPATH", None)   # the isolated evaluator must not see this project's packages
    try:
        proc = subprocess.run([str(python), "-c", code, json.dumps(args)], cwd=workdir, env=env, text=True,
                              capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise DataError(f"{answers_file}: EAI's evaluator did not finish within {timeout} s") from None
    except OSError as exc:
        raise DataError(f"{python}: cannot run EAI's evaluator ({exc.strerror})") from None
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_MARK):
            return json.loads(line[len(RESULT_MARK):])
    last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    raise DataError(f"{answers_file}: EAI's evaluator failed (exit {proc.returncode}): {last}")


@dataclass(frozen=True)
class EaiRun:
    """Plans for a set of tasks and EAI's verdict on them."""

    plans: tuple[Any, ...]
    evaluation: EaiEvaluation

    def cost(self) -> dict[str, float | int]:
        """Model calls, tokens and seconds in all and per task."""
        n = max(len(self.plans), 1)
        total = {"calls": sum(p.calls for p in self.plans),
                 "prompt_tokens": sum(p.prompt_tokens for p in self.plans),
                 "completion_tokens": sum(p.completion_tokens for p in self.plans),
                 "seconds": round(sum(p.seconds for p in self.plans), 2)}
        return {**total, **{f"{k}_per_task": round(v / n, 2) for k, v in total.items()},
                "repairs": sum(p.repairs for p in self.plans), "truncated": sum(p.truncated for p in self.plans)}


def run_eai(llm: Any, tasks: Sequence[Any], protocol: str = "1.0.5", *, grounded: bool = False,
            repairs: int | None = None, workdir: Path | None = None, model_name: str = "situated",
            progress: Callable[[Any], None] | None = None, **plan_options: Any) -> EaiRun:
    """Plan every task (open loop, or the grounded variant) and score the answers with EAI's evaluator.

    `plan_options` go to `plan_task` / `plan_grounded` (typed, template, max_steps, max_tokens, ...);
    `progress(plan)` is called after each task.
    """
    from situated.eval.systems.eai_check import scene_checker
    from situated.planners.eai import DEFAULT_REPAIRS, plan_grounded, plan_task

    plans = []
    for task in tasks:
        if grounded:
            plan = plan_grounded(llm, task, protocol, check=scene_checker(task),
                                 repairs=DEFAULT_REPAIRS if repairs is None else repairs,
                                 **plan_options)
        else:
            plan = plan_task(llm, task, protocol, **plan_options)
        plans.append(plan)
        if progress is not None:
            progress(plan)
    evaluation = evaluate({p.task_id: p.text for p in plans}, protocol, workdir=workdir, model_name=model_name)
    return EaiRun(tuple(plans), evaluation)

"""EAI action sequencing through the one loop: one episode per task (the answer, what it cost, and EAI's own
verdict on it), written to the results store, and EAI's evaluator over every stored answer for the official
numbers.

Per-task verdicts feed the progress bar, per-task tables and reports; the headline metrics always come from
one run of EAI's evaluator over all the answers (`EaiEvaluation.metrics`, EAI's percentages), as the benchmark
reports them. Both run EAI's evaluator in a subprocess with PYTHONHASHSEED pinned.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...datasets.eai_actions import EaiTask
from ...errors import ParseError, SituatedError
from ...llm.base import LLM
from ...planners.eai import APPROACH, APPROACH_FIRST, convert_answer, plan_grounded, plan_task
from ..episode import Cost, Episode
from ..episode_runner import Progress, run_episodes
from ..executors import Executor, ModelSpec
from ..store import ResultsStore, fingerprint
from .base import Metric, keys
from .eai_check import scene_checker
from .eai_evaluator import EaiEvaluation, evaluate

METRICS = (Metric("success", "SR", 100, 1), Metric("executable", "ESR", 100, 1))
"""EAI's verdict on each task's answer (success, executable), shown as EAI's percentages."""
EAI_METRICS: tuple[str, ...] = keys(METRICS)
OPEN_LOOP, GROUNDED = "open loop", "grounded"


def mode(repairs: int) -> str:
    """How a run is labelled: the benchmark's own setting (the model alone) or our grounded variant."""
    return GROUNDED if repairs > 0 else OPEN_LOOP


def eai_episode(task: EaiTask, run: int, llm: LLM, protocol: str, *, repairs: int, workdir: Path,
                approach: bool = False, hints: bool = False, **plan_options: Any) -> Episode:
    """Plan one task (open loop, or grounded with at most `repairs` rewrites) and have EAI judge the answer.

    `approach=True`: the grammar lets the model act only on objects it walked to first (grounded: the first
    answer only; rewrites use the plain grammar). `hints=True` (grounded): the private scene inserts the steps a
    failing step needs and names the action that makes each unmet goal hold (`eval.systems.eai_check`).
    """
    if repairs > 0:
        plan = plan_grounded(llm, task, protocol, check=scene_checker(task, hints=hints), repairs=repairs,
                             approach=approach, **plan_options)
    else:
        plan = plan_task(llm, task, protocol, approach=approach, **plan_options)
    verdict = evaluate({task.task_id: plan.text}, protocol, workdir=workdir / "tasks" / task.task_id.replace("/", "_"))
    info = verdict.per_task.get(task.task_id) or {}
    metrics = {"success": float(verdict.metrics["successes"] == 1),
               "executable": float(verdict.metrics["executable"] == 1)}
    details = {"protocol": protocol, "mode": mode(repairs), "answer": plan.text,
               "steps": [s.script() for s in plan.steps], "rejected": list(plan.rejected), "repairs": plan.repairs,
               "truncated": plan.truncated, "checked_ok": plan.checked_ok, "approach": approach,
               **({"hints": True, "inserted": list(plan.inserted)} if hints else {}),
               "error_type": info.get("error_type"),
               "error": {k: v for k, v in info.items() if k in ("error_type", "error_action", "executable")}}
    cost = Cost(tokens=plan.completion_tokens, prompt_tokens=plan.prompt_tokens, calls=plan.calls,
                model_seconds=plan.seconds)
    return Episode(task.task_id, task.task_name, run, metrics, cost=cost, details=details)


def eai_config(tasks: Sequence[EaiTask], **settings: Any) -> dict[str, Any]:
    """The configuration key of an EAI evaluation: the settings plus a digest of the tasks' prompts and goals."""
    return {**settings, "tasks": fingerprint([(t.task_id, t.released_prompt, t.node_goals, t.edge_goals,
                                               t.action_goals) for t in tasks])}


@dataclass(frozen=True)
class EaiJob:
    """An EAI evaluation's episodes as data, for any executor (`eval.executors`): how to open the model and the
    planning settings. `build()` (in the worker, once) opens the model; each episode's EAI verdict is written
    under `workdir/tasks/<task>`, so workers never share a folder."""

    model: ModelSpec
    protocol: str
    workdir: str
    repairs: int = 0
    approach: bool = False
    shots: int = 0
    seed: int = 0
    hints: bool = False

    def build(self) -> Callable[[EaiTask, int], Episode]:
        llm = self.model.open()
        workdir = Path(self.workdir)
        options: dict[str, Any] = {"seed": self.seed, "shots": self.shots}
        return lambda task, run: eai_episode(task, run, llm, self.protocol, repairs=self.repairs, workdir=workdir,
                                             approach=self.approach, hints=self.hints, **options)


def evaluate_eai(tasks: Sequence[EaiTask], llm: LLM | ModelSpec, protocol: str, *, repairs: int, out: Path | None,
                 config: Mapping[str, Any], workdir: Path, on_progress: Progress | None = None,
                 approach: bool = False, hints: bool = False, executor: Executor | None = None,
                 **plan_options: Any) -> tuple[list[Episode], EaiEvaluation]:
    """Answer every task (resuming from the results store `out`), then score all answers with EAI's evaluator.

    `llm` is an open model (episodes in this process) or a `ModelSpec` that `executor`'s workers open (an
    `EaiJob`: worker processes, a Ray cluster). `approach` (recorded as the grammar's `APPROACH`, grounded as
    `APPROACH_FIRST`: it writes the first answer, not the rewrites) and `shots`
    (project examples before each prompt) and `hints` (grounded only) are part of the store's configuration only
    when on, so stores written without them still resume.
    """
    if repairs < 0:
        raise SituatedError(f"--repairs must be >= 0, got {repairs}")
    if hints and repairs == 0:
        raise SituatedError("--hints come from the grounded check: give --repairs N (N > 0) with it")
    shots = int(plan_options.get("shots", 0))
    job: EaiJob | Callable[[], Callable[[EaiTask, int], Episode]]
    if isinstance(llm, ModelSpec):
        job = EaiJob(llm, protocol, str(workdir), repairs=repairs, approach=approach, shots=shots,
                     seed=int(plan_options.get("seed", 0)), hints=hints)
    else:
        model, options = llm, {**plan_options, **({"approach": True} if approach else {}),
                               **({"hints": True} if hints else {})}

        def job() -> Callable[[EaiTask, int], Episode]:
            return lambda task, run: eai_episode(task, run, model, protocol, repairs=repairs, workdir=workdir,
                                                 **options)

    grammar = APPROACH_FIRST if repairs > 0 else APPROACH
    key = {**config, "protocol": protocol, "repairs": repairs, **({"approach": grammar} if approach else {}),
           **({"shots": shots} if shots else {}), **({"hints": True} if hints else {})}
    with ResultsStore(out, key, system="eai") as store:
        episodes = run_episodes(tasks, 1, job, store, executor=executor, on_progress=on_progress)
    answers = {e.task: str(e.details["answer"]) for e in episodes}
    return episodes, evaluate(answers, protocol, workdir=workdir / "all")


@dataclass(frozen=True)
class Rescored:
    """The same answers judged under another protocol: EAI's verdict, and how many answers could not be
    rewritten (kept as written, so that evaluator scores them as it finds them)."""

    protocol: str
    verdict: EaiEvaluation
    kept: int


def rescore(episodes: Sequence[Episode], tasks: Sequence[EaiTask], source: str, target: str, *,
            workdir: Path) -> Rescored:
    """Score a run's stored answers (written under `source`) with `target`'s evaluator, each answer rewritten
    into `target`'s format (1.0.5 name+id → 1.0.4 names only, or back). No model call: the answers are the
    run's own. Under 1.0.4 a bare name means the last listed object of that name, so an answer that acted on
    another object of a repeated name acts on the last one there, as a names-only answer would. EAI's verdict on
    each task goes to `workdir/per_task.json`."""
    if source == target:
        raise SituatedError(f"the answers are already in {target}'s format: nothing to rescore")
    by_id = {t.task_id: t for t in tasks}
    answers: dict[str, str] = {}
    kept = 0
    for episode in episodes:
        text = str(episode.details["answer"])
        try:
            answers[episode.task] = convert_answer(text, by_id[episode.task], source, target)
        except ParseError:   # EAI cannot read it in either format: it stays a parsing error
            answers[episode.task] = text
            kept += 1
    verdict = evaluate(answers, target, workdir=workdir)
    (workdir / "per_task.json").write_text(json.dumps(verdict.per_task, indent=1, sort_keys=True) + "\n")
    return Rescored(target, verdict, kept)

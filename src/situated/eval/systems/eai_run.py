"""`situated eval eai` as a library call: the settings of a run, the rules on which go together, the run label,
and `prepare_eai(settings, models) -> EaiRun`, whose `run` answers the tasks and has EAI's evaluator judge them
(and, with `also_score`, the same answers under the other protocol)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import SituatedError
from ..episode import Episode
from ..episode_runner import Progress
from ..executors import Executor, ModelSpec
from ..model_source import ModelSource
from ..settings import check_choice, check_limit, model_label
from .eai_episodes import Rescored, eai_config, evaluate_eai, mode, rescore
from .eai_evaluator import EaiEvaluation

TASKS = ("action_sequencing",)
SHOTS_CONTEXT = 16384
"""Context of an embedded model when worked examples precede the prompt (`--shots`): the examples add about
4,600 tokens to prompts of up to about 3,600 (+ the answer), more than 8,192."""
KINDS = {(0, 0): "open", (0, 1): "approach", (1, 0): "grounded", (1, 1): "grounded-approach"}


@dataclass(frozen=True)
class EaiSettings:
    """The options of `situated eval eai` (see its help) that decide what runs."""

    task: str = "action_sequencing"
    model: str = "llamacpp:qwen2.5-coder-1.5b"
    protocol: str = "1.0.5"
    repairs: int = 0
    approach: bool = False
    hints: bool = False
    shots: int = 0
    also_score: str | None = None
    limit: int | None = None
    base_url: str | None = None
    out: Path | None = None
    seed: int = 0

    @property
    def title(self) -> str:
        """"open loop + approach, 2-shot"."""
        return (mode(self.repairs) + (" + approach" if self.approach else "") + (" + hints" if self.hints else "")
                + (f", {self.shots}-shot" if self.shots else ""))

    @property
    def label(self) -> str:
        """The default store's name: `eai-1.0.5-grounded-approach-hints-2shot-llamacpp_qwen2.5-coder-1.5b`."""
        kind = KINDS[(int(self.repairs > 0), int(self.approach))] + ("-hints" if self.hints else "") \
            + (f"-{self.shots}shot" if self.shots else "")
        return f"eai-{self.protocol}-{kind}-{model_label(self.model)}"


def check_eai(s: EaiSettings) -> None:
    """The rules on the options, before anything is loaded; SituatedError naming the option otherwise."""
    from ...datasets.eai_actions import check_protocol
    from ...planners.eai_examples import EXAMPLES

    check_choice(s.task, TASKS, "--task")
    check_protocol(s.protocol)
    if s.also_score is not None:
        check_protocol(s.also_score)
        if s.also_score == s.protocol:
            raise SituatedError(f"--also-score {s.also_score} is the run's own --protocol")
        from .eai_evaluator import evaluator_python

        evaluator_python(s.also_score)   # before any model call: says how to set up a missing evaluator
    check_limit(s.limit)
    if s.repairs < 0:
        raise SituatedError(f"--repairs must be >= 0, got {s.repairs}")
    if s.hints and s.repairs == 0:
        raise SituatedError("--hints come from the grounded check: give --repairs N (N > 0) with it")
    if not 0 <= s.shots <= len(EXAMPLES):
        raise SituatedError(f"--shots must be between 0 and {len(EXAMPLES)}, got {s.shots}")


@dataclass(frozen=True)
class EaiOutcome:
    """What a run found: its episodes, EAI's verdict over all answers, and the rescoring under another protocol."""

    episodes: list[Episode]
    verdict: EaiEvaluation
    also: Rescored | None

    def summary(self, s: EaiSettings, out: Path) -> dict[str, Any]:
        """The last JSON line of `situated eval eai --json`."""
        eps = self.episodes
        return {**self.verdict.metrics, "mode": mode(s.repairs), "approach": s.approach, "hints": s.hints,
                "shots": s.shots, "model": s.model, "calls": sum(e.cost.calls for e in eps),
                "tokens": sum(e.cost.tokens for e in eps), "prompt_tokens": sum(e.cost.prompt_tokens for e in eps),
                "seconds": round(sum(e.cost.seconds for e in eps), 1), "out": str(out),
                **({"also_scored": {**self.also.verdict.metrics, "kept_as_written": self.also.kept}}
                   if self.also is not None else {})}


@dataclass(frozen=True)
class EaiRun:
    """A prepared `situated eval eai` run."""

    settings: EaiSettings
    tasks: tuple
    executor: Executor
    spec: ModelSpec
    config: dict[str, Any]
    out: Path

    def run(self, on_progress: Progress | None = None) -> EaiOutcome:
        s = self.settings
        episodes, verdict = evaluate_eai(self.tasks, self.spec, s.protocol, repairs=s.repairs, out=self.out,
                                         config=self.config, workdir=self.out / "evaluator", on_progress=on_progress,
                                         seed=s.seed, approach=s.approach, hints=s.hints, shots=s.shots,
                                         executor=self.executor)
        also = rescore(episodes, self.tasks, s.protocol, s.also_score, workdir=self.out / f"evaluator-{s.also_score}") \
            if s.also_score is not None else None
        return EaiOutcome(episodes, verdict, also)


def prepare_eai(s: EaiSettings, models: ModelSource) -> EaiRun:
    """Check the settings, load EAI's tasks, open the model's executor; the store is `--out` or runs/<label>."""
    from ...datasets.eai_actions import load_tasks

    check_eai(s)
    all_tasks = load_tasks()
    tasks = tuple(all_tasks[:s.limit] if s.limit is not None else all_tasks)
    models.check_cassette()
    executor, spec = models.for_episodes(s.model, n_ctx=SHOTS_CONTEXT if s.shots else None)
    config = eai_config(all_tasks, model=s.model, base_url=s.base_url, task=s.task, seed=s.seed)
    return EaiRun(s, tasks, executor, spec, config, s.out or Path("runs") / s.label)

"""Evaluating the sandbox on scripted sessions: expectations met, per-utterance model time, skill failures and
model cost, over a folder of `situated-session/1` files (`situated eval sandbox`).

Each file runs in a fresh session on its own new library, on the scene its comments name (`# scene: sorting`),
else the built-in scene its file name starts with (`sorting_lesson.session`), else the default. A file whose
comments say `# after: other.session` starts from the library that other file left (run first), as a new
session of a later process would. A file whose comments say `# demonstrations: yes` runs a session in which the
robot may ask to be shown a motion it lacks (`SandboxSession(motions=True)`). One model serves the whole run;
the first utterance's time includes loading it when the backend loads lazily.
"""

from __future__ import annotations

import math
import re
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..llm.base import LLM
from .library import SkillLibrary
from .script import read_script, read_study_fields, run_script

_SCENE = re.compile(r"#\s*scene:\s*([A-Za-z0-9_./-]+)\s*$")
_AFTER = re.compile(r"#\s*after:\s*(\S+)\s*$")
_DEMONSTRATIONS = re.compile(r"#\s*demonstrations:\s*yes\s*$")
BUILTIN = ("gift_bag", "sorting", "fruit_bowl")


@dataclass
class SessionResult:
    """One session file's outcome."""

    name: str
    scene: str
    expectations: int = 0
    met: int = 0
    unmet: list[str] = field(default_factory=list)
    utterances: int = 0
    skill_failures: int = 0
    taught: list[str] = field(default_factory=list)
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    utterance_seconds: list[float] = field(default_factory=list)
    """Model time of each utterance that asked the model (every call it led to, rewrites included)."""
    seconds: float = 0.0
    participant: str = ""
    condition: str = "teaching"
    trial: int | None = None


@dataclass
class EvalReport:
    """All sessions' results and their totals."""

    model: str
    sessions: list[SessionResult]
    first_utterance_seconds: float = 0.0
    """Wall time of the run's first utterance (a new process: model loading included)."""

    def totals(self) -> dict[str, Any]:
        """Sums and latency quantiles; `latency_later_*` leave out each session's first utterance, whose prompt
        (system prompt and examples) is evaluated whole, to show what the prefix cache does for the rest."""
        times = [t for s in self.sessions for t in s.utterance_seconds]
        later = [t for s in self.sessions for t in s.utterance_seconds[1:]]
        expectations = sum(s.expectations for s in self.sessions)
        met = sum(s.met for s in self.sessions)
        return {"sessions": len(self.sessions), "expectations": expectations, "met": met,
                "met_rate": round(met / expectations, 4) if expectations else None,
                "utterances": sum(s.utterances for s in self.sessions),
                "latency_p50": percentile(times, 0.5), "latency_p95": percentile(times, 0.95),
                "latency_later_p50": percentile(later, 0.5), "latency_later_p95": percentile(later, 0.95),
                "first_utterance_seconds": round(self.first_utterance_seconds, 3),
                "skill_failures": sum(s.skill_failures for s in self.sessions),
                "model_calls": sum(s.model_calls for s in self.sessions),
                "prompt_tokens": sum(s.prompt_tokens for s in self.sessions),
                "completion_tokens": sum(s.completion_tokens for s in self.sessions)}

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "totals": self.totals(), "sessions": [asdict(s) for s in self.sessions]}


def percentile(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank `q` quantile (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[max(0, math.ceil(q * len(ordered)) - 1)], 3)


def session_files(path: Path) -> list[Path]:
    """The `.session` files of a folder (or the one file given), sorted, each after the file it runs `after`."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise DataError(f"{path}: no such folder or session file")
    files = sorted(path.glob("*.session"))
    if not files:
        raise DataError(f"{path}: no .session files")
    ordered: list[Path] = []
    waiting = list(files)
    while waiting:
        ready = [f for f in waiting if (after_of(f) is None or after_of(f) in {o.name for o in ordered}
                                       or after_of(f) not in {w.name for w in files})]
        if not ready:
            raise DataError(f"{waiting[0]}: '# after:' files form a cycle")
        for f in ready:
            waiting.remove(f)
            ordered.append(f)
    return ordered


def _comments(path: Path) -> Iterable[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise DataError(f"{path}: cannot read ({err.strerror or err})") from None
    return (line.strip() for line in text.splitlines() if line.strip().startswith("#"))


def scene_of(path: Path, default: str) -> str:
    """The scene a session file is about (see the module docstring)."""
    for line in _comments(path):
        found = _SCENE.match(line)
        if found:
            return found.group(1)
    return next((s for s in BUILTIN if path.name.startswith(s)), default)


def after_of(path: Path) -> str | None:
    """The session file whose library this one continues, if any."""
    for line in _comments(path):
        found = _AFTER.match(line)
        if found:
            return found.group(1)
    return None


def evaluate(paths: Sequence[Path], llm: LLM, workdir: Path, *, default_scene: str = "gift_bag", seed: int = 0,
             model: str | None = None, started: float | None = None,
             on_session: Callable[[SessionResult], None] | None = None, condition: str | None = None) -> EvalReport:
    """Run each session file (see the module docstring), libraries kept in `workdir`. `started`: the
    `time.perf_counter()` the first utterance's time counts from (default: when its session starts).
    `condition`: the study condition of every session (default: each file's `# condition:`, else teaching)."""
    from ..envs.tabletop import TabletopEnv
    from .session import SandboxSession

    report = EvalReport(model or llm.uri, [])
    scripts = [(p, read_script(p)) for p in paths]  # every file checked before anything runs
    for path, statements in scripts:
        library = workdir / f"{path.stem}.db"
        after = after_of(path)
        base = workdir / f"{Path(after).stem}.db" if after else None
        if base is not None and base.is_file():
            shutil.copyfile(base, library)
        scene = scene_of(path, default_scene)
        fields = read_study_fields(path)
        chosen = condition or fields.condition or "teaching"
        env = TabletopEnv(scene, seed=seed)
        session_start = time.perf_counter()
        try:
            motions = any(_DEMONSTRATIONS.match(line) for line in _comments(path))
            with SkillLibrary.open(library) as lib, SandboxSession(
                    env, llm, lib, scene=scene, model=report.model, condition=chosen, motions=motions,
                    study=fields.to_dict() | {"condition": chosen}) as session:
                result = run_script(session, statements, _first_utterance(report, started or session_start))
                events = lib.events(session.session_id)
        finally:
            env.close()
        outcome = SessionResult(path.name, scene, result.expectations, result.met, list(result.unmet),
                                result.utterances, result.skill_failures, list(result.taught),
                                seconds=round(time.perf_counter() - session_start, 3),
                                participant=fields.participant, condition=chosen, trial=fields.trial)
        _add_model_use(outcome, events)
        report.sessions.append(outcome)
        if on_session is not None:
            on_session(outcome)
    return report


def _first_utterance(report: EvalReport, start: float) -> Callable[[Any], None]:
    """A step callback that records the run's first utterance's wall time (once per run)."""
    def on_step(step: Any) -> None:
        if not report.first_utterance_seconds and step.line.kind == "user":
            report.first_utterance_seconds = time.perf_counter() - start
    return on_step


def _add_model_use(outcome: SessionResult, events: Iterable[Any]) -> None:
    """Model calls, tokens and model time per utterance, from the session's logged events."""
    buckets: list[list[float]] = []  # per utterance: model seconds, model calls
    for event in events:
        if event.kind == "utterance":
            buckets.append([0.0, 0])
        elif event.kind == "model_call":
            payload = event.payload
            outcome.model_calls += int(payload.get("calls", 0))
            outcome.prompt_tokens += int(payload.get("prompt_tokens", 0))
            outcome.completion_tokens += int(payload.get("completion_tokens", 0))
            if buckets:
                buckets[-1][0] += float(payload.get("seconds", 0.0))
                buckets[-1][1] += int(payload.get("calls", 0))
    outcome.utterance_seconds = [round(seconds, 3) for seconds, calls in buckets if calls]

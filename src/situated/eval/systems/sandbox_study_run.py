"""Running the scripted user study into results stores, one per condition (`situated sandbox study --out DIR`).

    DIR/teaching/          a results store (run.json, episodes.jsonl) and the sessions' libraries (libraries/)
    DIR/no-teaching/       the same for the baseline
    DIR/sessions.json|csv  one row of measures per session; DIR/trials.json|csv per condition and bag
    DIR/study.png          the per-bag panels, teaching vs no-teaching

Each session is an episode whose task is the participant's bag (`p1/bag2`), so a report pairs a bag under one
condition with the same bag under the other. A session already in its store is skipped (resume); a store made
from other session files, another model or seed is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ...errors import DataError
from ...llm.base import LLM
from ...sandbox.metrics import PERSON
from ...sandbox.study import StudySession, run_session, trial_rows, write_tables
from ...sandbox.study_figure import draw_study
from ..episode import Cost, Episode
from ..store import ResultsStore, fingerprint
from .sandbox_study import METRICS, SYSTEM_NAME

FIGURE = "study.png"


def study_config(condition: str, sessions: Sequence[StudySession], model: str, seed: int) -> dict[str, Any]:
    """The resume key of one condition's store: model, seed, the condition, the session files' contents."""
    texts = {s.path.name: s.path.read_text(encoding="utf-8", errors="replace") for s in sessions}
    return {"model": model, "seed": seed, "condition": condition, "scene": sessions[0].scene,
            "sessions": fingerprint(texts), "files": len(texts), "person_model": asdict(PERSON)}


def episode_of(session: StudySession, row: dict[str, Any]) -> Episode:
    """A session's row of measures as an episode of the study's results store."""
    metrics = {m.key: float(row.get(m.key, 0) or 0) for m in METRICS if m.key != "met_rate"}
    metrics["met_rate"] = row["met"] / row["expectations"] if row["expectations"] else 0.0
    cost = Cost(tokens=int(row["completion_tokens"]), prompt_tokens=int(row["prompt_tokens"]),
                calls=int(row["model_calls"]), model_seconds=float(row["model_seconds"]),
                seconds=float(row["seconds"]))
    return Episode(session.key, f"{session.fields.participant}, bag {session.fields.trial} ({session.path.name})",
                   0, metrics, cost=cost, details=row)


def run_study(sessions: Sequence[StudySession], llm: LLM, out: Path, *, model: str, seed: int = 0,
              on_session: Callable[[dict[str, Any], bool], None] | None = None,
              selected: Callable[[StudySession], bool] | None = None) -> tuple[list[dict], list[Path]]:
    """Run every session not yet in its condition's store, by participant, then bag, then condition (so a run
    cut short has both conditions of the first bags); then write the tables and the figure. Returns every
    session's row (done earlier or now) and the files written. `on_session(row, skipped)`. `selected`: which
    sessions to run and report (the stores' resume keys still cover every session given)."""
    conditions = list(dict.fromkeys(s.fields.condition for s in sessions))
    sessions = sorted(sessions, key=lambda s: (s.fields.participant, s.fields.trial or 0,
                                               conditions.index(s.fields.condition)))
    with ExitStack() as stack:
        stores = {c: stack.enter_context(ResultsStore(
            out / c, study_config(c, [s for s in sessions if s.fields.condition == c], model, seed),
            system=SYSTEM_NAME)) for c in conditions}
        sessions = [s for s in sessions if selected is None or selected(s)]
        if not sessions:
            raise DataError("no study session is selected (see --participants and --trials)")
        for session in sessions:
            store = stores[session.fields.condition]
            if (session.key, 0) in store:
                if on_session is not None:
                    on_session(dict(store.select([(session.key, 0)])[0].details), True)
                continue
            row = run_session(session, llm, out / session.fields.condition / "libraries", seed=seed, model=model)
            store.add(episode_of(session, row))
            if on_session is not None:
                on_session(row, False)
        rows = [dict(e.details) for c in conditions for e in stores[c].select(
            [(s.key, 0) for s in sessions if s.fields.condition == c])]
    written = write_tables(rows, out)
    written.append(draw_study(trial_rows(rows), out / FIGURE))
    return rows, written

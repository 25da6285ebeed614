"""The user study, scripted: participants pack successive gift bags under two conditions, and each session's
measures are read back from its events (`situated sandbox study`).

A study session is a `situated-session/1` file whose header names its participant, condition and trial (the
bag): `# participant: p1`, `# condition: teaching` or `no-teaching`, `# trial: 2`. Under `teaching` a file may
continue the library an earlier bag left (`# after: p1_teaching_bag1.session`), so what was taught grows from bag
to bag; under `no-teaching` (the paper's baseline) the planner offers no unknown answers and lessons are refused,
so the person spells out the skills. Rows per session (`run_session`) and per condition and trial
(`trial_rows`: means over participants) are written as JSON and CSV (`write_tables`).
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import files
from ..errors import DataError
from ..llm.base import LLM
from .evaluation import after_of, scene_of, session_files
from .library import SkillLibrary
from .metrics import PERSON, session_metrics, study_measures
from .script import StudyFields, read_script, read_study_fields, run_script
from .session import CONDITIONS

TRIAL_MEASURES = ("person_supervision_minutes", "supervision_minutes", "person_teaching_minutes",
                  "utterances_per_task", "skills_per_behaviour", "skills_per_command", "mean_depth",
                  "skill_failures", "behaviours_taught", "met", "expectations")
"""The measures averaged per condition and trial (over participants)."""
TABLE_FILES = ("sessions.json", "sessions.csv", "trials.json", "trials.csv")


@dataclass(frozen=True)
class StudySession:
    """One session file of a study, with its header fields and scene."""

    path: Path
    fields: StudyFields
    scene: str

    @property
    def key(self) -> str:
        """The task this session is in the results: the same participant's same bag under either condition."""
        return f"{self.fields.participant}/bag{self.fields.trial}"


def parse_conditions(text: str) -> tuple[str, ...]:
    """`teaching,no-teaching` → the conditions, in order; DataError for another word or none."""
    chosen = tuple(dict.fromkeys(w.strip() for w in text.split(",") if w.strip()))
    bad = [c for c in chosen if c not in CONDITIONS]
    if bad or not chosen:
        raise DataError(f"--conditions: expected {' and/or '.join(CONDITIONS)} (comma-separated), got {text!r}")
    return chosen


def one_condition(text: str, option: str = "--condition") -> str:
    """One condition's name checked; DataError naming `option` otherwise."""
    if text not in CONDITIONS:
        raise DataError(f"{option}: expected {' or '.join(CONDITIONS)}, got {text!r}")
    return text


def selection(participants: str | None, trials: str | None) -> Callable[[StudySession], bool]:
    """`--participants p1,p2` and `--trials 1,2` as a test of a session (None: all); DataError for a trial that is
    not a whole number."""
    who = None if participants is None else {p.strip() for p in participants.split(",") if p.strip()}
    bags = None
    if trials is not None:
        words = [t.strip() for t in trials.split(",") if t.strip()]
        if not words or not all(w.isdigit() for w in words):
            raise DataError(f"--trials: expected whole numbers separated by commas, got {trials!r}")
        bags = {int(w) for w in words}
    return lambda s: (who is None or s.fields.participant in who) and (bags is None or s.fields.trial in bags)


def study_sessions(folder: Path, conditions: Sequence[str], default_scene: str = "gift_bag") -> list[StudySession]:
    """The study's session files under `folder` of the chosen conditions (others skipped), each after the file it
    continues. DataError for a file without a condition or trial, or two files for one participant's bag."""
    chosen: list[StudySession] = []
    seen: dict[tuple[str, str, int | None], Path] = {}
    for path in session_files(folder):
        read_script(path)  # every statement checked before anything runs
        fields = read_study_fields(path)
        if not fields.condition or fields.trial is None:
            raise DataError(f"{path}: a study session names its condition and trial ('# condition: teaching', "
                            "'# trial: 1')")
        fields = StudyFields(fields.participant or "p1", fields.condition, fields.trial)
        if fields.condition not in conditions:
            continue
        slot = (fields.participant, fields.condition, fields.trial)
        if slot in seen:
            raise DataError(f"{path}: {fields.participant} bag {fields.trial} ({fields.condition}) is also "
                            f"{seen[slot].name}")
        seen[slot] = path
        chosen.append(StudySession(path, fields, scene_of(path, default_scene)))
    if not chosen:
        raise DataError(f"{folder}: no session of condition {' or '.join(conditions)}")
    return chosen


def _prepare_library(session: StudySession, libraries: Path) -> Path:
    """A fresh library for the session (a leftover of an interrupted run removed), or a copy of the library the
    file it continues left."""
    library = libraries / f"{session.path.stem}.db"
    for leftover in (library, *(library.with_name(library.name + s) for s in ("-wal", "-shm", "-journal"))):
        leftover.unlink(missing_ok=True)
    after = after_of(session.path)
    if after is not None:
        base = libraries / f"{Path(after).stem}.db"
        if not base.is_file():
            raise DataError(f"{session.path}: continues {after}, which has not run under this condition")
        shutil.copyfile(base, library)
    return library


def run_session(session: StudySession, llm: LLM, libraries: Path, *, seed: int = 0,
                model: str | None = None) -> dict[str, Any]:
    """Run one study session on its library in `libraries`; its row of measures."""
    from ..envs.tabletop import TabletopEnv
    from .session import SandboxSession

    libraries.mkdir(parents=True, exist_ok=True)
    library = _prepare_library(session, libraries)
    statements = read_script(session.path)
    env = TabletopEnv(session.scene, seed=seed)
    try:
        with SkillLibrary.open(library) as lib, SandboxSession(
                env, llm, lib, scene=session.scene, model=model or llm.uri, condition=session.fields.condition,
                study=session.fields.to_dict()) as sandbox:
            result = run_script(sandbox, statements)
            sandbox.close()
            record = next(s for s in lib.sessions() if s.id == sandbox.session_id)
            events = lib.events(sandbox.session_id)
    finally:
        env.close()
    counts = session_metrics(record, events).to_dict()
    measures = study_measures(events).to_dict()
    return {"name": session.path.name, **session.fields.to_dict(), "scene": session.scene,
            **{k: v for k, v in counts.items() if k not in ("session", "scene")}, **measures,
            "unmet": list(result.unmet), "taught": list(result.taught)}


def trial_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per condition and trial, the mean of each of `TRIAL_MEASURES` over participants (sorted by condition, then
    trial)."""
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((str(row["condition"]), int(row["trial"])), []).append(row)
    out = []
    for (condition, trial), members in sorted(groups.items()):
        means = {k: round(sum(float(r.get(k, 0) or 0) for r in members) / len(members), 3) for k in TRIAL_MEASURES}
        out.append({"condition": condition, "trial": trial, "sessions": len(members),
                    "participants": sorted({str(r["participant"]) for r in members}), **means})
    return out


def _csv(rows: Sequence[dict[str, Any]]) -> str:
    columns = list(dict.fromkeys(k for r in rows for k in r))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "; ".join(map(str, v)) if isinstance(v, list) else v for k, v in row.items()})
    return buffer.getvalue()


def write_tables(rows: Sequence[dict[str, Any]], out: Path) -> list[Path]:
    """sessions.json/.csv (one row per session) and trials.json/.csv (per condition and trial) in `out`."""
    trials = trial_rows(rows)
    texts = {"sessions.json": json.dumps(list(rows), indent=1) + "\n", "sessions.csv": _csv(rows),
             "trials.json": json.dumps({"person_model": PERSON.__dict__, "trials": trials}, indent=1) + "\n",
             "trials.csv": _csv(trials)}
    written = []
    for name in TABLE_FILES:
        files.write_text_atomic(out / name, texts[name])
        written.append(out / name)
    return written

"""Export and import of a whole library as `situated-library/1` JSON.

Export reads every row through the checked readers, then writes with `files.write_text_atomic` after
`files.check_output`: a regular file only (never a device, FIFO, directory or socket), never the library's own
database or its -wal/-shm, an existing file only with `overwrite`. Import reads through the guarded reader
(`files.read_json`), checks every field with the API's rules and the caps (`MAX_BEHAVIOURS`, `MAX_CALLS`,
`MAX_DEPTH`, on the call graph in one linear pass), then adds everything in one transaction, or nothing.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import files
from ..errors import DataError
from .library_graph import a_cycle, call_graph
from .library_records import (
    MAX_BEHAVIOURS,
    MAX_DEPTH,
    MAX_IMPORT_BYTES,
    MAX_LABEL,
    MAX_PAYLOAD_BYTES,
    BehaviourRecord,
    Invalid,
    Kind,
    ObjectRecord,
    Record,
    behaviour_row,
    check_int,
    check_json,
    check_name,
    check_number,
    check_text,
    object_row,
    short,
    skill_row,
)
from .library_rows import read_event, read_name, read_session

if TYPE_CHECKING:
    from .library_store import VersionStore

#: The JSON export format written by `SkillLibrary.export_json` and read by `SkillLibrary.import_json`.
EXPORT_FORMAT = "situated-library/1"


# ------------------------------------------------------------------------------------------------- export


def export_target(path: str | os.PathLike[str], library: Path, *, overwrite: bool) -> Path:
    """`path` checked as an export target: a regular file or nothing there, not the library, its -wal or -shm,
    and an existing file only with `overwrite` (DataError otherwise)."""
    sidecars = [library, Path(f"{library}-wal"), Path(f"{library}-shm"), Path(f"{library}-journal")]
    target = files.check_output(path, inputs=sidecars, force=overwrite)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return target
    except OSError as err:
        raise DataError(f"{target}: cannot write: {err.strerror or err}") from None
    if not stat.S_ISREG(info.st_mode):
        raise DataError(f"{target}: an export is written only to a regular file, not to a device")
    return target


def export_text(store: VersionStore, db: sqlite3.Connection) -> str:
    """The whole library (every version, every session) as `situated-library/1` JSON text."""
    groups: dict[Kind, list[dict[str, Any]]] = {"object": [], "behaviour": [], "skill": []}
    for row in db.execute("SELECT id, name, kind FROM names ORDER BY name").fetchall():
        _, name, kind = read_name(row)
        versions = [_record_dict(r) for r in store._versions(db, name)]
        groups[kind].append({"name": name, "versions": versions})  # type: ignore[index]
    sessions = []
    for row in db.execute("SELECT id, scene, model, started_at, ended_at FROM sessions ORDER BY id").fetchall():
        session = read_session(row)
        events = [read_event(r) for r in db.execute(
            "SELECT id, session_id, kind, payload, at FROM events WHERE session_id = ? ORDER BY id", (session.id,))]
        sessions.append({"scene": session.scene, "model": session.model, "started_at": session.started_at,
                         "ended_at": session.ended_at,
                         "events": [{"kind": e.kind, "payload": e.payload, "at": e.at} for e in events]})
    document = {"format": EXPORT_FORMAT, "objects": groups["object"], "behaviours": groups["behaviour"],
                "skills": groups["skill"], "sessions": sessions}
    return json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def _record_dict(record: Record) -> dict[str, Any]:
    if isinstance(record, ObjectRecord):
        return {"version": record.version, "position": None if record.position is None else list(record.position),
                "description": record.description, "source": record.source, "created_at": record.created_at}
    if isinstance(record, BehaviourRecord):
        return {"version": record.version, "params": list(record.params), "doc": record.doc, "body": record.body,
                "calls": list(record.calls), "depth": record.depth, "created_at": record.created_at}
    return {"version": record.version, "kind": record.kind, "params": list(record.params), "doc": record.doc,
            "weights": record.weights, "created_at": record.created_at}


# ------------------------------------------------------------------------------------------------- import


@dataclass(frozen=True)
class ImportPlan:
    """A checked export: the names with their version rows, and the sessions with their events."""

    names: list[tuple[str, Kind, str, list[dict[str, Any]]]]  # (field, kind, name, checked version rows)
    sessions: list[dict[str, Any]]


def read_export(file: Path) -> ImportPlan:
    """The checked content of a `situated-library/1` file (DataError naming the file and field)."""
    document = files.read_json(file, what="library export", limit=MAX_IMPORT_BYTES, duplicate_keys="error")
    try:
        return _import_plan(document)
    except Invalid as err:
        raise DataError(f"{file}: {err}") from None


def _fields(value: object, field: str, required: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Invalid(field, "must be an object")
    missing = required - value.keys()
    if missing:
        raise Invalid(field, f"lacks {', '.join(sorted(missing))}")
    extra = value.keys() - required
    if extra:
        raise Invalid(field, f"has unknown field {short(sorted(extra)[0])}")
    return value


def _list(value: object, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise Invalid(field, "must be a list")
    return value


_VERSION_FIELDS: dict[Kind, set[str]] = {
    "object": {"version", "position", "description", "source", "created_at"},
    "behaviour": {"version", "params", "doc", "body", "calls", "depth", "created_at"},
    "skill": {"version", "kind", "params", "doc", "weights", "created_at"},
}


def _version_row(kind: Kind, name: str, v: dict[str, Any], number: int) -> dict[str, Any]:
    if kind == "object":
        row = object_row(name, v["position"], v["description"], v["source"])
    elif kind == "behaviour":
        row = behaviour_row(name, v["params"], v["doc"], v["body"], v["calls"])
        row["depth"] = check_int(v["depth"], "depth", 1, MAX_DEPTH)
    else:
        row = skill_row(name, v["params"], v["doc"], v["weights"], v["kind"])
    check_int(v["version"], "version", number, number)
    row["version"] = number
    row["created_at"] = check_number(v["created_at"], "created_at")
    return row


def _import_plan(document: object) -> ImportPlan:
    top = _fields(document, "(top level)", {"format", "objects", "behaviours", "skills", "sessions"})
    if top["format"] != EXPORT_FORMAT:
        raise Invalid("format", f"must be {EXPORT_FORMAT!r}, not {short(top['format'])}")
    names: list[tuple[str, Kind, str, list[dict[str, Any]]]] = []
    seen: set[str] = set()
    groups: tuple[tuple[str, Kind], ...] = (("objects", "object"), ("behaviours", "behaviour"), ("skills", "skill"))
    for key, kind in groups:
        entries = _list(top[key], key)
        if kind == "behaviour" and len(entries) > MAX_BEHAVIOURS:
            raise Invalid(key, f"has {len(entries)} behaviours, more than {MAX_BEHAVIOURS}")
        for i, entry in enumerate(entries):
            field = f"{key}[{i}]"
            entry = _fields(entry, field, {"name", "versions"})
            name = check_name(entry["name"], f"{field}.name")
            if name in seen:
                raise Invalid(f"{field}.name", f"{name!r} appears twice")
            seen.add(name)
            versions = _list(entry["versions"], f"{field}.versions")
            if not versions:
                raise Invalid(f"{field}.versions", "must not be empty")
            rows = []
            for j, version in enumerate(versions):
                where = f"{field}.versions[{j}]"
                v = _fields(version, where, _VERSION_FIELDS[kind])
                try:
                    rows.append(_version_row(kind, name, v, j + 1))
                except Invalid as err:
                    raise Invalid(where, str(err)) from None
            names.append((field, kind, name, rows))
    return ImportPlan(names, [_session(i, entry) for i, entry in enumerate(_list(top["sessions"], "sessions"))])


def _session(i: int, entry: object) -> dict[str, Any]:
    field = f"sessions[{i}]"
    s = _fields(entry, field, {"scene", "model", "started_at", "ended_at", "events"})
    try:
        session = {"scene": check_text(s["scene"], "scene", MAX_LABEL, lines=False),
                   "model": check_text(s["model"], "model", MAX_LABEL, lines=False),
                   "started_at": check_number(s["started_at"], "started_at"),
                   "ended_at": None if s["ended_at"] is None else check_number(s["ended_at"], "ended_at"),
                   "events": []}
    except Invalid as err:
        raise Invalid(field, str(err)) from None
    for j, event in enumerate(_list(s["events"], f"{field}.events")):
        where = f"{field}.events[{j}]"
        e = _fields(event, where, {"kind", "payload", "at"})
        try:
            session["events"].append({"kind": check_name(e["kind"], "kind"),
                                      "payload": check_json(e["payload"], "payload", MAX_PAYLOAD_BYTES),
                                      "at": check_number(e["at"], "at")})
        except Invalid as err:
            raise Invalid(where, str(err)) from None
    return session


def apply_import(store: VersionStore, db: sqlite3.Connection, plan: ImportPlan) -> None:
    """Add a checked export inside the caller's write transaction; Invalid (nothing added) on a conflict, a call
    to an object, a cycle, or a cap the library would pass."""
    kinds = store._kinds(db)
    for field, _, name, _ in plan.names:
        if name in kinds:
            raise Invalid(f"{field}.name", f"{name!r} is already in the library {store.path}")
    graph = dict(store._call_graph(db))
    for _, kind, name, versions in plan.names:
        kinds[name] = kind
        if kind == "behaviour":
            graph[name] = versions[-1]["calls"]
    if len(graph) > MAX_BEHAVIOURS:
        raise Invalid("behaviours", f"the library would hold {len(graph)} behaviours, more than {MAX_BEHAVIOURS}")
    _check_calls(plan, kinds, graph)
    for _, kind, _, versions in plan.names:
        for row in versions:
            if kind == "object":
                store._insert_object(db, row, row["created_at"])
            elif kind == "skill":
                store._insert_skill(db, row, row["created_at"])
            else:
                name_id = store._name_id(db, row["name"], "behaviour")
                cursor = db.execute(
                    "INSERT INTO behaviour_versions (name_id, version, params, doc, body, depth, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (name_id, row["version"], json.dumps(list(row["params"])), row["doc"], row["body"], row["depth"],
                     row["created_at"]))
                db.executemany("INSERT INTO behaviour_calls (version_id, position, callee) VALUES (?, ?, ?)",
                               [(cursor.lastrowid, i, c) for i, c in enumerate(row["calls"])])
    for session in plan.sessions:
        cursor = db.execute("INSERT INTO sessions (scene, model, started_at, ended_at) VALUES (?, ?, ?, ?)",
                            (session["scene"], session["model"], session["started_at"], session["ended_at"]))
        db.executemany("INSERT INTO events (session_id, kind, payload, at) VALUES (?, ?, ?, ?)",
                       [(cursor.lastrowid, e["kind"], e["payload"], e["at"]) for e in session["events"]])


def _check_calls(plan: ImportPlan, kinds: dict[str, Kind], graph: dict[str, tuple[str, ...]]) -> None:
    """No current behaviour calls an object; the call graph has no cycle and no depth past `MAX_DEPTH`."""
    imported = [(field, name, versions) for field, kind, name, versions in plan.names if kind == "behaviour"]
    for field, _, versions in imported:
        for i, callee in enumerate(versions[-1]["calls"]):
            if kinds.get(callee) == "object":
                where = f"{field}.versions[{len(versions) - 1}].calls[{i}]"
                raise Invalid(where, f"{callee!r} is an object, not a skill or behaviour")
    result = call_graph(graph)
    stuck = set(result.cyclic)
    for field, name, versions in imported:
        where = f"{field}.versions[{len(versions) - 1}].calls"
        if name in stuck:
            cycle = a_cycle(graph, result, name)
            if name in cycle:
                start = cycle.index(name)
                loop = [*cycle[start:-1], *cycle[:start], name]
                raise Invalid(where, f"{name!r} would call itself through {' -> '.join(loop)}")
            raise Invalid(where, f"{name!r} calls a cycle of behaviours: {' -> '.join(cycle)}")
        if result.depths[name] > MAX_DEPTH:
            raise Invalid(where, f"composition depth {result.depths[name]} is more than {MAX_DEPTH}")

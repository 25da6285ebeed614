"""The skill library: what a user taught the robot (objects, behaviours, demonstrated skills) and session logs.

One SQLite file per library (see `library_schema` for the tables). Every change is one ``BEGIN IMMEDIATE``
transaction; the file is in WAL mode with ``synchronous=FULL``, so a change whose call has returned survives the
process being killed at any moment *and* a power cut (``NORMAL`` would survive only the former; teaching happens
at the pace of speech, so the one fsync per commit costs nothing a user could notice). Every taught version is
kept; `SkillLibrary.undo` drops the newest one.

A file that is not SQLite, is corrupt, belongs to another application or was written by a newer version of this
code is refused with a one-line `DataError` naming it; such a file is only read, never written or migrated.

Behaviour bodies are plan-program text, stored and returned verbatim: parsing and validating them is the caller's
business, and nothing here executes them.
"""

from __future__ import annotations

import contextlib
import json
import keyword
import math
import os
import re
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias

from .. import files
from ..errors import DataError
from . import library_schema as schema

#: The JSON export format written by `SkillLibrary.export_json` and read by `SkillLibrary.import_json`.
EXPORT_FORMAT = "situated-library/1"

MAX_NAME = 64
MAX_PARAMS = 16
MAX_CALLS = 256
MAX_DOC = 2_000
MAX_BODY = 20_000
MAX_LABEL = 500  # scene and model names
MAX_WEIGHTS_BYTES = 1_000_000
MAX_PAYLOAD_BYTES = 65_536
MAX_JSON_DEPTH = 32
MAX_IMPORT_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 64  # composition depth of a behaviour

_A = {"object": "an object", "behaviour": "a behaviour", "skill": "a skill"}
_NAME = re.compile(r"[a-z_][a-z0-9_]*\Z")
_SQLITE_MAGIC = b"SQLite format 3\x00"

Source = Literal["pointed", "scene"]
Kind = Literal["object", "behaviour", "skill"]
SOURCES: tuple[str, ...] = ("pointed", "scene")
SKILL_KINDS: tuple[str, ...] = ("dmp",)


@dataclass(frozen=True)
class ObjectRecord:
    """One version of an object: where it is (metres, robot base frame) if known, and how it was taught."""

    name: str
    version: int
    position: tuple[float, float, float] | None
    description: str
    source: Source
    created_at: float


@dataclass(frozen=True)
class BehaviourRecord:
    """One version of a taught behaviour: a plan program over skills and other behaviours."""

    name: str
    version: int
    params: tuple[str, ...]
    doc: str
    body: str
    calls: tuple[str, ...]
    depth: int
    created_at: float


@dataclass(frozen=True)
class SkillRecord:
    """One version of a skill taught by demonstration (e.g. a DMP; `weights` as `DmpSkill.to_dict` gives them)."""

    name: str
    version: int
    kind: str
    params: tuple[str, ...]
    doc: str
    weights: dict[str, Any]
    created_at: float


@dataclass(frozen=True)
class SessionRecord:
    """One interaction session; `ended_at` is None while it runs (or if it was never ended)."""

    id: int
    scene: str
    model: str
    started_at: float
    ended_at: float | None


@dataclass(frozen=True)
class EventRecord:
    """One logged event of a session (confirmation, correction, teaching, skill failure, ...)."""

    id: int
    session: int
    kind: str
    payload: dict[str, Any]
    at: float


Record: TypeAlias = ObjectRecord | BehaviourRecord | SkillRecord


class _Invalid(Exception):
    """A field failed validation; turned into a DataError naming the file by the caller."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")


# ---------------------------------------------------------------------------------------------------------------
# Validation, shared by the API and the importer.


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_name(value: object, field: str = "name") -> str:
    """`value` if it is a valid name (``[a-z_][a-z0-9_]*``, at most 64 characters, not a Python keyword)."""
    if not isinstance(value, str):
        raise _Invalid(field, f"must be a string, not {type(value).__name__}")
    if not _NAME.match(value) or len(value) > MAX_NAME or keyword.iskeyword(value):
        raise _Invalid(field, f"{_short(value)} is not a name ([a-z_][a-z0-9_]*, at most {MAX_NAME} characters, "
                              "not a Python keyword)")
    return value


def _check_text(value: object, field: str, limit: int, *, lines: bool = True) -> str:
    if not isinstance(value, str):
        raise _Invalid(field, f"must be a string, not {type(value).__name__}")
    if len(value) > limit:
        raise _Invalid(field, f"is {len(value)} characters, more than {limit}")
    allowed = "\n\t" if lines else ""
    for char in value:
        if (ord(char) < 32 and char not in allowed) or ord(char) == 127 or 0xD800 <= ord(char) <= 0xDFFF:
            raise _Invalid(field, f"contains the control character {char!r}")
    return value


def _check_names(value: object, field: str, limit: int, *, unique: bool) -> tuple[str, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise _Invalid(field, "must be a list of names")
    if len(value) > limit:
        raise _Invalid(field, f"has {len(value)} entries, more than {limit}")
    names = tuple(_check_name(item, f"{field}[{i}]") for i, item in enumerate(value))
    if unique and len(set(names)) != len(names):
        raise _Invalid(field, "repeats a name")
    return names


def _check_number(value: object, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Invalid(field, f"must be a number, not {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise _Invalid(field, "must be finite")
    return number


def _check_int(value: object, field: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _Invalid(field, f"must be an integer from {low} to {high}")
    return value


def _check_position(value: object, field: str) -> tuple[float, float, float] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or len(value) != 3:
        raise _Invalid(field, "must be null or three numbers (x, y, z)")
    x, y, z = (_check_number(v, f"{field}[{i}]") for i, v in enumerate(value))
    return (x, y, z)


def _check_json(value: object, field: str, max_bytes: int) -> str:
    """Compact JSON text of a JSON object (str keys, finite numbers, nesting at most MAX_JSON_DEPTH)."""
    if not isinstance(value, Mapping):
        raise _Invalid(field, f"must be a JSON object, not {type(value).__name__}")

    def walk(item: object, where: str, depth: int) -> None:
        if depth > MAX_JSON_DEPTH:
            raise _Invalid(where, f"nested deeper than {MAX_JSON_DEPTH}")
        if isinstance(item, Mapping):
            for key, sub in item.items():
                if not isinstance(key, str):
                    raise _Invalid(where, f"key {_short(key)} is not a string")
                walk(sub, f"{where}.{key}", depth + 1)
        elif isinstance(item, list | tuple):
            for i, sub in enumerate(item):
                walk(sub, f"{where}[{i}]", depth + 1)
        elif isinstance(item, float) and not math.isfinite(item):
            raise _Invalid(where, "must be finite")
        elif item is not None and not isinstance(item, str | int | float):
            raise _Invalid(where, f"{type(item).__name__} is not a JSON value")

    walk(value, field, 1)
    text = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise _Invalid(field, f"is more than {max_bytes} bytes as JSON")
    return text


def _check_choice(value: object, field: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise _Invalid(field, f"must be one of {', '.join(choices)}, not {_short(value)}")
    return str(value)


# ---------------------------------------------------------------------------------------------------------------


class SkillLibrary:
    """A persistent, versioned skill library in one SQLite file; use `SkillLibrary.open` (a context manager)."""

    def __init__(self, db: sqlite3.Connection, path: Path, clock: Callable[[], float]) -> None:
        self._db = db
        self._path = path
        self._clock = clock

    # -- opening ---------------------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, clock: Callable[[], float] = time.time,
             timeout: float = 5.0) -> SkillLibrary:
        """Open the library at `path`, creating it if absent (or empty) and migrating an older schema.

        `clock` gives the POSIX time stamped on changes and events; `timeout` is how long (seconds) to wait for
        another process's write to finish. Raises DataError for anything that is not a healthy library file of
        this or an older schema version.
        """
        file = Path(path)
        _precheck(file)
        try:
            db = sqlite3.connect(file, timeout=timeout, isolation_level=None)
        except sqlite3.Error as err:
            raise DataError(f"{file}: cannot open the skill library ({err})") from None
        try:
            _identify(db, file)
            # Where WAL is impossible (a file system without shared memory) SQLite keeps its rollback journal,
            # which with synchronous=FULL is as durable, only slower and without concurrent readers.
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = FULL")
            db.execute("PRAGMA foreign_keys = ON")
            db.execute("BEGIN IMMEDIATE")
            try:
                current = _identify(db, file, check=False)  # under the write lock: another process may have migrated
                if current < schema.schema_version():
                    if current == 0:
                        db.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
                    schema.migrate(db, current)
                    _check_tables(db, file)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        except sqlite3.Error as err:
            db.close()
            raise DataError(f"{file}: not a usable skill library ({err})") from None
        except BaseException:
            db.close()
            raise
        return cls(db, file, clock)

    @property
    def path(self) -> Path:
        """The library file."""
        return self._path

    def close(self) -> None:
        """Close the file (idempotent)."""
        self._db.close()

    def __enter__(self) -> SkillLibrary:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions ----------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """SQLite and validation errors → one-line DataError naming the file."""
        try:
            yield
        except _Invalid as err:
            raise DataError(f"{self._path}: {err}") from None
        except sqlite3.Error as err:
            raise DataError(f"{self._path}: {err}") from None

    @contextlib.contextmanager
    def _transaction(self, write: bool) -> Iterator[sqlite3.Connection]:
        with self._guard():
            self._db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield self._db
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            else:
                try:
                    self._db.execute("COMMIT")
                except BaseException:
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise

    def _write(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        return self._transaction(write=True)

    def _read(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        return self._transaction(write=False)

    # -- teaching --------------------------------------------------------------------------------------------

    def add_object(self, name: str, position: Sequence[float] | None = None, description: str = "",
                   source: Source = "pointed") -> int:
        """Teach (or re-teach) an object; returns its new version number."""
        with self._guard():
            row = _object_row(name, position, description, source, "object")
        with self._write() as db:
            return self._insert_object(db, row, self._clock())

    def add_behaviour(self, name: str, params: Sequence[str], doc: str, body: str, calls: Sequence[str] = ()) -> int:
        """Teach (or re-teach) a behaviour; returns its new version number.

        `body` is plan-program text (stored verbatim); `calls` names the skills and behaviours it calls. Its
        composition depth is computed here: 1 + the deepest library behaviour it calls (skills, seed or taught,
        count 0). A call to an object, to itself or one that would close a cycle of behaviours is refused.
        """
        with self._guard():
            row = _behaviour_row(name, params, doc, body, calls, None, "behaviour")
        with self._write() as db:
            return self._insert_behaviour(db, row, self._clock())

    def add_skill(self, name: str, params: Sequence[str], doc: str, weights: Mapping[str, Any],
                  kind: str = "dmp") -> int:
        """Teach (or re-teach) a skill learned from a demonstration; returns its new version number.

        `weights` is any JSON object (for a DMP, `DmpSkill.to_dict()`); it is checked here only for being JSON.
        """
        with self._guard():
            row = _skill_row(name, params, doc, weights, kind, "skill")
        with self._write() as db:
            return self._insert_skill(db, row, self._clock())

    def _name_id(self, db: sqlite3.Connection, name: str, kind: Kind) -> int:
        found = db.execute("SELECT id, kind FROM names WHERE name = ?", (name,)).fetchone()
        if found is None:
            return int(db.execute("INSERT INTO names (name, kind) VALUES (?, ?)", (name, kind)).lastrowid or 0)
        if found[1] != kind:
            raise _Invalid("name", f"{name!r} is already taught as {_A[found[1]]}, not {_A[kind]}")
        return int(found[0])

    @staticmethod
    def _next_version(db: sqlite3.Connection, table: str, name_id: int) -> int:
        row = db.execute(f"SELECT COALESCE(MAX(version), 0) FROM {table} WHERE name_id = ?", (name_id,)).fetchone()
        return int(row[0]) + 1

    def _insert_object(self, db: sqlite3.Connection, row: dict[str, Any], at: float) -> int:
        name_id = self._name_id(db, row["name"], "object")
        version = self._next_version(db, "object_versions", name_id)
        x, y, z = row["position"] if row["position"] is not None else (None, None, None)
        db.execute("INSERT INTO object_versions (name_id, version, x, y, z, description, source, created_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (name_id, version, x, y, z, row["description"], row["source"], at))
        return version

    def _insert_behaviour(self, db: sqlite3.Connection, row: dict[str, Any], at: float) -> int:
        name = row["name"]
        calls: tuple[str, ...] = row["calls"]
        depth = 1
        for i, callee in enumerate(calls):
            if callee == name:
                raise _Invalid(f"calls[{i}]", f"behaviour {name!r} calls itself")
            kind = self._kind(db, callee)
            if kind == "object":
                raise _Invalid(f"calls[{i}]", f"{callee!r} is an object, not a skill or behaviour")
            if kind == "behaviour":
                cycle = self._path_to(db, callee, name)
                if cycle:
                    raise _Invalid(f"calls[{i}]", "would make a cycle: " + " -> ".join([name, *cycle]))
                depth = max(depth, 1 + self._current_depth(db, callee))
        name_id = self._name_id(db, name, "behaviour")
        version = self._next_version(db, "behaviour_versions", name_id)
        if depth > MAX_DEPTH:
            raise _Invalid("calls", f"composition depth {depth} is more than {MAX_DEPTH}")
        cursor = db.execute(
            "INSERT INTO behaviour_versions (name_id, version, params, doc, body, depth, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (name_id, version, json.dumps(list(row["params"])), row["doc"], row["body"], depth, at))
        db.executemany("INSERT INTO behaviour_calls (version_id, position, callee) VALUES (?, ?, ?)",
                       [(cursor.lastrowid, i, callee) for i, callee in enumerate(calls)])
        return version

    def _insert_skill(self, db: sqlite3.Connection, row: dict[str, Any], at: float) -> int:
        name_id = self._name_id(db, row["name"], "skill")
        version = self._next_version(db, "skill_versions", name_id)
        db.execute("INSERT INTO skill_versions (name_id, version, kind, params, doc, weights, created_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (name_id, version, row["kind"], json.dumps(list(row["params"])), row["doc"], row["weights"], at))
        return version

    @staticmethod
    def _kind(db: sqlite3.Connection, name: str) -> Kind | None:
        row = db.execute("SELECT kind FROM names WHERE name = ?", (name,)).fetchone()
        return None if row is None else row[0]

    @staticmethod
    def _current_calls(db: sqlite3.Connection, name: str) -> list[str]:
        rows = db.execute(
            "SELECT c.callee FROM behaviour_calls c WHERE c.version_id = (SELECT v.id FROM behaviour_versions v "
            "JOIN names n ON n.id = v.name_id WHERE n.name = ? ORDER BY v.version DESC LIMIT 1) ORDER BY c.position",
            (name,)).fetchall()
        return [r[0] for r in rows]

    @staticmethod
    def _current_depth(db: sqlite3.Connection, name: str) -> int:
        row = db.execute("SELECT v.depth FROM behaviour_versions v JOIN names n ON n.id = v.name_id "
                         "WHERE n.name = ? ORDER BY v.version DESC LIMIT 1", (name,)).fetchone()
        return 0 if row is None else int(row[0])

    def _path_to(self, db: sqlite3.Connection, start: str, target: str) -> list[str]:
        """A chain of current behaviour calls from `start` to `target` ([] if there is none)."""
        parents: dict[str, str | None] = {start: None}
        frontier = [start]
        while frontier:
            node = frontier.pop()
            for callee in self._current_calls(db, node):
                if callee in parents:
                    continue
                parents[callee] = node
                if callee == target:
                    chain = [callee]
                    back: str | None = node
                    while back is not None:
                        chain.append(back)
                        back = parents[back]
                    return chain[::-1]
                frontier.append(callee)
        return []

    # -- reading ---------------------------------------------------------------------------------------------

    def objects(self) -> list[ObjectRecord]:
        """The current version of every object, by name."""
        with self._read() as db:
            return [self._object(r) for r in db.execute(_current("object_versions"))]

    def behaviours(self) -> list[BehaviourRecord]:
        """The current version of every behaviour, by name."""
        with self._read() as db:
            return [self._behaviour(db, r) for r in db.execute(_current("behaviour_versions")).fetchall()]

    def skills(self) -> list[SkillRecord]:
        """The current version of every demonstrated skill, by name."""
        with self._read() as db:
            return [self._skill(r) for r in db.execute(_current("skill_versions"))]

    def get(self, name: str) -> Record | None:
        """The current version of `name` (object, behaviour or skill), or None if it is not taught."""
        versions = self.versions(name)
        return versions[-1] if versions else None

    def versions(self, name: str) -> list[Record]:
        """Every version of `name`, oldest first ([] if it is not taught)."""
        with self._read() as db:
            return self._versions(db, name)

    def _versions(self, db: sqlite3.Connection, name: str) -> list[Record]:
        kind = self._kind(db, name)
        if kind is None:
            return []
        rows = db.execute(_all_versions(schema.VERSION_TABLES[kind]), (name,)).fetchall()
        if kind == "object":
            return [self._object(r) for r in rows]
        if kind == "behaviour":
            return [self._behaviour(db, r) for r in rows]
        return [self._skill(r) for r in rows]

    def dependents(self, name: str) -> list[str]:
        """Behaviours whose current version calls `name` directly, by name (check before `undo`)."""
        with self._read() as db:
            rows = db.execute(
                "SELECT DISTINCT n.name FROM names n JOIN behaviour_versions v ON v.name_id = n.id "
                "JOIN behaviour_calls c ON c.version_id = v.id WHERE c.callee = ? "
                "AND v.version = (SELECT MAX(version) FROM behaviour_versions WHERE name_id = n.id) ORDER BY n.name",
                (name,)).fetchall()
        return [r[0] for r in rows]

    @staticmethod
    def _object(r: sqlite3.Row | tuple[Any, ...]) -> ObjectRecord:
        name, version, x, y, z, description, source, created_at = r
        position = None if x is None else (float(x), float(y), float(z))
        return ObjectRecord(name, version, position, description, source, created_at)

    @staticmethod
    def _behaviour(db: sqlite3.Connection, r: sqlite3.Row | tuple[Any, ...]) -> BehaviourRecord:
        name, version_id, version, params, doc, body, depth, created_at = r
        calls = tuple(c[0] for c in db.execute(
            "SELECT callee FROM behaviour_calls WHERE version_id = ? ORDER BY position", (version_id,)))
        return BehaviourRecord(name, version, tuple(json.loads(params)), doc, body, calls, depth, created_at)

    @staticmethod
    def _skill(r: sqlite3.Row | tuple[Any, ...]) -> SkillRecord:
        name, version, kind, params, doc, weights, created_at = r
        return SkillRecord(name, version, kind, tuple(json.loads(params)), doc, json.loads(weights), created_at)

    # -- undo ------------------------------------------------------------------------------------------------

    def undo(self, name: str) -> Record | None:
        """Drop the newest version of `name`; returns the version now current, or None if `name` is gone.

        Behaviours that call `name` keep their text (see `dependents`). DataError if `name` is not taught.
        """
        with self._write() as db:
            kind = self._kind(db, name)
            if kind is None:
                raise _Invalid("name", f"nothing named {name!r} is taught")
            table = schema.VERSION_TABLES[kind]
            db.execute(f"DELETE FROM {table} WHERE id = (SELECT v.id FROM {table} v JOIN names n ON n.id = v.name_id "
                       "WHERE n.name = ? ORDER BY v.version DESC LIMIT 1)", (name,))
            remaining = self._versions(db, name)
            if not remaining:
                db.execute("DELETE FROM names WHERE name = ?", (name,))
                return None
            return remaining[-1]

    # -- sessions --------------------------------------------------------------------------------------------

    def start_session(self, scene: str, model: str) -> int:
        """Start a session in `scene` with planner `model`; returns its id."""
        with self._guard():
            _check_text(scene, "scene", MAX_LABEL, lines=False)
            _check_text(model, "model", MAX_LABEL, lines=False)
        with self._write() as db:
            cursor = db.execute("INSERT INTO sessions (scene, model, started_at) VALUES (?, ?, ?)",
                                (scene, model, self._clock()))
            return int(cursor.lastrowid or 0)

    def log(self, session: int, kind: str, payload: Mapping[str, Any] | None = None) -> None:
        """Append an event (`kind` a name such as ``confirmation``, ``correction``, ``teach``, ``skill_failure``)."""
        with self._guard():
            _check_name(kind, "event kind")
            text = _check_json({} if payload is None else payload, "payload", MAX_PAYLOAD_BYTES)
        with self._write() as db:
            self._open_session(db, session)
            db.execute("INSERT INTO events (session_id, kind, payload, at) VALUES (?, ?, ?, ?)",
                       (session, kind, text, self._clock()))

    def end_session(self, session: int) -> None:
        """Mark a session ended; DataError if it is unknown or already ended."""
        with self._write() as db:
            self._open_session(db, session)
            db.execute("UPDATE sessions SET ended_at = ? WHERE id = ?", (self._clock(), session))

    @staticmethod
    def _open_session(db: sqlite3.Connection, session: int) -> None:
        row = db.execute("SELECT ended_at FROM sessions WHERE id = ?", (session,)).fetchone()
        if row is None:
            raise _Invalid("session", f"no session {session!r}")
        if row[0] is not None:
            raise _Invalid("session", f"session {session} has ended")

    def sessions(self) -> list[SessionRecord]:
        """Every session, oldest first."""
        with self._read() as db:
            return [SessionRecord(*r) for r in db.execute(
                "SELECT id, scene, model, started_at, ended_at FROM sessions ORDER BY id")]

    def events(self, session: int) -> list[EventRecord]:
        """The events of `session` in the order they were logged."""
        with self._read() as db:
            rows = db.execute("SELECT id, session_id, kind, payload, at FROM events WHERE session_id = ? ORDER BY id",
                              (session,)).fetchall()
        return [EventRecord(i, s, k, json.loads(p), at) for i, s, k, p, at in rows]

    # -- export / import -------------------------------------------------------------------------------------

    def export_json(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write the whole library (every version, every session) as `situated-library/1` JSON.

        The file appears atomically and complete; an existing file is replaced only with `overwrite`, and never
        when it is this library's own database.
        """
        target = Path(path)
        if _same_file(target, self._path) or any(
                _same_file(target, Path(f"{self._path}{suffix}")) for suffix in ("-wal", "-shm")):
            raise DataError(f"{target}: is the library's own database; export elsewhere")
        with self._read() as db:
            document = self._document(db)
        text = json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
        _write_atomically(target, text.encode("utf-8"), overwrite)

    def _document(self, db: sqlite3.Connection) -> dict[str, Any]:
        groups: dict[Kind, list[dict[str, Any]]] = {"object": [], "behaviour": [], "skill": []}
        for name, kind in db.execute("SELECT name, kind FROM names ORDER BY name").fetchall():
            versions = [_record_dict(r) for r in self._versions(db, name)]
            groups[kind].append({"name": name, "versions": versions})
        sessions = []
        for sid, scene, model, started_at, ended_at in db.execute(
                "SELECT id, scene, model, started_at, ended_at FROM sessions ORDER BY id").fetchall():
            events = [{"kind": k, "payload": json.loads(p), "at": at} for k, p, at in db.execute(
                "SELECT kind, payload, at FROM events WHERE session_id = ? ORDER BY id", (sid,))]
            sessions.append({"scene": scene, "model": model, "started_at": started_at, "ended_at": ended_at,
                             "events": events})
        return {"format": EXPORT_FORMAT, "objects": groups["object"], "behaviours": groups["behaviour"],
                "skills": groups["skill"], "sessions": sessions}

    def import_json(self, path: str | os.PathLike[str]) -> None:
        """Add everything in a `situated-library/1` file: all of it, or (on any problem) nothing.

        Every field is validated first (DataError naming the file and field). A name the library already holds
        is a conflict, not a merge; imported sessions get new ids.
        """
        file = Path(path)
        document = _read_json(file)
        try:
            plan = _import_plan(document)
        except _Invalid as err:
            raise DataError(f"{file}: {err}") from None
        with self._write() as db:
            try:
                self._apply_import(db, plan)
            except _Invalid as err:
                raise DataError(f"{file}: {err}") from None

    def _apply_import(self, db: sqlite3.Connection, plan: _ImportPlan) -> None:
        for field, _, name, _ in plan.names:
            if self._kind(db, name) is not None:
                raise _Invalid(f"{field}.name", f"{name!r} is already in the library {self._path}")
        for _, kind, _, versions in plan.names:
            if kind != "behaviour":
                continue
            for row in versions:  # calls are checked once every name exists, below
                name_id = self._name_id(db, row["name"], "behaviour")
                cursor = db.execute(
                    "INSERT INTO behaviour_versions (name_id, version, params, doc, body, depth, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (name_id, row["version"], json.dumps(list(row["params"])), row["doc"], row["body"], row["depth"],
                     row["created_at"]))
                db.executemany("INSERT INTO behaviour_calls (version_id, position, callee) VALUES (?, ?, ?)",
                               [(cursor.lastrowid, i, c) for i, c in enumerate(row["calls"])])
        for _, kind, _, versions in plan.names:
            for row in versions:
                if kind == "object":
                    self._insert_object(db, row, row["created_at"])
                elif kind == "skill":
                    self._insert_skill(db, row, row["created_at"])
        for field, kind, name, versions in plan.names:
            if kind != "behaviour":
                continue
            for i, callee in enumerate(versions[-1]["calls"]):
                where = f"{field}.versions[{len(versions) - 1}].calls[{i}]"
                callee_kind = self._kind(db, callee)
                if callee_kind == "object":
                    raise _Invalid(where, f"{callee!r} is an object, not a skill or behaviour")
                if callee == name or (callee_kind == "behaviour" and self._path_to(db, callee, name)):
                    raise _Invalid(where, f"{name!r} would call itself through {callee!r}")
        for session in plan.sessions:
            cursor = db.execute("INSERT INTO sessions (scene, model, started_at, ended_at) VALUES (?, ?, ?, ?)",
                                (session["scene"], session["model"], session["started_at"], session["ended_at"]))
            db.executemany("INSERT INTO events (session_id, kind, payload, at) VALUES (?, ?, ?, ?)",
                           [(cursor.lastrowid, e["kind"], e["payload"], e["at"]) for e in session["events"]])

    # -- health ----------------------------------------------------------------------------------------------

    def integrity(self) -> str:
        """Return "ok", or the problems found one a line (SQLite's integrity and foreign-key checks, then ours)."""
        with self._read() as db:
            problems = [r[0] for r in db.execute("PRAGMA integrity_check") if r[0] != "ok"]
            problems += [f"foreign key: {table} row {rowid} refers to a missing {parent} row"
                         for table, rowid, parent, _ in db.execute("PRAGMA foreign_key_check")]
            for kind, table in schema.VERSION_TABLES.items():
                problems += [f"{kind} {name!r} has no versions" for (name,) in db.execute(
                    f"SELECT name FROM names n WHERE kind = ? AND NOT EXISTS "
                    f"(SELECT 1 FROM {table} v WHERE v.name_id = n.id)", (kind,))]
                problems += [f"{kind} {name!r} has versions in {table}" for (name,) in db.execute(
                    f"SELECT DISTINCT n.name FROM {table} v JOIN names n ON n.id = v.name_id WHERE n.kind != ?",
                    (kind,))]
        return "\n".join(problems) if problems else "ok"


_COLUMNS = {
    "object_versions": "v.version, v.x, v.y, v.z, v.description, v.source, v.created_at",
    "behaviour_versions": "v.id, v.version, v.params, v.doc, v.body, v.depth, v.created_at",
    "skill_versions": "v.version, v.kind, v.params, v.doc, v.weights, v.created_at",
}


def _current(table: str) -> str:
    return (f"SELECT n.name, {_COLUMNS[table]} FROM names n JOIN {table} v ON v.name_id = n.id "
            f"WHERE v.version = (SELECT MAX(version) FROM {table} WHERE name_id = n.id) ORDER BY n.name")


def _all_versions(table: str) -> str:
    return (f"SELECT n.name, {_COLUMNS[table]} FROM names n JOIN {table} v ON v.name_id = n.id "
            "WHERE n.name = ? ORDER BY v.version")


# ---------------------------------------------------------------------------------------------------------------
# Opening checks.


def _precheck(file: Path) -> None:
    """Refuse, before SQLite touches it, anything at `file` that is not a regular file starting like SQLite."""
    try:
        if not file.exists():
            if not file.parent.is_dir():
                raise DataError(f"{file}: cannot create the skill library: no directory {file.parent}")
            return
        if not file.is_file():
            raise DataError(f"{file}: not a regular file")
        with file.open("rb") as handle:
            head = handle.read(100)
    except OSError as err:
        raise DataError(f"{file}: cannot read ({err.strerror or err})") from None
    if head and (len(head) < 100 or not head.startswith(_SQLITE_MAGIC)):
        raise DataError(f"{file}: not an SQLite database, so not a skill library")


def _identify(db: sqlite3.Connection, file: Path, *, check: bool = True) -> int:
    """The schema version of a library file (0 for an empty file); DataError for a foreign, newer or corrupt one.

    Reads only: a file found not to be ours is never written.
    """
    app_id = int(db.execute("PRAGMA application_id").fetchone()[0])
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")}
    if app_id == 0 and version == 0 and not tables:
        return 0
    if app_id == 0:
        raise DataError(f"{file}: an SQLite database that is not a skill library (tables: "
                        f"{', '.join(sorted(tables))[:200] or 'none'})")
    if app_id != schema.APPLICATION_ID:
        raise DataError(f"{file}: an SQLite database of another application (application_id {app_id}), "
                        "not a skill library")
    if version > schema.schema_version():
        raise DataError(f"{file}: skill library schema version {version} is newer than this situated "
                        f"understands ({schema.schema_version()}); upgrade situated")
    problems = [r[0] for r in db.execute("PRAGMA quick_check")] if check else ["ok"]
    if problems != ["ok"]:
        raise DataError(f"{file}: the skill library is corrupt ({'; '.join(problems)[:200]})")
    if version == schema.schema_version():
        _check_tables(db, file)
    return version


def _check_tables(db: sqlite3.Connection, file: Path) -> None:
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                       "AND name NOT LIKE 'sqlite_%'")}
    if tables != schema.TABLES:
        odd = sorted(tables ^ schema.TABLES)
        raise DataError(f"{file}: not a skill library of schema version {schema.schema_version()} "
                        f"(unexpected or missing tables: {', '.join(odd)})")


# ---------------------------------------------------------------------------------------------------------------
# Export / import helpers.


def _record_dict(record: Record) -> dict[str, Any]:
    if isinstance(record, ObjectRecord):
        return {"version": record.version, "position": None if record.position is None else list(record.position),
                "description": record.description, "source": record.source, "created_at": record.created_at}
    if isinstance(record, BehaviourRecord):
        return {"version": record.version, "params": list(record.params), "doc": record.doc, "body": record.body,
                "calls": list(record.calls), "depth": record.depth, "created_at": record.created_at}
    return {"version": record.version, "kind": record.kind, "params": list(record.params), "doc": record.doc,
            "weights": record.weights, "created_at": record.created_at}


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _write_atomically(target: Path, data: bytes, overwrite: bool) -> None:
    """Write `data` to a temporary file beside `target`, fsync it, then move it into place."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as err:
        raise DataError(f"{target}: cannot write ({err.strerror or err})") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if overwrite:
            os.replace(tmp, target)
        else:
            os.link(tmp, target)  # fails if target exists: no check-then-write race
            os.unlink(tmp)
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except FileExistsError:
        raise DataError(f"{target}: already exists; choose another file or pass overwrite") from None
    except OSError as err:
        raise DataError(f"{target}: cannot write ({err.strerror or err})") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _read_json(file: Path) -> Any:
    """A guarded read (`situated.files`): a regular file of at most MAX_IMPORT_BYTES of UTF-8 JSON, bounded
    nesting and numbers, no duplicate keys, no NaN."""
    return files.read_json(file, what="library export", limit=MAX_IMPORT_BYTES, duplicate_keys="error")


@dataclass(frozen=True)
class _ImportPlan:
    names: list[tuple[str, Kind, str, list[dict[str, Any]]]]  # (field, kind, name, validated version rows)
    sessions: list[dict[str, Any]]


def _fields(value: object, field: str, required: set[str], optional: frozenset[str] = frozenset()) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Invalid(field, "must be an object")
    missing = required - value.keys()
    if missing:
        raise _Invalid(field, f"lacks {', '.join(sorted(missing))}")
    extra = value.keys() - required - optional
    if extra:
        raise _Invalid(field, f"has unknown field {sorted(extra)[0]!r}")
    return value


def _list(value: object, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Invalid(field, "must be a list")
    return value


def _object_row(name: object, position: object, description: object, source: object, field: str) -> dict[str, Any]:
    return {"name": _check_name(name, f"{field} name"), "position": _check_position(position, "position"),
            "description": _check_text(description, "description", MAX_DOC),
            "source": _check_choice(source, "source", SOURCES)}


def _behaviour_row(name: object, params: object, doc: object, body: object, calls: object, depth: object,
                   field: str) -> dict[str, Any]:
    return {"name": _check_name(name, f"{field} name"),
            "params": _check_names(params, "params", MAX_PARAMS, unique=True),
            "doc": _check_text(doc, "doc", MAX_DOC), "body": _check_text(body, "body", MAX_BODY),
            "calls": _check_names(calls, "calls", MAX_CALLS, unique=False),
            "depth": None if depth is None else _check_int(depth, "depth", 1, MAX_DEPTH)}


def _skill_row(name: object, params: object, doc: object, weights: object, kind: object,
               field: str) -> dict[str, Any]:
    return {"name": _check_name(name, f"{field} name"),
            "params": _check_names(params, "params", MAX_PARAMS, unique=True),
            "doc": _check_text(doc, "doc", MAX_DOC), "weights": _check_json(weights, "weights", MAX_WEIGHTS_BYTES),
            "kind": _check_choice(kind, "kind", SKILL_KINDS)}


_VERSION_FIELDS: dict[Kind, set[str]] = {
    "object": {"version", "position", "description", "source", "created_at"},
    "behaviour": {"version", "params", "doc", "body", "calls", "depth", "created_at"},
    "skill": {"version", "kind", "params", "doc", "weights", "created_at"},
}


def _import_plan(document: object) -> _ImportPlan:
    top = _fields(document, "(top level)", {"format", "objects", "behaviours", "skills", "sessions"})
    if top["format"] != EXPORT_FORMAT:
        raise _Invalid("format", f"must be {EXPORT_FORMAT!r}, not {_short(top['format'])}")
    names: list[tuple[str, Kind, str, list[dict[str, Any]]]] = []
    seen: set[str] = set()
    groups: tuple[tuple[str, Kind], ...] = (("objects", "object"), ("behaviours", "behaviour"), ("skills", "skill"))
    for key, kind in groups:
        for i, entry in enumerate(_list(top[key], key)):
            field = f"{key}[{i}]"
            entry = _fields(entry, field, {"name", "versions"})
            name = _check_name(entry["name"], f"{field}.name")
            if name in seen:
                raise _Invalid(f"{field}.name", f"{name!r} appears twice")
            seen.add(name)
            versions = _list(entry["versions"], f"{field}.versions")
            if not versions:
                raise _Invalid(f"{field}.versions", "must not be empty")
            rows = []
            for j, version in enumerate(versions):
                where = f"{field}.versions[{j}]"
                v = _fields(version, where, _VERSION_FIELDS[kind])
                try:
                    if kind == "object":
                        row = _object_row(name, v["position"], v["description"], v["source"], "object")
                    elif kind == "behaviour":
                        row = _behaviour_row(name, v["params"], v["doc"], v["body"], v["calls"], v["depth"],
                                             "behaviour")
                        if v["depth"] is None:
                            raise _Invalid("depth", "must be an integer")
                    else:
                        row = _skill_row(name, v["params"], v["doc"], v["weights"], v["kind"], "skill")
                    _check_int(v["version"], "version", j + 1, j + 1)
                    row["version"] = j + 1
                    row["created_at"] = _check_number(v["created_at"], "created_at")
                except _Invalid as err:
                    raise _Invalid(where, str(err)) from None
                rows.append(row)
            names.append((field, kind, name, rows))
    sessions = []
    for i, entry in enumerate(_list(top["sessions"], "sessions")):
        field = f"sessions[{i}]"
        s = _fields(entry, field, {"scene", "model", "started_at", "ended_at", "events"})
        try:
            session = {"scene": _check_text(s["scene"], "scene", MAX_LABEL, lines=False),
                       "model": _check_text(s["model"], "model", MAX_LABEL, lines=False),
                       "started_at": _check_number(s["started_at"], "started_at"),
                       "ended_at": None if s["ended_at"] is None else _check_number(s["ended_at"], "ended_at"),
                       "events": []}
        except _Invalid as err:
            raise _Invalid(field, str(err)) from None
        for j, event in enumerate(_list(s["events"], f"{field}.events")):
            where = f"{field}.events[{j}]"
            e = _fields(event, where, {"kind", "payload", "at"})
            try:
                session["events"].append({"kind": _check_name(e["kind"], "kind"),
                                          "payload": _check_json(e["payload"], "payload", MAX_PAYLOAD_BYTES),
                                          "at": _check_number(e["at"], "at")})
            except _Invalid as err:
                raise _Invalid(where, str(err)) from None
        sessions.append(session)
    return _ImportPlan(names, sessions)

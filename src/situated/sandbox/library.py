"""The skill library: what a user taught the robot (objects, behaviours, demonstrated skills) and session logs.

One SQLite file per library (see `library_schema` for the tables). Every change is one ``BEGIN IMMEDIATE``
transaction; the file is in WAL mode with ``synchronous=FULL``, so a change whose call has returned survives the
process being killed at any moment *and* a power cut (``NORMAL`` would survive only the former; teaching happens
at the pace of speech, so the one fsync per commit costs nothing a user could notice). Every taught version is
kept; `SkillLibrary.undo` drops the newest one.

The parts, one job each: `library_records` (the typed records, limits and value checks), `library_rows` (rows
read back, every value checked), `library_file` (opening: what is refused before anything runs), `library_store`
(the versioned store), `library_graph` (depths and cycles in one linear pass), `library_log` (sessions and
events), `library_transfer` (export and import). A file that is not a healthy library is refused with a one-line
`DataError` naming it and is only read; a bad row is a one-line `DataError` naming file, table, row and field.

Behaviour bodies are plan-program text, stored and returned verbatim: parsing and validating them is the caller's
business, and nothing here executes them.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from .. import files
from ..errors import DataError
from . import library_schema as schema
from .library_file import connect
from .library_graph import call_graph
from .library_log import SessionLog
from .library_records import (
    MAX_BEHAVIOURS,
    MAX_BODY,
    MAX_CALLS,
    MAX_DEPTH,
    MAX_DOC,
    MAX_IMPORT_BYTES,
    MAX_JSON_DEPTH,
    MAX_LABEL,
    MAX_NAME,
    MAX_PARAMS,
    MAX_PAYLOAD_BYTES,
    MAX_WEIGHTS_BYTES,
    SKILL_KINDS,
    SOURCES,
    BehaviourRecord,
    EventRecord,
    Invalid,
    Kind,
    ObjectRecord,
    Record,
    SessionRecord,
    SkillRecord,
    Source,
)
from .library_rows import COLUMNS, READERS, read_behaviour, read_event, read_name, read_session
from .library_store import VersionStore
from .library_transfer import EXPORT_FORMAT, apply_import, export_target, export_text, read_export

__all__ = [
    "EXPORT_FORMAT", "MAX_BEHAVIOURS", "MAX_BODY", "MAX_CALLS", "MAX_DEPTH", "MAX_DOC", "MAX_IMPORT_BYTES",
    "MAX_JSON_DEPTH", "MAX_LABEL", "MAX_NAME", "MAX_PARAMS", "MAX_PAYLOAD_BYTES", "MAX_WEIGHTS_BYTES", "SKILL_KINDS",
    "SOURCES", "BehaviourRecord", "EventRecord", "Kind", "ObjectRecord", "Record", "SessionRecord", "SkillLibrary",
    "SkillRecord", "Source",
]

MAX_PROBLEMS = 50
"""Most problems `integrity` lists (then how many more there are)."""


class SkillLibrary(VersionStore, SessionLog):
    """A persistent, versioned skill library in one SQLite file; use `SkillLibrary.open` (a context manager)."""

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, clock: Callable[[], float] = time.time,
             timeout: float = 5.0) -> SkillLibrary:
        """Open the library at `path`, creating it if absent (or empty) and migrating an older schema.

        `clock` gives the POSIX time stamped on changes and events; `timeout` is how long (seconds) to wait for
        another process's write to finish. Raises DataError for anything that is not a healthy library file of
        this or an older schema version.
        """
        file = Path(path)
        return cls(connect(file, timeout), file, clock)

    def __enter__(self) -> SkillLibrary:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- export / import -------------------------------------------------------------------------------------

    def export_json(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write the whole library (every version, every session) as `situated-library/1` JSON.

        The file appears atomically and complete, and only as a regular file; an existing file is replaced only
        with `overwrite`, and never when it is this library's own database or its -wal/-shm.
        """
        target = export_target(path, self._path, overwrite=overwrite)
        with self._read() as db:
            text = export_text(self, db)
        if not overwrite and os.path.lexists(target):  # appeared while we read
            raise DataError(f"{target}: output exists; pass --force to overwrite it")
        files.write_text_atomic(target, text)

    def import_json(self, path: str | os.PathLike[str]) -> None:
        """Add everything in a `situated-library/1` file: all of it, or (on any problem) nothing.

        Every field is validated first (DataError naming the file and field), then the caps and the call graph.
        A name the library already holds is a conflict, not a merge; imported sessions get new ids.
        """
        file = Path(path)
        plan = read_export(file)
        with self._write() as db:
            try:
                apply_import(self, db, plan)
            except Invalid as err:
                raise DataError(f"{file}: {err}") from None

    # -- health ----------------------------------------------------------------------------------------------

    def integrity(self) -> str:
        """Return "ok", or the problems found one a line: SQLite's integrity and foreign-key checks, then every
        row read as the library reads it (a bad value names its table, row and field), then the names and the
        current call graph (cycles, depth)."""
        with self._read() as db:
            problems = [" ".join(str(r[0]).split()) for r in db.execute("PRAGMA integrity_check") if r[0] != "ok"]
            problems += [f"foreign key: {table} row {rowid} refers to a missing {parent} row"
                         for table, rowid, parent, _ in db.execute("PRAGMA foreign_key_check")]
            problems += _row_problems(db)
            for kind, table in schema.VERSION_TABLES.items():
                problems += [f"{kind} {name!r} has no versions" for (name,) in db.execute(
                    f"SELECT name FROM names n WHERE kind = ? AND NOT EXISTS "
                    f"(SELECT 1 FROM {table} v WHERE v.name_id = n.id)", (kind,))]
                problems += [f"{kind} {name!r} has versions in {table}" for (name,) in db.execute(
                    f"SELECT DISTINCT n.name FROM {table} v JOIN names n ON n.id = v.name_id WHERE n.kind != ?",
                    (kind,))]
            try:
                graph = self._call_graph(db)
            except Invalid:  # a bad name or callee, listed above
                graph = {}
            result = call_graph(graph)
            problems += [f"behaviour {name!r} is on (or calls) a cycle of behaviours" for name in result.cyclic]
            problems += [f"behaviour {name!r} has composition depth {depth}, more than {MAX_DEPTH}"
                         for name, depth in sorted(result.depths.items()) if depth > MAX_DEPTH]
            if len(graph) > MAX_BEHAVIOURS:
                problems.append(f"{len(graph)} behaviours, more than {MAX_BEHAVIOURS}")
        if len(problems) > MAX_PROBLEMS:
            problems = [*problems[:MAX_PROBLEMS], f"and {len(problems) - MAX_PROBLEMS} more problems"]
        return "\n".join(problems) if problems else "ok"


def _row_problems(db: sqlite3.Connection) -> list[str]:
    """Every row of every table read as the library reads it: the first bad value of each bad row."""
    problems: list[str] = []

    def check(reader: Callable[..., object], *args: object) -> None:
        try:
            reader(*args)
        except Invalid as err:
            problems.append(str(err))

    for row in db.execute("SELECT id, name, kind FROM names"):
        check(read_name, row)
    for table, reader in READERS.items():
        for row in db.execute(f"SELECT {COLUMNS[table]} FROM {table} v LEFT JOIN names n ON n.id = v.name_id"):
            if table == "behaviour_versions":
                calls = db.execute("SELECT rowid, position, callee FROM behaviour_calls WHERE version_id = ? "
                                   "ORDER BY position", (row[0],)).fetchall()
                check(read_behaviour, row, calls)
            else:
                check(reader, row)
    for row in db.execute("SELECT id, scene, model, started_at, ended_at FROM sessions"):
        check(read_session, row)
    for row in db.execute("SELECT id, session_id, kind, payload, at FROM events"):
        check(read_event, row)
    return problems

"""The on-disk schema of the skill library and its ordered migrations.

A library file is an SQLite database marked with `APPLICATION_ID` (``PRAGMA application_id``) whose
``PRAGMA user_version`` is the number of migrations applied to it. `MIGRATIONS[i]` takes a file from version `i` to
`i + 1`; all pending migrations run in one transaction together with the version bump, so a file is always at
exactly one known version. Never edit a released migration: append a new one.

Tables (version 1):

- ``names``: one row per taught name (one namespace for objects, behaviours and skills, as in the planner's API).
- ``object_versions``, ``behaviour_versions``, ``skill_versions``: every version ever taught of a name, numbered
  1, 2, ... per name; the highest is the current one. ``undo`` deletes the highest.
- ``behaviour_calls``: the skills and behaviours each behaviour version calls, in order (names, not keys: a
  behaviour may call seed skills that the library does not hold).
- ``sessions`` and ``events``: interaction sessions and their timestamped events (JSON payloads).

Times are POSIX seconds (REAL); lists and JSON values are stored as JSON text.

A file's whole schema (every table, column, index, trigger and view: the rows of ``sqlite_master``) must be
exactly what the migrations write (`schema_problem`); a file carrying anything else, such as a trigger, is refused
before any statement could run it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

#: "SITU" in ASCII: marks a file as a situated skill library (``PRAGMA application_id``).
APPLICATION_ID = 0x53495455

Migration = Sequence[str] | Callable[[sqlite3.Connection], None]

_V1: tuple[str, ...] = (
    """CREATE TABLE names (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL CHECK (kind IN ('object', 'behaviour', 'skill'))
    )""",
    """CREATE TABLE object_versions (
        id INTEGER PRIMARY KEY,
        name_id INTEGER NOT NULL REFERENCES names(id) ON DELETE CASCADE,
        version INTEGER NOT NULL CHECK (version >= 1),
        x REAL, y REAL, z REAL,
        description TEXT NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('pointed', 'scene')),
        created_at REAL NOT NULL,
        UNIQUE (name_id, version),
        CHECK ((x IS NULL AND y IS NULL AND z IS NULL) OR (x IS NOT NULL AND y IS NOT NULL AND z IS NOT NULL))
    )""",
    """CREATE TABLE behaviour_versions (
        id INTEGER PRIMARY KEY,
        name_id INTEGER NOT NULL REFERENCES names(id) ON DELETE CASCADE,
        version INTEGER NOT NULL CHECK (version >= 1),
        params TEXT NOT NULL,
        doc TEXT NOT NULL,
        body TEXT NOT NULL,
        depth INTEGER NOT NULL CHECK (depth >= 1),
        created_at REAL NOT NULL,
        UNIQUE (name_id, version)
    )""",
    """CREATE TABLE behaviour_calls (
        version_id INTEGER NOT NULL REFERENCES behaviour_versions(id) ON DELETE CASCADE,
        position INTEGER NOT NULL CHECK (position >= 0),
        callee TEXT NOT NULL,
        PRIMARY KEY (version_id, position)
    )""",
    "CREATE INDEX behaviour_calls_callee ON behaviour_calls (callee)",
    """CREATE TABLE skill_versions (
        id INTEGER PRIMARY KEY,
        name_id INTEGER NOT NULL REFERENCES names(id) ON DELETE CASCADE,
        version INTEGER NOT NULL CHECK (version >= 1),
        kind TEXT NOT NULL CHECK (kind IN ('dmp')),
        params TEXT NOT NULL,
        doc TEXT NOT NULL,
        weights TEXT NOT NULL,
        created_at REAL NOT NULL,
        UNIQUE (name_id, version)
    )""",
    """CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        scene TEXT NOT NULL,
        model TEXT NOT NULL,
        started_at REAL NOT NULL,
        ended_at REAL
    )""",
    """CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        at REAL NOT NULL
    )""",
    "CREATE INDEX events_session ON events (session_id, id)",
)

#: Ordered migrations; `len(MIGRATIONS)` is the schema version this code writes.
MIGRATIONS: tuple[Migration, ...] = (_V1,)

#: The tables a file at the latest version holds (SQLite's own ``sqlite_*`` tables aside).
TABLES = frozenset(
    {"names", "object_versions", "behaviour_versions", "behaviour_calls", "skill_versions", "sessions", "events"}
)

#: Which table holds the versions of each kind of name.
VERSION_TABLES = {"object": "object_versions", "behaviour": "behaviour_versions", "skill": "skill_versions"}


def schema_version() -> int:
    """The schema version this code writes."""
    return len(MIGRATIONS)


def expected_schema(version: int | None = None) -> frozenset[tuple[str, str, str, str | None]]:
    """The rows (type, name, table, sql) of ``sqlite_master`` in a file at `version` (default: the latest),
    as the migrations write them (built in memory)."""
    target = schema_version() if version is None else version
    key = (MIGRATIONS[:target], target)
    cached = _EXPECTED.get(key)
    if cached is None:
        db = sqlite3.connect(":memory:")
        try:
            db.execute("BEGIN")
            migrate(db, 0, target)
            cached = frozenset(db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
            db.execute("ROLLBACK")
        finally:
            db.close()
        _EXPECTED.clear()
        _EXPECTED[key] = cached
    return cached


_EXPECTED: dict[tuple[tuple[Migration, ...], int], frozenset[tuple[str, str, str, str | None]]] = {}


def schema_problem(db: sqlite3.Connection, version: int) -> str:
    """'' if the schema of `db` is exactly that of `version`; else one line naming what differs."""
    found = frozenset(db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
    expected = expected_schema(version)
    if found == expected:
        return ""
    extra = sorted(found - expected, key=lambda r: (r[0], r[1]))
    missing = sorted(expected - found, key=lambda r: (r[0], r[1]))
    names = {(t, n) for t, n, _, _ in expected}
    changed = {(t, n) for t, n, _, _ in extra} & names
    parts = [f"{'changed' if (kind, name) in changed else 'unexpected'} {kind} {_shown(name)}"
             for kind, name, _, _ in extra]
    parts += [f"missing {kind} {_shown(name)}" for kind, name, _, _ in missing if (kind, name) not in changed]
    shown = ", ".join(parts[:5]) + (f" and {len(parts) - 5} more" if len(parts) > 5 else "")
    return shown[:300]


def _shown(name: object) -> str:
    text = repr(name)
    return text if len(text) <= 40 else text[:37] + "..."


def migrate(db: sqlite3.Connection, current: int, target: int | None = None) -> None:
    """Apply `MIGRATIONS[current:target]` (default: all pending) and set ``user_version``; the caller holds the
    write transaction."""
    migrations = MIGRATIONS[:target] if target is not None else MIGRATIONS
    for migration in migrations[current:]:
        if callable(migration):
            migration(db)
        else:
            for statement in migration:
                db.execute(statement)
    db.execute(f"PRAGMA user_version = {len(migrations)}")

"""The versioned store of taught objects, behaviours and skills (one namespace; every version kept; undo).

Writes check every value (`library_records`); reads check every value of every row they return
(`library_rows`), so a row edited into nonsense is a one-line `DataError` naming the file, table, row and field,
never a traceback. Composition depth and cycles are found on the current call graph in linear time.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import library_schema as schema
from .library_file import LibraryFile
from .library_records import (
    A_KIND,
    MAX_BEHAVIOURS,
    MAX_CALLS,
    MAX_DEPTH,
    BehaviourRecord,
    Invalid,
    Kind,
    ObjectRecord,
    Record,
    SkillRecord,
    Source,
    behaviour_row,
    check_int,
    check_name,
    object_row,
    skill_row,
)
from .library_rows import COLUMNS, in_row, read_behaviour, read_name, read_object, read_skill


def _current(table: str) -> str:
    return (f"SELECT {COLUMNS[table]} FROM names n JOIN {table} v ON v.name_id = n.id "
            f"WHERE v.version = (SELECT MAX(version) FROM {table} WHERE name_id = n.id) ORDER BY n.name")


def _all_versions(table: str) -> str:
    return (f"SELECT {COLUMNS[table]} FROM names n JOIN {table} v ON v.name_id = n.id "
            "WHERE n.name = ? ORDER BY v.version")


_CALLS = "SELECT rowid, position, callee FROM behaviour_calls WHERE version_id = ? ORDER BY position"
_CURRENT_CALLS = ("SELECT n.id, n.name, n.kind, c.rowid, c.callee FROM names n "
                  "JOIN behaviour_versions v ON v.name_id = n.id JOIN behaviour_calls c ON c.version_id = v.id "
                  "WHERE v.version = (SELECT MAX(version) FROM behaviour_versions WHERE name_id = n.id) "
                  "ORDER BY n.name, c.position")


class VersionStore(LibraryFile):
    """Teaching, reading and undoing versions of names (see `SkillLibrary`, which adds sessions and transfer)."""

    def __init__(self, db: sqlite3.Connection, path: Path, clock: Callable[[], float]) -> None:
        super().__init__(db, path)
        self._clock = clock

    # -- teaching --------------------------------------------------------------------------------------------

    def add_object(self, name: str, position: Sequence[float] | None = None, description: str = "",
                   source: Source = "pointed") -> int:
        """Teach (or re-teach) an object; returns its new version number."""
        with self._guard():
            row = object_row(name, position, description, source)
        with self._write() as db:
            return self._insert_object(db, row, self._clock())

    def add_behaviour(self, name: str, params: Sequence[str], doc: str, body: str, calls: Sequence[str] = ()) -> int:
        """Teach (or re-teach) a behaviour; returns its new version number.

        `body` is plan-program text (stored verbatim); `calls` names the skills and behaviours it calls. Its
        composition depth is computed here: 1 + the deepest library behaviour it calls (skills, seed or taught,
        count 0). A call to an object, to itself or one that would close a cycle of behaviours is refused, and
        so is a depth over `MAX_DEPTH` or a behaviour past `MAX_BEHAVIOURS`.
        """
        with self._guard():
            row = behaviour_row(name, params, doc, body, calls)
        with self._write() as db:
            return self._insert_behaviour(db, row, self._clock())

    def add_skill(self, name: str, params: Sequence[str], doc: str, weights: Mapping[str, Any],
                  kind: str = "dmp") -> int:
        """Teach (or re-teach) a skill learned from a demonstration; returns its new version number.

        `weights` is any JSON object (for a DMP, `DmpSkill.to_dict()`); it is checked here only for being JSON.
        """
        with self._guard():
            row = skill_row(name, params, doc, weights, kind)
        with self._write() as db:
            return self._insert_skill(db, row, self._clock())

    def _name_id(self, db: sqlite3.Connection, name: str, kind: Kind) -> int:
        found = db.execute("SELECT id, name, kind FROM names WHERE name = ?", (name,)).fetchone()
        if found is None:
            return int(db.execute("INSERT INTO names (name, kind) VALUES (?, ?)", (name, kind)).lastrowid or 0)
        name_id, _, found_kind = read_name(found)
        if found_kind != kind:
            raise Invalid("name", f"{name!r} is already taught as {A_KIND[found_kind]}, not {A_KIND[kind]}")
        return name_id

    @staticmethod
    def _next_version(db: sqlite3.Connection, table: str, name_id: int) -> int:
        row = db.execute(f"SELECT MAX(version) FROM {table} WHERE name_id = ?", (name_id,)).fetchone()
        if row[0] is not None and (isinstance(row[0], bool) or not isinstance(row[0], int) or row[0] < 1):
            raise Invalid(f"{table}: version", f"{row[0]!r} is not a version number")
        return int(row[0] or 0) + 1

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
        behaviours = []
        for i, callee in enumerate(calls):
            if callee == name:
                raise Invalid(f"calls[{i}]", f"behaviour {name!r} calls itself")
            kind = self._kind(db, callee)
            if kind == "object":
                raise Invalid(f"calls[{i}]", f"{callee!r} is an object, not a skill or behaviour")
            if kind == "behaviour" and callee not in behaviours:
                behaviours.append(callee)
                depth = max(depth, 1 + self._current_depth(db, callee))
        if behaviours and self._kind(db, name) == "behaviour":  # only a name already taught can close a cycle
            cycle = _path(lambda node: self._current_calls(db, node), behaviours, name)
            if cycle:
                raise Invalid(f"calls[{calls.index(cycle[0])}]", "would make a cycle: " + " -> ".join([name, *cycle]))
        if depth > MAX_DEPTH:
            raise Invalid("calls", f"composition depth {depth} is more than {MAX_DEPTH}")
        if self._kind(db, name) is None:
            count = db.execute("SELECT COUNT(*) FROM names WHERE kind = 'behaviour'").fetchone()[0]
            if count >= MAX_BEHAVIOURS:
                raise Invalid("name", f"the library holds {MAX_BEHAVIOURS} behaviours, the most it may")
        name_id = self._name_id(db, name, "behaviour")
        version = self._next_version(db, "behaviour_versions", name_id)
        cursor = db.execute(
            "INSERT INTO behaviour_versions (name_id, version, params, doc, body, depth, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (name_id, version, json.dumps(list(row["params"])), row["doc"], row["body"], depth, at))
        db.executemany("INSERT INTO behaviour_calls (version_id, position, callee) VALUES (?, ?, ?)",
                       [(cursor.lastrowid, i, callee) for i, callee in enumerate(calls)])
        return version

    @staticmethod
    def _current_row(db: sqlite3.Connection, name: str) -> BehaviourRecord | None:
        row = db.execute(f"{_all_versions('behaviour_versions')} DESC LIMIT 1", (name,)).fetchone()
        return None if row is None else VersionStore._behaviour(db, row)

    @staticmethod
    def _current_calls(db: sqlite3.Connection, name: str) -> tuple[str, ...]:
        record = VersionStore._current_row(db, name)
        return () if record is None else record.calls

    @staticmethod
    def _current_depth(db: sqlite3.Connection, name: str) -> int:
        row = db.execute("SELECT v.id, v.depth FROM behaviour_versions v JOIN names n ON n.id = v.name_id "
                         "WHERE n.name = ? ORDER BY v.version DESC LIMIT 1", (name,)).fetchone()
        if row is None:
            return 0
        with in_row("behaviour_versions", row[0]):
            return check_int(row[1], "depth", 1, MAX_DEPTH)

    def _insert_skill(self, db: sqlite3.Connection, row: dict[str, Any], at: float) -> int:
        name_id = self._name_id(db, row["name"], "skill")
        version = self._next_version(db, "skill_versions", name_id)
        db.execute("INSERT INTO skill_versions (name_id, version, kind, params, doc, weights, created_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (name_id, version, row["kind"], json.dumps(list(row["params"])), row["doc"], row["weights"], at))
        return version

    @staticmethod
    def _kinds(db: sqlite3.Connection) -> dict[str, Kind]:
        """Every taught name and its kind (rows checked)."""
        kinds: dict[str, Kind] = {}
        for row in db.execute("SELECT id, name, kind FROM names"):
            _, name, kind = read_name(row)
            kinds[name] = kind  # type: ignore[assignment]
        return kinds

    @staticmethod
    def _kind(db: sqlite3.Connection, name: str) -> Kind | None:
        row = db.execute("SELECT id, name, kind FROM names WHERE name = ?", (name,)).fetchone()
        return None if row is None else read_name(row)[2]  # type: ignore[return-value]

    @staticmethod
    def _call_graph(db: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
        """Each behaviour's current calls (one query; every name read is checked)."""
        graph: dict[str, list[str]] = {}
        for row in db.execute(
                "SELECT n.id, n.name, n.kind FROM names n WHERE n.kind = 'behaviour' AND EXISTS "
                "(SELECT 1 FROM behaviour_versions v WHERE v.name_id = n.id)"):
            graph[read_name(row)[1]] = []
        for name_id, name, kind, call_id, callee in db.execute(_CURRENT_CALLS):
            _, caller, _ = read_name((name_id, name, kind))
            with in_row("behaviour_calls", call_id):
                graph.setdefault(caller, []).append(check_name(callee, "callee"))
        return {name: tuple(calls) for name, calls in graph.items()}

    # -- reading ---------------------------------------------------------------------------------------------

    def objects(self) -> list[ObjectRecord]:
        """The current version of every object, by name."""
        with self._read() as db:
            return [read_object(r) for r in db.execute(_current("object_versions"))]

    def behaviours(self) -> list[BehaviourRecord]:
        """The current version of every behaviour, by name (at most `MAX_BEHAVIOURS`)."""
        with self._read() as db:
            rows = db.execute(_current("behaviour_versions")).fetchmany(MAX_BEHAVIOURS + 1)
            if len(rows) > MAX_BEHAVIOURS:
                raise Invalid("behaviour_versions", f"holds more than {MAX_BEHAVIOURS} behaviours")
            return [self._behaviour(db, r) for r in rows]

    def skills(self) -> list[SkillRecord]:
        """The current version of every demonstrated skill, by name."""
        with self._read() as db:
            return [read_skill(r) for r in db.execute(_current("skill_versions"))]

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
            return [read_object(r) for r in rows]
        if kind == "behaviour":
            return [self._behaviour(db, r) for r in rows]
        return [read_skill(r) for r in rows]

    @staticmethod
    def _behaviour(db: sqlite3.Connection, row: Sequence[Any]) -> BehaviourRecord:
        calls = db.execute(_CALLS, (row[0],)).fetchmany(MAX_CALLS + 1)
        return read_behaviour(row, calls)

    def dependents(self, name: str) -> list[str]:
        """Behaviours whose current version calls `name` directly, by name (check before `undo`)."""
        with self._read() as db:
            return sorted(caller for caller, calls in self._call_graph(db).items() if name in calls)

    # -- undo ------------------------------------------------------------------------------------------------

    def undo(self, name: str) -> Record | None:
        """Drop the newest version of `name`; returns the version now current, or None if `name` is gone.

        Behaviours that call `name` keep their text (see `dependents`). DataError if `name` is not taught.
        """
        with self._write() as db:
            kind = self._kind(db, name)
            if kind is None:
                raise Invalid("name", f"nothing named {name!r} is taught")
            table = schema.VERSION_TABLES[kind]
            db.execute(f"DELETE FROM {table} WHERE id = (SELECT v.id FROM {table} v JOIN names n ON n.id = v.name_id "
                       "WHERE n.name = ? ORDER BY v.version DESC LIMIT 1)", (name,))
            remaining = self._versions(db, name)
            if not remaining:
                db.execute("DELETE FROM names WHERE name = ?", (name,))
                return None
            return remaining[-1]


def _path(calls_of: Callable[[str], Sequence[str]], starts: Sequence[str], target: str) -> list[str]:
    """A chain of current behaviour calls from one of `starts` to `target` ([] if there is none); each behaviour
    reached is looked at once (linear in the part of the graph reachable from `starts`)."""
    parents: dict[str, str | None] = dict.fromkeys(starts)
    frontier = list(starts)
    while frontier:
        node = frontier.pop()
        for callee in calls_of(node):
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

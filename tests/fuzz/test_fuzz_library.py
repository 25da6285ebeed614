"""Fuzzing library files: random values written into rows and random objects added to the schema.

Property: `situated sandbox library --library FILE --json` either lists the library (exit 0, and then every read
through the API returns records or a one-line DataError naming the file; with integrity "ok" every read
succeeds) or prints one line `error: FILE: ...` with exit 2. Never a traceback or another exit code, never a
hang, and the file's bytes never change.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from situated.cli import main
from situated.errors import DataError
from situated.sandbox.library import SkillLibrary

Guard = Callable[[float], AbstractContextManager[None]]

COLUMNS = {
    "names": ["name", "kind"],
    "object_versions": ["name_id", "version", "x", "y", "z", "description", "source", "created_at"],
    "behaviour_versions": ["name_id", "version", "params", "doc", "body", "depth", "created_at"],
    "behaviour_calls": ["version_id", "position", "callee"],
    "skill_versions": ["name_id", "version", "kind", "params", "doc", "weights", "created_at"],
    "sessions": ["scene", "model", "started_at", "ended_at"],
    "events": ["session_id", "kind", "payload", "at"],
}

SCHEMA_OBJECTS = [
    "CREATE TRIGGER {q} AFTER INSERT ON events BEGIN DELETE FROM names; END",
    "CREATE TRIGGER {q} BEFORE UPDATE ON sessions BEGIN SELECT RAISE(ABORT, 'no'); END",
    "CREATE VIEW {q} AS SELECT * FROM names",
    "CREATE INDEX {q} ON names (kind)",
    "CREATE TABLE {q} (a)",
    "ALTER TABLE sessions ADD COLUMN {q} TEXT",
    "DROP INDEX events_session",
]


def _library(folder: Path) -> Path:
    """A healthy library with a row in every table (built once per module)."""
    path = folder / "base.db"
    with SkillLibrary.open(path, clock=iter(range(1000, 2000)).__next__) as lib:
        lib.add_object("gift_bag", (0.5, 0.1, 0.0), "A gift bag.")
        lib.add_object("gift_bag", None, "Where the bag was.", "scene")
        lib.add_behaviour("pack", ["obj"], "Pack it.", "pickup(obj)\nrelease()", ["pickup", "release"])
        lib.add_behaviour("pack_two", ["a", "b"], "Pack two.", "pack(a)\npack(b)", ["pack", "pack"])
        lib.add_skill("wave", [], "Wave.", {"format": "situated-dmp/1", "weights": [0.5, [1, 2]]})
        session = lib.start_session("gift_bag", "test")
        lib.log(session, "teaching", {"name": "pack", "nested": {"a": [1, None, True]}})
        lib.end_session(session)
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return path


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="situated-fuzz-library-") as name:
        root = Path(name)
        _library(root)
        yield root


VALUES = (
    st.none()
    | st.booleans().map(int)
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.binary(max_size=12)
    | st.sampled_from(["not json", "5", "{", "[]", "{}", '["obj", "obj"]', '["Obj"]', '{"a": NaN}', "[" * 40 + "]" * 40,
                       '{"a": 1, "a": 2}', "pack", "object", "behaviour", "skill", "dmp", "scene", "pointed", "\n",
                       "pack\nrm", "x" * 3000, '"\\ud800"', "1e999", "9" * 200])
)


@st.composite
def changes(draw: st.DrawFn) -> list[str | tuple[str, Any]]:
    """Up to three row updates (statement, value) and up to two schema statements (none in 3 of 5 cases)."""
    out: list[str | tuple[str, Any]] = []
    for _ in range(draw(st.integers(0, 3))):
        table = draw(st.sampled_from(sorted(COLUMNS)))
        column = draw(st.sampled_from(COLUMNS[table]))
        which = draw(st.sampled_from(["MIN", "MAX"]))
        out.append((f"UPDATE {table} SET {column} = ? WHERE rowid = (SELECT {which}(rowid) FROM {table})",
                    draw(VALUES)))
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        name = draw(st.text(min_size=1, max_size=12)).replace("\x00", "0")
        quoted = '"' + name.replace('"', '""') + '"'
        out.append(draw(st.sampled_from(SCHEMA_OBJECTS)).format(q=quoted))
    return out


def _apply(path: Path, steps: list[str | tuple[str, Any]]) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA ignore_check_constraints = ON")
    for step in steps:
        try:
            if isinstance(step, tuple):
                db.execute(step[0], (step[1],))
            else:
                db.execute(step)
        except sqlite3.Error:
            event("a change SQLite itself refused")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _read_everything(path: Path, export: Path) -> None:
    with SkillLibrary.open(path) as lib:
        names = [r.name for r in [*lib.objects(), *lib.behaviours(), *lib.skills()]]
        for name in names:
            lib.versions(name)
            lib.dependents(name)
        for session in lib.sessions():
            lib.events(session.id)
        lib.export_json(export, overwrite=True)


@given(steps=changes())
def test_a_changed_library_file_is_listed_or_refused_in_one_line(
        steps: list[str | tuple[str, Any]], folder: Path, no_hang: Guard) -> None:
    path = folder / "case.db"
    for stale in folder.glob("case.db*"):
        stale.unlink()
    shutil.copyfile(folder / "base.db", path)
    _apply(path, steps)
    before = _digest(path)
    with no_hang(30):
        code, out, err = _run(["sandbox", "library", "--library", str(path), "--json"])
    assert code in (0, 2), err[-2000:]
    if code == 2:
        event("refused")
        assert out == "" and err.count("\n") == 1 and err.startswith(f"error: {path}: "), err
    else:
        integrity = json.loads(out.splitlines()[-1])["integrity"]
        event("listed, integrity ok" if integrity == "ok" else "listed, integrity found problems")
        with no_hang(30):
            try:
                _read_everything(path, folder / "export.json")
            except DataError as exc:
                assert integrity != "ok", f"integrity said ok, but a read failed: {exc}"
                assert "\n" not in str(exc) and str(exc).startswith(f"{path}: "), str(exc)
    assert _digest(path) == before

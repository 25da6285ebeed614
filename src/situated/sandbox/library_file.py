"""Opening a library file: refuse what is not a healthy library before SQLite runs anything in it, then migrate.

A file that is not SQLite, is corrupt, belongs to another application, was written by a newer version of this
code, or whose schema holds anything the migrations did not write (a trigger, a view, an index, a changed
column) is refused with a one-line `DataError` naming it, and is only read, never written or migrated. Every
connection has ``PRAGMA trusted_schema = OFF``, and the schema is compared with ours before the first write, so
nothing stored in a library file runs when it is opened or used.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from ..errors import DataError
from . import library_schema as schema
from .library_records import Invalid

_SQLITE_MAGIC = b"SQLite format 3\x00"


class LibraryFile:
    """An open library file: its connection, its path, and read and write transactions."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self._db = db
        self._path = path

    @property
    def path(self) -> Path:
        """The library file."""
        return self._path

    def close(self) -> None:
        """Close the file (idempotent)."""
        self._db.close()

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """SQLite and validation errors → one-line DataError naming the file."""
        try:
            yield
        except Invalid as err:
            raise DataError(f"{self._path}: {err}") from None
        except sqlite3.Error as err:
            raise DataError(f"{self._path}: {' '.join(str(err).split())}") from None

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


def connect(file: Path, timeout: float) -> sqlite3.Connection:
    """A checked, migrated connection to the library at `file` (created if absent or empty); DataError for
    anything that is not a healthy library of this or an older schema version.

    Two processes opening a new file at once can meet where SQLite answers "database is locked" without waiting
    (the switch to WAL, a read that must become a write); such an opening is tried again until `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return _connect_once(file, timeout)
        except _Busy as busy:
            if time.monotonic() >= deadline:
                raise DataError(f"{file}: not a usable skill library ({busy})") from None
            time.sleep(0.05)


class _Busy(Exception):
    """SQLite said the file is locked or busy while it was being opened."""


def _connect_once(file: Path, timeout: float) -> sqlite3.Connection:
    precheck(file)
    try:
        db = sqlite3.connect(file, timeout=timeout, isolation_level=None)
    except sqlite3.Error as err:
        raise DataError(f"{file}: cannot open the skill library ({err})") from None
    try:
        db.execute("PRAGMA trusted_schema = OFF")
        identify(db, file)
        # Where WAL is impossible (a file system without shared memory) SQLite keeps its rollback journal,
        # which with synchronous=FULL is as durable, only slower and without concurrent readers.
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("BEGIN IMMEDIATE")
        try:
            current = identify(db, file, check=False)  # under the write lock: another process may have migrated
            if current < schema.schema_version():
                if current == 0:
                    db.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
                schema.migrate(db, current)
                check_schema(db, file, schema.schema_version())
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
    except sqlite3.OperationalError as err:
        db.close()
        message = " ".join(str(err).split())
        if "locked" in message or "busy" in message:
            raise _Busy(message) from None
        raise DataError(f"{file}: not a usable skill library ({message})") from None
    except sqlite3.Error as err:
        db.close()
        raise DataError(f"{file}: not a usable skill library ({' '.join(str(err).split())})") from None
    except BaseException:
        db.close()
        raise
    return db


def precheck(file: Path) -> None:
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


def identify(db: sqlite3.Connection, file: Path, *, check: bool = True) -> int:
    """The schema version of a library file (0 for an empty file); DataError for a foreign, newer, corrupt or
    altered one. Reads only: a file found not to be ours is never written."""
    own = not db.in_transaction  # one read transaction: the three reads see one state of a file another process
    if own:                      # may be creating (the id read before its commit, its tables after it)
        db.execute("BEGIN")
    try:
        app_id = int(db.execute("PRAGMA application_id").fetchone()[0])
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        objects = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")}
    finally:
        if own and db.in_transaction:
            db.execute("COMMIT")
    if app_id == 0 and version == 0 and not objects:
        return 0
    if app_id == 0:
        raise DataError(f"{file}: an SQLite database that is not a skill library (tables: "
                        f"{', '.join(sorted(map(repr, objects)))[:200] or 'none'})")
    if app_id != schema.APPLICATION_ID:
        raise DataError(f"{file}: an SQLite database of another application (application_id {app_id}), "
                        "not a skill library")
    if version > schema.schema_version():
        raise DataError(f"{file}: skill library schema version {version} is newer than this situated "
                        f"understands ({schema.schema_version()}); upgrade situated")
    if version < 0:
        raise DataError(f"{file}: skill library schema version {version} is not one this situated wrote")
    check_schema(db, file, version)
    problems = [r[0] for r in db.execute("PRAGMA quick_check")] if check else ["ok"]
    if problems != ["ok"]:
        raise DataError(f"{file}: the skill library is corrupt ({' '.join('; '.join(problems).split())[:200]})")
    return version


def check_schema(db: sqlite3.Connection, file: Path, version: int) -> None:
    """DataError unless the file's whole schema is exactly what this code writes at `version`."""
    problem = schema.schema_problem(db, version)
    if problem:
        raise DataError(f"{file}: not a skill library of schema version {version} ({problem})")

"""The session log of a library: interaction sessions and their timestamped events (the user study's data)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from typing import Any

from .library_file import LibraryFile
from .library_records import (
    MAX_LABEL,
    MAX_PAYLOAD_BYTES,
    EventRecord,
    Invalid,
    SessionRecord,
    check_json,
    check_name,
    check_text,
)
from .library_rows import read_event, read_session

_SESSIONS = "SELECT id, scene, model, started_at, ended_at FROM sessions"
_EVENTS = "SELECT id, session_id, kind, payload, at FROM events"


class SessionLog(LibraryFile):
    """Starting, logging to and ending sessions; reading them back (rows checked)."""

    _clock: Callable[[], float]

    def start_session(self, scene: str, model: str) -> int:
        """Start a session in `scene` with planner `model`; returns its id."""
        with self._guard():
            check_text(scene, "scene", MAX_LABEL, lines=False)
            check_text(model, "model", MAX_LABEL, lines=False)
        with self._write() as db:
            cursor = db.execute("INSERT INTO sessions (scene, model, started_at) VALUES (?, ?, ?)",
                                (scene, model, self._clock()))
            return int(cursor.lastrowid or 0)

    def log(self, session: int, kind: str, payload: Mapping[str, Any] | None = None) -> None:
        """Append an event (`kind` a name such as ``confirmation``, ``correction``, ``teach``, ``skill_failure``)."""
        with self._guard():
            check_name(kind, "event kind")
            text = check_json({} if payload is None else payload, "payload", MAX_PAYLOAD_BYTES)
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
        row = db.execute(f"{_SESSIONS} WHERE id = ?", (session,)).fetchone()
        if row is None:
            raise Invalid("session", f"no session {session!r}")
        if read_session(row).ended_at is not None:
            raise Invalid("session", f"session {session} has ended")

    def sessions(self) -> list[SessionRecord]:
        """Every session, oldest first."""
        with self._read() as db:
            return [read_session(r) for r in db.execute(f"{_SESSIONS} ORDER BY id")]

    def events(self, session: int) -> list[EventRecord]:
        """The events of `session` in the order they were logged."""
        with self._read() as db:
            return [read_event(r) for r in db.execute(f"{_EVENTS} WHERE session_id = ? ORDER BY id", (session,))]

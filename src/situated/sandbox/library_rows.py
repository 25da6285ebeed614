"""Rows of a library file turned into records, every value checked on the way (the file is input, like any other).

Each reader takes a row as the store's queries select it (the row id first) and returns a record, or raises
`Invalid("TABLE row N: FIELD", problem)`: a value of the wrong type (SQLite keeps whatever was written, e.g.
``'abc'`` in a REAL column), JSON text that does not parse or has the wrong shape, a name that is not one, a
number out of range. The SQL the store runs selects exactly these columns (`COLUMNS`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .library_records import (
    KINDS,
    MAX_BODY,
    MAX_CALLS,
    MAX_DEPTH,
    MAX_DOC,
    MAX_LABEL,
    MAX_PARAMS,
    MAX_PAYLOAD_BYTES,
    MAX_WEIGHTS_BYTES,
    SKILL_KINDS,
    SOURCES,
    BehaviourRecord,
    EventRecord,
    Invalid,
    ObjectRecord,
    SessionRecord,
    SkillRecord,
    check_choice,
    check_int,
    check_json,
    check_name,
    check_names,
    check_number,
    check_text,
    parse_json_text,
)

MAX_ID = 2**63 - 1

#: The columns each reader expects, in order (`v` is the version table, `n` the names table).
COLUMNS = {
    "object_versions": "v.id, n.name, v.version, v.x, v.y, v.z, v.description, v.source, v.created_at",
    "behaviour_versions": "v.id, n.name, v.version, v.params, v.doc, v.body, v.depth, v.created_at",
    "skill_versions": "v.id, n.name, v.version, v.kind, v.params, v.doc, v.weights, v.created_at",
}


@contextmanager
def in_row(table: str, rowid: object) -> Iterator[None]:
    """Prefix an `Invalid` raised inside with `TABLE row N`."""
    try:
        yield
    except Invalid as err:
        raise Invalid(f"{table} row {rowid}", str(err)) from None


def _version(value: object) -> int:
    return check_int(value, "version", 1, MAX_ID)


def _id(value: object, field: str = "id") -> int:
    return check_int(value, field, 0, MAX_ID)


def read_name(row: Sequence[Any]) -> tuple[int, str, str]:
    """(id, name, kind) of a `names` row."""
    rowid, name, kind = row
    with in_row("names", rowid):
        return _id(rowid), check_name(name), check_choice(kind, "kind", KINDS)


def read_object(row: Sequence[Any]) -> ObjectRecord:
    """An `object_versions` row (with its name) as a record."""
    rowid, name, version, x, y, z, description, source, created_at = row
    with in_row("object_versions", rowid):
        if x is None and y is None and z is None:
            position = None
        else:
            position = (check_number(x, "x"), check_number(y, "y"), check_number(z, "z"))
        return ObjectRecord(check_name(name), _version(version), position,
                            check_text(description, "description", MAX_DOC), check_choice(source, "source", SOURCES),
                            check_number(created_at, "created_at"))  # type: ignore[arg-type]


def read_behaviour(row: Sequence[Any], calls: Sequence[Sequence[Any]]) -> BehaviourRecord:
    """A `behaviour_versions` row (with its name) and its `behaviour_calls` rows (rowid, position, callee) as a
    record."""
    rowid, name, version, params, doc, body, depth, created_at = row
    with in_row("behaviour_versions", rowid):
        params_list = parse_json_text(params, "params", 4096)
        record_params = check_names(params_list, "params", MAX_PARAMS, unique=True)
        if len(calls) > MAX_CALLS:
            raise Invalid("calls", f"has {len(calls)} rows in behaviour_calls, more than {MAX_CALLS}")
        record = BehaviourRecord(check_name(name), _version(version), record_params, check_text(doc, "doc", MAX_DOC),
                                 check_text(body, "body", MAX_BODY), (), check_int(depth, "depth", 1, MAX_DEPTH),
                                 check_number(created_at, "created_at"))
    callees = []
    for i, (call_id, position, callee) in enumerate(calls):
        with in_row("behaviour_calls", call_id):
            if check_int(position, "position", 0, MAX_CALLS) != i:
                raise Invalid("position", f"is {position}, expected {i} (positions run 0, 1, ... per version)")
            callees.append(check_name(callee, "callee"))
    return BehaviourRecord(record.name, record.version, record.params, record.doc, record.body, tuple(callees),
                           record.depth, record.created_at)


def read_skill(row: Sequence[Any]) -> SkillRecord:
    """A `skill_versions` row (with its name) as a record."""
    rowid, name, version, kind, params, doc, weights, created_at = row
    with in_row("skill_versions", rowid):
        value = parse_json_text(weights, "weights", MAX_WEIGHTS_BYTES)
        check_json(value, "weights", MAX_WEIGHTS_BYTES)
        return SkillRecord(check_name(name), _version(version), check_choice(kind, "kind", SKILL_KINDS),
                           check_names(parse_json_text(params, "params", 4096), "params", MAX_PARAMS, unique=True),
                           check_text(doc, "doc", MAX_DOC), value, check_number(created_at, "created_at"))


def read_session(row: Sequence[Any]) -> SessionRecord:
    """A `sessions` row (id, scene, model, started_at, ended_at) as a record."""
    rowid, scene, model, started_at, ended_at = row
    with in_row("sessions", rowid):
        return SessionRecord(_id(rowid), check_text(scene, "scene", MAX_LABEL, lines=False),
                             check_text(model, "model", MAX_LABEL, lines=False), check_number(started_at, "started_at"),
                             None if ended_at is None else check_number(ended_at, "ended_at"))


def read_event(row: Sequence[Any]) -> EventRecord:
    """An `events` row (id, session_id, kind, payload, at) as a record."""
    rowid, session, kind, payload, at = row
    with in_row("events", rowid):
        value = parse_json_text(payload, "payload", MAX_PAYLOAD_BYTES)
        check_json(value, "payload", MAX_PAYLOAD_BYTES)
        return EventRecord(_id(rowid), _id(session, "session_id"), check_name(kind, "kind"), value,
                           check_number(at, "at"))


READERS: dict[str, Callable[..., Any]] = {
    "object_versions": read_object, "behaviour_versions": read_behaviour, "skill_versions": read_skill,
}

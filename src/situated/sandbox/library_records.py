"""The skill library's typed records, its limits, and the checks every value passes on its way in or out.

A value reaches the library from the API, from an imported `situated-library/1` file, or from a row of the
SQLite file itself (which anyone can edit). All three go through the same checks; a failing check raises
`Invalid(field, problem)`, which the caller turns into one `DataError` line naming the file and, for a row, the
table and row (`lib.db: behaviour_versions row 3: params: invalid JSON ...`).
"""

from __future__ import annotations

import json
import keyword
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from .. import files
from ..errors import DataError

MAX_NAME = 64
MAX_PARAMS = 16
MAX_CALLS = 64
"""Most calls one behaviour version makes (its body's call lines)."""
MAX_BEHAVIOURS = 256
"""Most behaviours a library holds (each with all its versions)."""
MAX_DEPTH = 8
"""Deepest composition of a behaviour (1 for one over skills only); `behaviours.MAX_COMPOSITION_DEPTH`."""
MAX_DOC = 2_000
MAX_BODY = 20_000
MAX_LABEL = 500  # scene and model names
MAX_WEIGHTS_BYTES = 1_000_000
MAX_PAYLOAD_BYTES = 65_536
MAX_JSON_DEPTH = 32
MAX_IMPORT_BYTES = 64 * 1024 * 1024

A_KIND = {"object": "an object", "behaviour": "a behaviour", "skill": "a skill"}
_NAME = re.compile(r"[a-z_][a-z0-9_]*\Z")

Source = Literal["pointed", "scene"]
Kind = Literal["object", "behaviour", "skill"]
SOURCES: tuple[str, ...] = ("pointed", "scene")
SKILL_KINDS: tuple[str, ...] = ("dmp",)
KINDS: tuple[str, ...] = ("object", "behaviour", "skill")


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


class Invalid(Exception):
    """A field failed a check; the caller turns it into a DataError naming the file (and table and row)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")


def short(value: object) -> str:
    """`repr(value)` cut to 60 characters, for messages."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ------------------------------------------------------------------------------------------------- value checks


def check_name(value: object, field: str = "name") -> str:
    """`value` if it is a valid name (``[a-z_][a-z0-9_]*``, at most 64 characters, not a Python keyword)."""
    if not isinstance(value, str):
        raise Invalid(field, f"must be a string, not {type(value).__name__}")
    if not _NAME.match(value) or len(value) > MAX_NAME or keyword.iskeyword(value):
        raise Invalid(field, f"{short(value)} is not a name ([a-z_][a-z0-9_]*, at most {MAX_NAME} characters, "
                             "not a Python keyword)")
    return value


def check_text(value: object, field: str, limit: int, *, lines: bool = True) -> str:
    """`value` if it is a string of at most `limit` characters without control characters (but newline and tab
    when `lines`)."""
    if not isinstance(value, str):
        raise Invalid(field, f"must be a string, not {type(value).__name__}")
    if len(value) > limit:
        raise Invalid(field, f"is {len(value)} characters, more than {limit}")
    allowed = "\n\t" if lines else ""
    for char in value:
        if (ord(char) < 32 and char not in allowed) or ord(char) == 127 or 0xD800 <= ord(char) <= 0xDFFF:
            raise Invalid(field, f"contains the control character {char!r}")
    return value


def check_names(value: object, field: str, limit: int, *, unique: bool) -> tuple[str, ...]:
    """`value` as a tuple of at most `limit` names (without repeats when `unique`)."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise Invalid(field, "must be a list of names")
    if len(value) > limit:
        raise Invalid(field, f"has {len(value)} entries, more than {limit}")
    names = tuple(check_name(item, f"{field}[{i}]") for i, item in enumerate(value))
    if unique and len(set(names)) != len(names):
        raise Invalid(field, "repeats a name")
    return names


def check_number(value: object, field: str) -> float:
    """`value` as a finite float (an int is accepted, a bool is not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Invalid(field, f"must be a number, not {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise Invalid(field, "must be finite")
    return number


def check_int(value: object, field: str, low: int, high: int) -> int:
    """`value` if it is an int (not a bool) from `low` to `high`."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise Invalid(field, f"must be an integer from {low} to {high}, not {short(value)}")
    return value


def check_position(value: object, field: str) -> tuple[float, float, float] | None:
    """None, or three finite numbers."""
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or len(value) != 3:
        raise Invalid(field, "must be null or three numbers (x, y, z)")
    x, y, z = (check_number(v, f"{field}[{i}]") for i, v in enumerate(value))
    return (x, y, z)


def check_json(value: object, field: str, max_bytes: int) -> str:
    """Compact JSON text of a JSON object (str keys, finite numbers, nesting at most MAX_JSON_DEPTH)."""
    if not isinstance(value, Mapping):
        raise Invalid(field, f"must be a JSON object, not {type(value).__name__}")

    def walk(item: object, where: str, depth: int) -> None:
        if depth > MAX_JSON_DEPTH:
            raise Invalid(where, f"nested deeper than {MAX_JSON_DEPTH}")
        if isinstance(item, Mapping):
            for key, sub in item.items():
                if not isinstance(key, str):
                    raise Invalid(where, f"key {short(key)} is not a string")
                walk(sub, f"{where}.{key}", depth + 1)
        elif isinstance(item, list | tuple):
            for i, sub in enumerate(item):
                walk(sub, f"{where}[{i}]", depth + 1)
        elif isinstance(item, float) and not math.isfinite(item):
            raise Invalid(where, "must be finite")
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise Invalid(where, "holds an unpaired surrogate (not text)") from None
        elif item is not None and not isinstance(item, int | float):
            raise Invalid(where, f"{type(item).__name__} is not a JSON value")

    walk(value, field, 1)
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except ValueError as err:  # e.g. an int too long for the interpreter's str() limit
        raise Invalid(field, str(err)[:100]) from None
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise Invalid(field, f"is more than {max_bytes} bytes as JSON")
    return text


def check_choice(value: object, field: str, choices: tuple[str, ...]) -> str:
    """`value` if it is one of `choices`."""
    if not isinstance(value, str) or value not in choices:
        raise Invalid(field, f"must be one of {', '.join(choices)}, not {short(value)}")
    return value


def parse_json_text(value: object, field: str, max_bytes: int) -> Any:
    """The JSON value in the text `value` (a column), read like an input file (`files.parse_json`: bounded
    nesting and numbers, no NaN, no duplicate keys)."""
    if not isinstance(value, str):
        raise Invalid(field, f"must be JSON text, not {type(value).__name__}")
    if len(value) > max_bytes:
        raise Invalid(field, f"is more than {max_bytes} characters of JSON")
    try:
        return files.parse_json(value, "", max_depth=MAX_JSON_DEPTH + 1, duplicate_keys="error")
    except DataError as err:
        raise Invalid(field, str(err).removeprefix(": ")) from None


# ------------------------------------------------------------------------------------------------- rows to check


def object_row(name: object, position: object, description: object, source: object) -> dict[str, Any]:
    """The checked fields of an object version to store."""
    return {"name": check_name(name, "name"), "position": check_position(position, "position"),
            "description": check_text(description, "description", MAX_DOC),
            "source": check_choice(source, "source", SOURCES)}


def behaviour_row(name: object, params: object, doc: object, body: object, calls: object) -> dict[str, Any]:
    """The checked fields of a behaviour version to store (its depth is the store's to compute)."""
    return {"name": check_name(name, "name"),
            "params": check_names(params, "params", MAX_PARAMS, unique=True),
            "doc": check_text(doc, "doc", MAX_DOC), "body": check_text(body, "body", MAX_BODY),
            "calls": check_names(calls, "calls", MAX_CALLS, unique=False)}


def skill_row(name: object, params: object, doc: object, weights: object, kind: object) -> dict[str, Any]:
    """The checked fields of a skill version to store (`weights` as compact JSON text)."""
    return {"name": check_name(name, "name"),
            "params": check_names(params, "params", MAX_PARAMS, unique=True),
            "doc": check_text(doc, "doc", MAX_DOC), "weights": check_json(weights, "weights", MAX_WEIGHTS_BYTES),
            "kind": check_choice(kind, "kind", SKILL_KINDS)}

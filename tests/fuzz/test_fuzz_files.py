"""Fuzzing the guarded reader: any bytes give a value or a SituatedError, never another exception, never a hang."""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakes import outcome
from situated import files
from situated.errors import DataError, SituatedError

Guard = Callable[[float], AbstractContextManager[None]]


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    """One file rewritten by every example (a function-scoped tmp_path would be shared by all examples anyway)."""
    with tempfile.TemporaryDirectory(prefix="situated-fuzz-") as folder:
        yield Path(folder) / "input.json"




@given(data=st.data())
def test_parse_json_on_hostile_text(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard) -> None:
    raw = data.draw(fuzz.hostile_json)
    text = raw.decode("utf-8", data.draw(st.sampled_from(["replace", "surrogateescape", "ignore"])))
    with no_hang(10):
        result = outcome(lambda: files.parse_json(text, "fuzz.json"))
    if isinstance(result, DataError):
        assert str(result).startswith("fuzz.json: ")


@given(data=st.data())
def test_read_json_and_read_text_on_hostile_bytes(
    data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard, scratch: Path
) -> None:
    raw = data.draw(fuzz.hostile_json)
    scratch.write_bytes(raw)
    with no_hang(10):
        text = outcome(lambda: files.read_text(scratch))
        value = outcome(lambda: files.read_json(scratch, limit=1_000_000))
    if isinstance(text, str) and not isinstance(value, SituatedError):
        assert value == json.loads(text) or _has_nan(value)
    if len(raw) > 1_000_000:
        assert isinstance(value, DataError)


@given(data=st.data())
def test_read_json_lines_on_hostile_bytes(
    data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard, scratch: Path
) -> None:
    lines = data.draw(st.lists(fuzz.json_bytes, max_size=6))
    raw = data.draw(fuzz.mutated(st.just(b"\n".join(lines))))
    scratch.write_bytes(raw)
    with no_hang(10):
        result = outcome(lambda: list(files.read_json_lines(scratch)))
    if isinstance(result, list):
        numbers = [number for number, _ in result]
        assert numbers == sorted(set(numbers)) and all(1 <= n <= raw.count(b"\n") + 1 for n in numbers)
    else:
        assert str(result).startswith(f"{scratch}: ")


VALID_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**99), max_value=10**99)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)


@given(data=st.data())
def test_valid_json_reads_back_exactly(data: st.DataObject, fuzz: SimpleNamespace) -> None:
    value = data.draw(fuzz.json_values(VALID_SCALARS))  # at most 15 leaves: never deeper than 64
    text = json.dumps(value, ensure_ascii=data.draw(st.booleans()), indent=data.draw(st.sampled_from([None, 1])))
    assert files.parse_json(text, "x") == value


TRICKY_STRINGS = st.text(alphabet='[]{}"\\/ nu0d8', max_size=12)


@given(data=st.data())
def test_nesting_limit_is_exact_whatever_the_strings_hold(data: st.DataObject) -> None:
    depth = data.draw(st.integers(0, 90))
    strings = data.draw(st.lists(TRICKY_STRINGS, min_size=1, max_size=4))
    shape = data.draw(st.integers(0, 2**depth))  # bit k: level k is a list (1) or an object (0)
    value: Any = strings[0]
    for level in range(depth):
        other = strings[level % len(strings)]
        value = [value, other] if shape >> level & 1 else {other: value}
    text = json.dumps(value, ensure_ascii=data.draw(st.booleans()))
    result = outcome(lambda: files.parse_json(text, "x"))
    if depth <= files.MAX_DEPTH:
        assert result == value
    else:
        assert isinstance(result, DataError) and "nested deeper than 64 levels" in str(result)


TYPES: list[Any] = [
    str, int, float, bool, None, Any, list[str], list[int], dict[str, int], dict[str, list[float]],
    int | None, str | list[str], tuple[str, int], Literal["a", 1], list[dict[str, str | None]],
]


@given(data=st.data())
def test_check_type_answers_any_value(data: st.DataObject, fuzz: SimpleNamespace) -> None:
    value = data.draw(fuzz.json_values())
    kind = data.draw(st.sampled_from(TYPES))
    result = outcome(lambda: files.check_type(value, kind, "r.json: line 1", name="f"))
    if isinstance(result, DataError):
        assert str(result).startswith("r.json: line 1: field f")
    else:
        assert result is value


def _has_nan(value: Any) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, list):
        return any(_has_nan(v) for v in value)
    if isinstance(value, dict):
        return any(_has_nan(v) for v in value.values())
    return False

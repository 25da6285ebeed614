"""Hypothesis profiles for the fuzz tests, shared strategies, and a guard that turns a hang into a failure.

- `fast` (default): 100 examples per property, so the whole directory runs in seconds.
- `long`: `HYPOTHESIS_PROFILE=long pytest tests/fuzz` runs 10,000 examples per property (minutes).

Neither profile keeps an example database (nothing is written into the repository) nor a per-example deadline
(timing on a shared machine is noise); a hang is caught by `no_hang` instead. The strategies come as the session
fixture `fuzz` and are drawn with `st.data()`.
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

_COMMON = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
}
settings.register_profile("fast", max_examples=100, **_COMMON)
settings.register_profile("long", max_examples=10_000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


class Hang(Exception):
    """An example ran longer than the guard allows (not a SituatedError: the property fails)."""


@contextmanager
def _within(seconds: float) -> Iterator[None]:
    def alarm(signum: int, frame: object) -> None:
        raise Hang(f"no result within {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="session")
def no_hang() -> Callable[[float], AbstractContextManager[None]]:
    """`with no_hang(5): ...` fails the example with `Hang` when its body runs longer than 5 s."""
    return _within


# ------------------------------------------------------------------------------------------------- strategies

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**120), max_value=10**120)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)


def json_values(scalars: st.SearchStrategy[Any] = SCALARS, max_leaves: int = 15) -> st.SearchStrategy[Any]:
    """Nested lists and objects of `scalars` (NaN, infinities and 120-digit integers included by default)."""
    return st.recursive(
        scalars,
        lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
        max_leaves=max_leaves,
    )


# Byte strings that break readers: bad UTF-8, NULs, deep brackets, huge numbers, JSON's forbidden constants.
NASTY = st.sampled_from([
    b"\x00", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"[" * 5000, b"{" * 70, b'{"a":' * 100,
    b"9" * 5000, b"1e999", b"-Infinity", b"NaN", b'"\\ud800"', b"\\", b'"', b"\n", b"\r\n", b"]" * 10, b",", b":",
])


@st.composite
def mutated(draw: st.DrawFn, base: st.SearchStrategy[bytes]) -> bytes:
    """`base` with up to three mutations: truncation, a NASTY or random insertion, a deletion, a flipped byte."""
    data = bytearray(draw(base))
    for _ in range(draw(st.integers(0, 3))):
        where = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["truncate", "insert", "random", "delete", "flip"]))
        if kind == "truncate":
            del data[where:]
        elif kind == "insert":
            data[where:where] = draw(NASTY)
        elif kind == "random":
            data[where:where] = draw(st.binary(max_size=8))
        elif kind == "delete":
            del data[where : where + draw(st.integers(1, 8))]
        elif data:
            data[min(where, len(data) - 1)] ^= 1 << draw(st.integers(0, 7))
    return bytes(data)


def dumps(value: Any, ascii_only: bool = False) -> bytes:
    return json.dumps(value, ensure_ascii=ascii_only, allow_nan=True).encode("utf-8", "surrogatepass")


JSON_BYTES = st.builds(dumps, json_values(), st.booleans())
DEEP = st.builds(
    lambda n, m, inner: b"[" * n + inner + b"]" * m, st.integers(0, 3000), st.integers(0, 3000), JSON_BYTES
)
HOSTILE_JSON = mutated(JSON_BYTES | DEEP)


@pytest.fixture(scope="session")
def fuzz() -> SimpleNamespace:
    """The shared strategies (draw them with `st.data()`)."""
    return SimpleNamespace(
        json_values=json_values, mutated=mutated, dumps=dumps, json_bytes=JSON_BYTES, hostile_json=HOSTILE_JSON,
    )


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    """A folder rewritten by every example of a module (a function-scoped tmp_path would be shared by all
    examples anyway); modules that need another layout define their own."""
    with tempfile.TemporaryDirectory(prefix="situated-fuzz-") as folder:
        yield Path(folder)

"""Fuzzing cassettes: generated and mutated records load and replay as values or SituatedErrors, never crash."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from situated.errors import SituatedError
from situated.llm.base import Completion
from situated.llm.cassette import Cassette, wrap

Guard = Callable[[float], AbstractContextManager[None]]
URI = "fake:never-loaded"
PARAMS: dict[str, Any] = {
    "stop": [], "max_tokens": 8, "temperature": 0.0, "frequency_penalty": 0.0, "grammar": None, "seed": 0,
}
PROMPTS = ["walk", "grab the mug", "é"]
ANSWER = st.fixed_dictionaries({
    "text": st.text(max_size=40),
    "finish_reason": st.sampled_from(["stop", "length"]),
    "prompt_tokens": st.integers(0, 100),
    "completion_tokens": st.integers(0, 100),
    "cached_tokens": st.integers(0, 100),
    "seconds": st.floats(0, 10),
})


def request(call: str, prompt: str) -> dict[str, Any]:
    if call == "complete":
        return {"uri": URI, "call": "complete", "prompt": prompt, **PARAMS}
    return {"uri": URI, "call": "count_tokens", "text": prompt}


@st.composite
def records(draw: st.DrawFn, fuzz: SimpleNamespace) -> dict[str, Any]:
    """A record answering one of PROMPTS, with a field perhaps replaced by any JSON value or dropped."""
    call = draw(st.sampled_from(["complete", "count_tokens"]))
    req = request(call, draw(st.sampled_from(PROMPTS)))
    response = draw(ANSWER) if call == "complete" else draw(st.integers(0, 50))
    entry: dict[str, Any] = {"key": Cassette.key(req), "request": req, "response": response}
    if draw(st.booleans()):
        entry.pop("request")
    damage = draw(st.sampled_from(["none", "none", "replace", "drop", "response field"]))
    if damage in ("replace", "drop"):
        name = draw(st.sampled_from(sorted(entry)))
        if damage == "drop":
            entry.pop(name)
        else:
            entry[name] = draw(fuzz.json_values(max_leaves=4))
    elif damage == "response field" and isinstance(entry["response"], dict):
        name = draw(st.sampled_from([*sorted(entry["response"]), "extra"]))
        entry["response"][name] = draw(fuzz.json_values(max_leaves=3))
    return entry


@pytest.fixture(scope="module")
def cassette_file() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="situated-fuzz-") as folder:
        yield Path(folder) / "c.jsonl"


@given(data=st.data())
def test_any_cassette_loads_and_replays_or_fails_with_our_error(
    data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard, cassette_file: Path
) -> None:
    lines = [json.dumps(r, ensure_ascii=data.draw(st.booleans())).encode() for r in data.draw(
        st.lists(records(fuzz), max_size=4))]
    raw = b"\n".join(lines) + data.draw(st.sampled_from([b"", b"\n"]))
    if data.draw(st.booleans()):
        raw = data.draw(fuzz.mutated(st.just(raw)))
    cassette_file.write_bytes(raw)
    with no_hang(10):
        try:
            llm = wrap(URI, cassette_file, "replay")
        except SituatedError as exc:
            assert "\n" not in str(exc)
            event("refused on load")
            return
        for prompt in PROMPTS:
            for call in ("complete", "count_tokens"):
                try:
                    value = llm.complete(prompt, **PARAMS) if call == "complete" else llm.count_tokens(prompt)
                except SituatedError as exc:
                    assert "\n" not in str(exc)
                    event("refused on replay" if "not in cassette" not in str(exc) else "not recorded")
                    continue
                assert (isinstance(value, Completion) and isinstance(value.text, str)) or (
                    isinstance(value, int) and value >= 0
                )
                event(f"replayed {type(value).__name__}")

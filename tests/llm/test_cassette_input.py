"""Cassettes as input: read through the guarded reader, every record type-checked, appends on their own line."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from situated.errors import BackendError, DataError
from situated.llm.base import Completion
from situated.llm.cassette import Cassette, CassetteError, wrap

PARAMS: dict[str, Any] = {
    "stop": [],
    "max_tokens": 8,
    "temperature": 0.0,
    "frequency_penalty": 0.0,
    "grammar": None,
    "seed": 0,
}
ANSWER = {"text": "ok", "finish_reason": "stop", "prompt_tokens": 1, "completion_tokens": 1,
          "cached_tokens": 0, "seconds": 0.1}


def record(prompt: str = "hi", response: Any = None, *, with_request: bool = True, **changes: Any) -> dict:
    request = {"uri": "fake:x", "call": "complete", "prompt": prompt, **PARAMS}
    entry = {"key": Cassette.key(request), "request": request, "response": ANSWER if response is None else response}
    if not with_request:
        del entry["request"]
    return {**entry, **changes}


def write(path: Path, *entries: dict | str) -> Path:
    path.write_text("".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in entries))
    return path


class Echo:
    uri = "fake:x"

    def complete(self, prompt: str, **params: Any) -> Completion:
        return Completion(prompt.upper(), "stop", 1, 1)


def test_a_fifo_cassette_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "c.jsonl"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def open_it() -> None:
        try:
            Cassette(fifo, "replay")
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=open_it, daemon=True)
    thread.start()
    thread.join(5)
    assert not thread.is_alive(), "opening a FIFO cassette blocked"
    assert isinstance(outcome[0], CassetteError) and "a FIFO (named pipe), not a regular file" in str(outcome[0])


def test_cassette_errors_are_data_and_backend_errors(tmp_path: Path) -> None:
    with pytest.raises(CassetteError) as err:
        Cassette(tmp_path, "replay")
    assert isinstance(err.value, DataError) and isinstance(err.value, BackendError)
    assert str(err.value) == f"cassette {tmp_path}: cannot read file: a directory, not a regular file"


def test_bad_bytes_and_deep_json_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(json.dumps(record()).encode() + b'\n{"key": "\xff"}\n')
    with pytest.raises(CassetteError, match=rf"^cassette {path}: line 2, column 10: not UTF-8 text"):
        Cassette(path)
    write(path, record(), "[" * 10_000)
    with pytest.raises(CassetteError, match=rf"^cassette {path}: line 2, column 65: JSON nested deeper than 64"):
        Cassette(path)
    path.write_bytes(b"x" * 200)
    with pytest.raises(CassetteError, match="more than the limit of 100 bytes"):
        Cassette(path, limit=100)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ([1, 2], "not a cassette entry \\(expected an object, got list\\)"),
        ({"response": 1}, "field key: missing"),
        ({"key": 7, "response": 1}, "field key: expected string, got integer"),
        ({"key": "k"}, "field response: missing"),
        ({"key": "k", "request": [], "response": 1}, "field request: expected object or null, got list"),
        ({"key": "k", "request": {}, "response": 1}, "field request.call: expected string, got null"),
        ({"key": "k", "request": {"call": "fly"}, "response": 1}, "field request.call: unknown call 'fly'"),
        (record(response="text"), "field response: expected object, got string"),
        (record(response={**ANSWER, "text": 3}), "field response.text: expected string, got integer"),
        (record(response={**ANSWER, "seconds": "1"}), "field response.seconds: expected number, got string"),
        (record(response={**ANSWER, "logits": []}), "field response.logits: unknown field"),
        (record(response={"text": "a"}), "field response.finish_reason: missing"),
        (
            {"key": "k", "request": {"call": "count_tokens"}, "response": -1},
            "field response: expected a token count, got -1",
        ),
        ({"key": "k", "request": {"call": "score"}, "response": {}}, "field response.logprobs: missing"),
        (
            {"key": "k", "request": {"call": "score"}, "response": {"logprobs": ["-1"]}},
            "field response.logprobs\\[0\\]: expected number, got string",
        ),
        (
            {"key": "k", "request": {"call": "score"}, "response": {"logprobs": [], "text": ""}},
            "field response.text: unknown field",
        ),
    ],
)
def test_each_bad_record_names_file_line_and_field(tmp_path: Path, entry: Any, message: str) -> None:
    path = write(tmp_path / "c.jsonl", record("first"), "", entry)
    with pytest.raises(CassetteError, match=rf"^cassette {path}: line 3: {message}$"):
        Cassette(path)


def test_a_record_without_its_request_is_checked_when_replayed(tmp_path: Path) -> None:
    path = write(tmp_path / "c.jsonl", record("hi", ["no"], with_request=False))
    llm = wrap("fake:x", path, "replay")  # the call is not known until the record is used
    with pytest.raises(CassetteError, match=rf"^cassette {path}: line 1: field response: expected object, got list"):
        llm.complete("hi", **PARAMS)
    write(path, record("hi", {**ANSWER, "prompt_tokens": "1"}, with_request=False))
    with pytest.raises(CassetteError, match=rf"^cassette {path}: line 1: field response.prompt_tokens: expected int"):
        wrap("fake:x", path, "replay").complete("hi", **PARAMS)
    write(path, record("hi", with_request=False))
    assert wrap("fake:x", path, "replay").complete("hi", **PARAMS).text == "ok"


def test_records_are_appended_on_their_own_line_after_an_interrupted_write(tmp_path: Path) -> None:
    path = write(tmp_path / "c.jsonl", record("a"))
    cassette = Cassette(path, "record")
    with path.open("a") as handle:
        handle.write('{"key": "half')  # another writer, killed mid-record
    cassette.put("k2", {"call": "json"}, [1])
    lines = path.read_text().splitlines()
    assert lines[1] == '{"key": "half' and json.loads(lines[2])["key"] == "k2"
    with pytest.raises(CassetteError, match=rf"^cassette {path}: line 2, column 9: invalid JSON \(Unterminated string"):
        Cassette(path)
    path.write_text("\n".join(lines[:1] + lines[2:]) + "\n")  # only the broken line needs removing
    assert len(Cassette(path)) == 2
    wrap(Echo(), path, "record").complete("b", **PARAMS)
    assert wrap("fake:x", path, "replay").complete("b", **PARAMS).text == "B"


def test_an_answer_that_would_not_read_back_is_not_recorded(tmp_path: Path) -> None:
    class Nan:
        uri = "fake:x"

        def json(self, messages: list, schema: dict, **params: Any) -> Any:
            return {"score": float("nan")}

    path = tmp_path / "c.jsonl"
    with pytest.raises(BackendError, match=r"answer cannot be recorded: record: line 1, column \d+: NaN is not"):
        wrap(Nan(), path, "record").json([{"role": "user", "content": "x"}], {"type": "object"})
    assert not path.exists() or path.read_text() == ""


def test_record_into_a_missing_folder_creates_it(tmp_path: Path) -> None:
    llm = wrap(Echo(), tmp_path / "runs" / "a" / "c.jsonl", "record")
    llm.complete("x", **PARAMS)
    assert len(Cassette(tmp_path / "runs" / "a" / "c.jsonl")) == 1

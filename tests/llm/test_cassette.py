"""Cassette record/replay: round trip, key sensitivity to every parameter, clear errors."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from situated.errors import BackendError
from situated.llm.base import Completion
from situated.llm.cassette import wrap
from situated.llm.chat_template import RAW


class CountingLLM:
    """Stands in for nothing real: a deterministic function of its arguments that counts its calls."""

    def __init__(self, uri: str = "fake:echo") -> None:
        self.uri = uri
        self.chat_template = RAW
        self.calls = 0

    def complete(
        self,
        prompt: str,
        *,
        stop: Sequence[str] = (),
        max_tokens: int = 256,
        temperature: float = 0.0,
        frequency_penalty: float = 0.0,
        grammar: str | None = None,
        seed: int = 0,
    ) -> Completion:
        self.calls += 1
        text = f"{prompt[::-1]}|{list(stop)}|{max_tokens}|{temperature}|{frequency_penalty}|{grammar}|{seed}"
        return Completion(text, "stop", len(prompt), len(text), cached_tokens=1, seconds=0.5)

    def json(
        self,
        messages: list[dict],
        schema: dict,
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> Any:
        self.calls += 1
        return {"n": len(messages), "keys": sorted(schema), "max_tokens": max_tokens, "seed": seed}

    def count_tokens(self, text: str) -> int:
        self.calls += 1
        return len(text.split())


BASE: dict[str, Any] = {
    "stop": ["\n"],
    "max_tokens": 32,
    "temperature": 0.0,
    "frequency_penalty": 0.0,
    "grammar": None,
    "seed": 0,
}


def test_round_trip_replays_without_the_backend(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    fake = CountingLLM()
    recorder = wrap(fake, path, "record")
    recorded = recorder.complete("walk to the kitchen", **BASE)
    answer = recorder.json([{"role": "user", "content": "hi"}], {"type": "object"}, seed=3)
    tokens = recorder.count_tokens("one two three")
    assert fake.calls == 3
    assert len(path.read_text().splitlines()) == 3

    player = wrap("fake:echo", path, "replay")  # a URI: never loaded during a full replay
    assert player.complete("walk to the kitchen", **BASE) == recorded
    assert player.json([{"role": "user", "content": "hi"}], {"type": "object"}, seed=3) == answer
    assert player.count_tokens("one two three") == tokens == 3


@pytest.mark.parametrize(
    "change",
    [
        {"prompt": "walk to the bedroom"},
        {"stop": ["\n", "#"]},
        {"stop": []},
        {"max_tokens": 33},
        {"temperature": 0.7},
        {"frequency_penalty": 0.3},
        {"grammar": 'root ::= "a"'},
        {"seed": 1},
    ],
)
def test_every_complete_parameter_is_part_of_the_key(tmp_path: Path, change: dict) -> None:
    path = tmp_path / "c.jsonl"
    wrap(CountingLLM(), path, "record").complete("walk to the kitchen", **BASE)
    params = {"prompt": "walk to the kitchen", **BASE, **change}
    prompt = params.pop("prompt")
    with pytest.raises(BackendError, match="not in cassette"):
        wrap("fake:echo", path, "replay").complete(prompt, **params)


def test_backend_uri_is_part_of_the_key(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    wrap(CountingLLM("fake:a"), path, "record").complete("hello", **BASE)
    assert wrap("fake:a", path, "replay").complete("hello", **BASE).text.startswith("olleh")
    with pytest.raises(BackendError, match="not in cassette"):
        wrap("fake:b", path, "replay").complete("hello", **BASE)


@pytest.mark.parametrize(
    "change",
    [
        {"messages": [{"role": "user", "content": "bye"}]},
        {"schema": {"type": "array"}},
        {"max_tokens": 100},
        {"temperature": 0.5},
        {"seed": 9},
    ],
)
def test_every_json_parameter_is_part_of_the_key(tmp_path: Path, change: dict) -> None:
    path = tmp_path / "c.jsonl"
    base = {"messages": [{"role": "user", "content": "hi"}], "schema": {"type": "object"}}
    wrap(CountingLLM(), path, "record").json(base["messages"], base["schema"])
    args = {**base, **change}
    with pytest.raises(BackendError, match="not in cassette"):
        wrap("fake:echo", path, "replay").json(args.pop("messages"), args.pop("schema"), **args)


def test_missing_key_names_the_cassette_and_the_prompt(tmp_path: Path) -> None:
    path = tmp_path / "plans.jsonl"
    wrap(CountingLLM(), path, "record").complete("a", **BASE)
    with pytest.raises(BackendError) as err:
        wrap("fake:echo", path, "replay").complete("put the mug in the sink", **BASE)
    message = str(err.value)
    assert str(path) in message
    assert "put the mug in the sink" in message
    assert "re-record" in message


def test_auto_records_once_then_replays(tmp_path: Path) -> None:
    fake = CountingLLM()
    llm = wrap(fake, tmp_path / "c.jsonl", "auto")
    first = llm.complete("x", **BASE)
    second = llm.complete("x", **BASE)
    assert first == second
    assert fake.calls == 1
    again = wrap(CountingLLM(), tmp_path / "c.jsonl", "auto")
    again.complete("x", **BASE)
    assert again.inner.calls == 0


def test_record_mode_always_calls_and_latest_line_wins(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    fake = CountingLLM()
    llm = wrap(fake, path, "record")
    llm.complete("x", **BASE)
    llm.complete("x", **BASE)
    assert fake.calls == 2
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 2 and lines[0]["key"] == lines[1]["key"]


def test_replay_of_absent_file_and_corrupt_line_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="does not exist"):
        wrap("fake:echo", tmp_path / "none.jsonl", "replay")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "k", "response": 1}\nnot json\n')
    with pytest.raises(BackendError, match="line 2"):
        wrap("fake:echo", bad, "replay")
    with pytest.raises(BackendError, match="mode"):
        wrap("fake:echo", bad, "rewind")

"""Fuzzing the OpenAI-compatible backend with generated HTTP answers.

The answers come from an httpx.MockTransport: no socket, but the same code path from the streamed body onwards
(size cap, deadline check between chunks, UTF-8 and guarded JSON, field types, text cap). The socket-level
deadline has its own test with a real server (tests/llm/test_openai_limits.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from types import SimpleNamespace
from typing import Any

import httpx
from hypothesis import event, given
from hypothesis import strategies as st

from situated.errors import SituatedError
from situated.llm.base import Completion
from situated.llm.openai import OpenAILLM

Guard = Callable[[float], AbstractContextManager[None]]
ANY = st.none() | st.booleans() | st.integers(-5, 10**30) | st.floats() | st.text(max_size=20) | st.just([])


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly (8 in 10) `strategy`, else any scalar or the field left out."""
    return st.integers(0, 9).flatmap(lambda i: strategy if i < 8 else ANY if i == 8 else st.just(_ABSENT))


_ABSENT = object()


def _drop_absent(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_absent(v) for k, v in value.items() if v is not _ABSENT}
    if isinstance(value, list):
        return [_drop_absent(v) for v in value if v is not _ABSENT]
    return value


CHOICE = st.fixed_dictionaries({
    "text": maybe(st.text(max_size=300)),
    "message": maybe(st.fixed_dictionaries({"content": maybe(st.text(max_size=300))})),
    "finish_reason": maybe(st.sampled_from(["stop", "length", None])),
})
USAGE = st.fixed_dictionaries({
    "prompt_tokens": maybe(st.integers(0, 10**6)),
    "completion_tokens": maybe(st.integers(-2, 10**6)),
    "prompt_tokens_details": maybe(st.fixed_dictionaries({"cached_tokens": maybe(st.integers(0, 100))})),
})
ANSWER = st.builds(
    _drop_absent,
    st.fixed_dictionaries({"choices": maybe(st.lists(maybe(CHOICE), min_size=1, max_size=3)), "usage": maybe(USAGE)}),
)


class Chunks(httpx.SyncByteStream):
    def __init__(self, parts: list[bytes]) -> None:
        self.parts = parts

    def __iter__(self) -> Iterator[bytes]:
        yield from self.parts


@st.composite
def responses(draw: st.DrawFn, fuzz: SimpleNamespace) -> tuple[int, list[bytes]]:
    """(status, body chunks): a generated answer, mutated or not, or any hostile JSON; split at random points."""
    clean = st.builds(lambda a: json.dumps(a).encode(), ANSWER)
    body = draw(st.one_of(clean, clean, fuzz.mutated(clean), fuzz.hostile_json))
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=4)))
    parts = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    status = draw(st.sampled_from([200, 200, 200, 200, 400, 404, 422, 429, 500]))
    return status, parts


def backend(replies: Iterator[tuple[int, list[bytes]]], **opts: Any) -> OpenAILLM:
    def answer(request: httpx.Request) -> httpx.Response:
        status, parts = next(replies)
        return httpx.Response(status, stream=Chunks(parts))

    return OpenAILLM("m", base_url="http://llm.test/v1", api_key="", retries=0, backoff=0.0,
                     transport=httpx.MockTransport(answer), **opts)


@given(data=st.data())
def test_complete_returns_a_completion_or_our_error(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard) -> None:
    replies = iter(data.draw(st.lists(responses(fuzz), min_size=2, max_size=2)))
    max_tokens = data.draw(st.sampled_from([1, 2, 64]))
    llm = backend(replies, max_response_bytes=data.draw(st.sampled_from([200, *[8 * 1024 * 1024] * 3])))
    with no_hang(10):
        try:
            done = llm.complete("hi", max_tokens=max_tokens)
        except SituatedError as exc:
            assert "\n" not in str(exc)
            event(f"error: {str(exc).split(': ')[1][:30]}")
            return
    event(f"completion ({done.finish_reason})")
    assert isinstance(done, Completion) and isinstance(done.text, str)
    assert done.finish_reason in ("stop", "length")
    assert len(done.text.encode("utf-8")) <= max_tokens * 32
    assert min(done.prompt_tokens, done.completion_tokens, done.cached_tokens) >= 0


@given(data=st.data())
def test_json_returns_a_valid_value_or_our_error(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard) -> None:
    contents = data.draw(st.lists(fuzz.hostile_json | st.builds(fuzz.dumps, fuzz.json_values()), min_size=4,
                                  max_size=4))
    replies = iter([(200, [json.dumps({"choices": [{"message": {"content": c.decode("utf-8", "replace")}}]})
                           .encode()]) for c in contents])
    llm = backend(replies)
    with no_hang(10):
        try:
            value = llm.json([{"role": "user", "content": "x"}], {"type": "array"}, max_tokens=4096)
        except SituatedError:
            event("error")
            return
    event("value")
    assert isinstance(value, list)


@given(data=st.data())
def test_count_tokens_always_answers(data: st.DataObject, fuzz: SimpleNamespace, no_hang: Guard) -> None:
    replies = iter(data.draw(st.lists(responses(fuzz), min_size=2, max_size=2)))
    with no_hang(10):
        count = backend(replies).count_tokens("walk to the kitchen and open the fridge")
    assert isinstance(count, int) and count >= 0

"""The OpenAI-compatible backend under hostile servers: huge bodies, dripping sockets, wrongly typed answers."""

from __future__ import annotations

import json
import socket
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from situated.errors import BackendError
from situated.llm.openai import MAX_RESPONSE_BYTES, OpenAILLM

URL = "http://llm.test/v1"


def mock(answer: Callable[[httpx.Request], httpx.Response], **opts: Any) -> OpenAILLM:
    """A backend whose HTTP answers come from `answer` (httpx.MockTransport: no socket, same parsing code)."""
    opts = {"retries": 0, "backoff": 0.0, **opts}
    return OpenAILLM("m", base_url=URL, api_key="", transport=httpx.MockTransport(answer), **opts)


def reply(data: Any, status: int = 200) -> Callable[[httpx.Request], httpx.Response]:
    body = data if isinstance(data, bytes) else json.dumps(data).encode()
    return lambda request: httpx.Response(status, content=body)


class Endless(httpx.SyncByteStream):
    """`total` bytes of a JSON-looking body, generated 64 KiB at a time; counts what was pulled."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.sent = 0

    def __iter__(self) -> Iterator[bytes]:
        yield b'{"choices": [{"text": "'
        while self.sent < self.total:
            chunk = bytes(65536)  # a new object each time, as from a socket
            self.sent += len(chunk)
            yield chunk


# ------------------------------------------------------------------------------------------------- size

def test_a_200_mb_body_is_refused_with_bounded_memory() -> None:
    stream = Endless(200 * 1024 * 1024)
    llm = mock(lambda request: httpx.Response(200, stream=stream), retries=2)
    tracemalloc.start()
    try:
        with pytest.raises(BackendError, match=rf"/completions: response larger than {MAX_RESPONSE_BYTES} bytes"):
            llm.complete("hi")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert stream.sent <= MAX_RESPONSE_BYTES + 65536  # stopped right past the limit, and not retried
    assert peak < 3 * MAX_RESPONSE_BYTES, f"peak {peak / 2**20:.1f} MiB"


def test_a_declared_content_length_over_the_limit_is_refused_unread() -> None:
    stream = Endless(10_000)
    headers = {"Content-Length": str(10**12)}
    llm = mock(lambda request: httpx.Response(200, headers=headers, stream=stream), max_response_bytes=1000)
    with pytest.raises(BackendError, match="response larger than 1000 bytes: Content-Length 1000000000000"):
        llm.complete("hi")
    assert stream.sent == 0


def test_completion_text_is_cut_at_max_tokens_times_32_bytes() -> None:
    answer = {"choices": [{"text": "é" * 1000, "finish_reason": "stop"}]}
    done = mock(reply(answer)).complete("hi", max_tokens=10)
    assert (done.text, done.finish_reason) == ("é" * 160, "length")  # 320 bytes of two-byte characters
    short = mock(reply(answer)).complete("hi", max_tokens=100)
    assert (short.text, short.finish_reason) == ("é" * 1000, "stop")


# ------------------------------------------------------------------------------------------------- time

@contextmanager
def dripping_server(head_first: bool, gap: float = 0.15, limit: float = 10.0) -> Iterator[str]:
    """A loopback server that answers every request one byte every `gap` seconds (after sending the status line
    and headers at once when `head_first`); it stops a connection when the client leaves or after `limit` s."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    stop = threading.Event()
    body = json.dumps({"choices": [{"text": "x" * 500}]}).encode()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)

    def serve(conn: socket.socket) -> None:
        started = time.monotonic()
        with conn:
            try:
                conn.recv(65536)
                if head_first:
                    conn.sendall(head)
                for byte in (body if head_first else head + body):
                    if stop.is_set() or time.monotonic() - started > limit:
                        return
                    conn.sendall(bytes([byte]))
                    time.sleep(gap)
            except OSError:
                return

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join(2)
        listener.close()


@pytest.mark.parametrize(("head_first", "timeout"), [(False, 2.0), (True, 1.0)])
def test_a_dripping_server_cannot_hold_a_try_past_its_timeout(head_first: bool, timeout: float) -> None:
    with dripping_server(head_first) as url:
        llm = OpenAILLM("m", base_url=url, api_key="", timeout=timeout, retries=0)
        start = time.monotonic()
        with pytest.raises(BackendError, match=rf"timed out \(\w+\): no complete answer within {timeout:g} s"):
            llm.complete("hi")
        took = time.monotonic() - start
    assert took < timeout + 0.5, f"took {took:.2f} s"


# ------------------------------------------------------------------------------------------------- types

CHOICE = {"text": "ok", "finish_reason": "stop"}


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"choices": "ok"}, "field choices: expected list of object, got string"),
        ({"choices": [CHOICE, 3]}, r"field choices\[1\]: expected object, got integer"),
        ({"choices": [{"text": 5}]}, r"field choices\[0\].text: expected string, got integer"),
        ({"choices": [{"message": "hi"}]}, r"field choices\[0\].message: expected object, got string"),
        ({"choices": [{"message": {"content": None}}]}, r"field choices\[0\].message.content: expected string"),
        ({"choices": [{"text": "a", "finish_reason": 1}]}, r"choices\[0\].finish_reason: expected string or null"),
        ({"choices": [CHOICE], "usage": "many"}, "field usage: expected object or null, got string"),
        ({"choices": [CHOICE], "usage": {"prompt_tokens": "5"}}, "field usage.prompt_tokens: expected integer"),
        ({"choices": [CHOICE], "usage": {"completion_tokens": -1}}, "field usage.completion_tokens: negative count -1"),
        ({"choices": [CHOICE], "usage": {"prompt_tokens": True}}, "usage.prompt_tokens: expected integer or null"),
        (
            {"choices": [CHOICE], "usage": {"prompt_tokens_details": {"cached_tokens": 1.5}}},
            "field usage.prompt_tokens_details.cached_tokens: expected integer or null, got number",
        ),
    ],
)
def test_wrongly_typed_answer_fields_are_named(answer: dict, message: str) -> None:
    with pytest.raises(BackendError, match=rf"openai:m at {URL}/completions: malformed answer: (field )?{message}"):
        mock(reply(answer)).complete("hi")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"[" * 100_000, r"line 1, column 65: JSON nested deeper than 64 levels; body starts b'\[\[\["),
        (b'{"choices": [{"text": "a"}], "usage": {"prompt_tokens": NaN}}', "line 1, column 57: NaN is not a JSON"),
        (b'{"choices": [{"text": "a"}], "n": ' + b"9" * 5000 + b"}", "line 1, column 35: integer with 5000 digits"),
        (b'{"choices": [{"text": "caf\xe9"}]}', r"line 1, column 27: not UTF-8 text \(byte e9"),
        (b"", r"line 1, column 1: invalid JSON \(Expecting value\); body starts b''"),
    ],
)
def test_hostile_bodies_are_backend_errors(body: bytes, message: str) -> None:
    with pytest.raises(BackendError, match=rf"malformed JSON body: {message}"):
        mock(reply(body)).complete("hi")


def test_well_typed_answers_with_null_usage_still_work() -> None:
    answer = {"choices": [{"text": "ok", "finish_reason": None}], "usage": {"prompt_tokens": None}}
    done = mock(reply(answer)).complete("hi")
    assert (done.text, done.finish_reason, done.prompt_tokens) == ("ok", "stop", 0)


def test_a_deeply_nested_json_answer_is_a_backend_error() -> None:
    content = "[" * 50_000
    answer = {"choices": [{"message": {"content": content}, "finish_reason": "stop"}]}
    with pytest.raises(BackendError, match=r"answer is not JSON .*nested deeper than 64 levels"):
        mock(reply(answer)).json([{"role": "user", "content": "x"}], {"type": "array"}, max_tokens=100_000)


def test_a_prompt_that_is_not_text_is_a_backend_error() -> None:
    with pytest.raises(BackendError, match="request is not UTF-8 text: surrogates not allowed"):
        mock(reply({"choices": [CHOICE]})).complete("bad \ud800")


def test_count_tokens_falls_back_to_an_estimate_on_a_hostile_tokenizer() -> None:
    llm = mock(reply(b'{"tokens": ' + b"[" * 100_000 + b"}"))
    assert llm.count_tokens("walk to the kitchen") == 5

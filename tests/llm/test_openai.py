"""OpenAI-compatible backend on real sockets: tiny local servers for failures, llama-cpp-python's server."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

import fakes
from fakes import free_port
from situated.errors import BackendError
from situated.llm import load
from situated.llm.openai import OpenAILLM

Reply = tuple[int, str]


@contextmanager
def http_server(answer: Callable[[str, dict], Reply]) -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server answering POSTs with `answer(path, body)`; yields (base_url, paths seen)."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
            seen.append(self.path)
            status, text = answer(self.path, body)
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


def completion(text: str, finish: str = "stop") -> str:
    usage = {"prompt_tokens": 5, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 3}}
    return json.dumps({"choices": [{"text": text, "finish_reason": finish}], "usage": usage})


def chat(content: str) -> str:
    return json.dumps({"choices": [{"message": {"content": content}, "finish_reason": "stop"}]})


def backend(base_url: str, **opts: object) -> OpenAILLM:
    return OpenAILLM("test-model", base_url=base_url, api_key="", retries=2, backoff=0.0, **opts)


def test_http_500_is_retried_a_bounded_number_of_times() -> None:
    with (
        http_server(lambda path, body: (500, '{"error": "boom"}')) as (url, seen),
        pytest.raises(BackendError) as err,
    ):
        backend(url).complete("hi")
    assert len(seen) == 3
    assert f"openai:test-model at {url}/completions: HTTP 500 after 3 tries" in str(err.value)
    assert "boom" in str(err.value)


def test_malformed_json_body_is_a_clear_error() -> None:
    with (
        http_server(lambda path, body: (200, "{not json")) as (url, seen),
        pytest.raises(BackendError, match=r"malformed JSON body after 3 tries"),
    ):
        backend(url).complete("hi")
    assert len(seen) == 3


def test_client_error_is_not_retried() -> None:
    with (
        http_server(lambda path, body: (401, '{"error": "bad key"}')) as (url, seen),
        pytest.raises(BackendError, match="HTTP 401"),
    ):
        backend(url).complete("hi")
    assert len(seen) == 1


def test_recovers_when_a_retry_succeeds() -> None:
    replies = iter([(503, "busy"), (429, "slow down"), (200, completion(" there", "length"))])
    with http_server(lambda path, body: next(replies)) as (url, seen):
        done = backend(url).complete("hi", stop=["\n"], grammar='root ::= "x"')
    assert (done.text, done.finish_reason) == (" there", "length")
    assert (done.prompt_tokens, done.completion_tokens, done.cached_tokens) == (5, 2, 3)
    assert len(seen) == 3


def test_request_carries_parameters_and_grammar() -> None:
    bodies: list[dict] = []

    def answer(path: str, body: dict) -> Reply:
        bodies.append(body)
        return 200, completion("ok")

    with http_server(answer) as (url, _):
        backend(url).complete("p", stop=["#"], max_tokens=7, temperature=0.5, grammar='root ::= "a"', seed=4)
    assert bodies[0] == {
        "model": "test-model",
        "prompt": "p",
        "stop": ["#"],
        "max_tokens": 7,
        "temperature": 0.5,
        "frequency_penalty": 0.0,
        "grammar": 'root ::= "a"',
        "seed": 4,
    }


def test_falls_back_to_chat_when_completions_is_missing() -> None:
    def answer(path: str, body: dict) -> Reply:
        if path.endswith("/completions") and "chat" not in path:
            return 404, '{"error": "no such route"}'
        assert body["messages"] == [{"role": "user", "content": "hello"}]
        return 200, chat("from chat")

    with http_server(answer) as (url, seen):
        llm = backend(url)
        assert llm.complete("hello").text == "from chat"
        assert llm.complete("hello").text == "from chat"
    assert seen == ["/v1/completions", "/v1/chat/completions", "/v1/chat/completions"]


SCHEMA = {
    "type": "object",
    "properties": {"action": {"enum": ["walk", "grab"]}, "count": {"type": "integer"}},
    "required": ["action", "count"],
}


def test_json_falls_back_to_json_object_and_retries_an_invalid_answer_once() -> None:
    answers = iter([chat('{"action": "fly", "count": 1}'), chat('{"action": "grab", "count": 2}')])

    def answer(path: str, body: dict) -> Reply:
        if body["response_format"]["type"] == "json_schema":
            return 422, '{"detail": "unsupported response_format"}'
        assert body["response_format"] == {"type": "json_object", "schema": SCHEMA}
        return 200, next(answers)

    with http_server(answer) as (url, seen):
        value = backend(url).json([{"role": "user", "content": "act"}], SCHEMA)
    assert value == {"action": "grab", "count": 2}
    assert len(seen) == 3


def test_json_invalid_twice_is_a_backend_error() -> None:
    with (
        http_server(lambda path, body: (200, chat('{"action": "walk"}'))) as (url, seen),
        pytest.raises(BackendError, match="missing 'count'"),
    ):
        backend(url).json([{"role": "user", "content": "act"}], SCHEMA)
    assert len(seen) == 2


def test_connection_refused_is_a_clear_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"  # bound then closed: nothing listens there
    with pytest.raises(BackendError, match=r"connection failed \(ConnectError\) after 3 tries"):
        backend(url).complete("hi")


def test_silent_server_times_out() -> None:
    accepted: list[socket.socket] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def accept_and_ignore() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(conn)

    threading.Thread(target=accept_and_ignore, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    try:
        llm = OpenAILLM("m", base_url=url, timeout=0.3, retries=1, backoff=0.0)
        with pytest.raises(BackendError, match=r"timed out \(ReadTimeout\) after 2 tries"):
            llm.complete("hi")
        assert len(accepted) == 2
    finally:
        listener.close()
        for conn in accepted:
            conn.close()


def test_base_url_and_key_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    headers: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            headers.append(self.headers.get("Authorization", ""))
            data = completion("env").encode()
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        assert load("openai:whatever").complete("x").text == "env"
    finally:
        server.shutdown()
        server.server_close()
    assert headers == ["Bearer sk-test"]


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    """llama-cpp-python's own OpenAI-compatible server on the assembled 0.5B model."""
    with fakes.llama_server(n_ctx=2048, ready_within=90) as url:
        yield url


@pytest.mark.slow
def test_real_server_completion_json_and_tokens(llama_server: str) -> None:
    llm = OpenAILLM("qwen2.5-coder-0.5b", base_url=llama_server, timeout=120, retries=0)
    done = llm.complete("def add(a, b):\n    return", stop=["\n"], max_tokens=12)
    assert "\n" not in done.text
    assert "a" in done.text and "b" in done.text
    assert done.prompt_tokens > 0 and done.completion_tokens > 0

    capped = llm.complete("List the numbers from one to fifty: 1, 2, 3,", max_tokens=4)
    assert capped.finish_reason == "length"
    assert capped.completion_tokens == 4

    messages = [{"role": "user", "content": "The robot should walk to the kitchen. Answer as JSON."}]
    value = llm.json(messages, SCHEMA, max_tokens=40)
    assert value["action"] in ("walk", "grab") and isinstance(value["count"], int)

    assert llm.count_tokens("walk to the kitchen") == len(
        httpx.post(
            f"{llama_server.removesuffix('/v1')}/extras/tokenize", json={"input": "walk to the kitchen"}
        ).json()["tokens"]
    )
    assert llm.count_tokens("walk to the kitchen") < llm.count_tokens(
        "walk to the kitchen and open the fridge"
    )

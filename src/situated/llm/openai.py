"""Any OpenAI-compatible server (OpenAI, llama.cpp server, llama-cpp-python server, vLLM, ...) over httpx.

- `complete` posts to `/completions`; a server without it (HTTP 404/405) is remembered and `complete` then
  goes through `/chat/completions` with the prompt as one user message.
- `json` posts to `/chat/completions` with `response_format` `json_schema`; a server that rejects that (HTTP
  400/422) gets `{"type": "json_object", "schema": ...}` instead (llama-cpp-python's server). The answer is
  validated; an invalid one is asked again once, with the problem, before a BackendError.
- A grammar is sent as the extra body field `grammar` (llama.cpp server and vLLM accept it); callers validate.
- Connection errors, timeouts, HTTP 429/5xx and malformed bodies are retried `retries` more times with
  exponential backoff; then a BackendError says what failed, where, and after how many tries.
- `count_tokens` asks the server's tokenizer (`/extras/tokenize`, `/tokenize`) and otherwise estimates
  one token per 4 characters.

Limits (docs/robustness.md): `timeout` bounds each try end to end (connect, send, headers, body), not each read:
every socket wait is capped at the time left, so a server that drips bytes cannot hold a try longer; a call makes
at most `retries` + 1 tries. A body larger than `max_response_bytes` is refused unread past the limit. The body is
parsed with the guarded JSON parser (bounded nesting and numbers) and its fields are type-checked; a completion
longer than `max_tokens` x 32 bytes is cut there and reported with finish_reason "length".
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import ssl
import time
from collections.abc import Iterator, Sequence
from typing import Any

import httpcore
import httpx

from situated import files
from situated.errors import BackendError, DataError
from situated.llm.base import Completion, parse_json, schema_problems
from situated.llm.chat_template import chat_template_for

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
"""Largest response body read (an answer of 4,096 tokens is about 20 KB)."""
BYTES_PER_TOKEN = 32
"""A completion longer than max_tokens x this many UTF-8 bytes is cut there (no tokenizer writes longer tokens)."""

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("situated_http_deadline", default=None)


def _capped(timeout: float | None, error: type[Exception]) -> float | None:
    """`timeout` shortened to the time left before the current try's deadline; `error` once it has passed."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise error("deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every wait ends by the deadline of the try it serves."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _capped(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _capped(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        timeout = _capped(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's socket backend with `_DeadlineStream`s."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        timeout = _capped(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        timeout = _capped(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


@contextlib.contextmanager
def _httpx_errors() -> Iterator[None]:
    """httpcore's exceptions as httpx's (same names), as httpx's own transport does."""
    try:
        yield
    except httpcore.TimeoutException as exc:
        raise getattr(httpx, type(exc).__name__, httpx.TimeoutException)(str(exc)) from exc
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.ProxyError, httpcore.UnsupportedProtocol) as exc:
        raise getattr(httpx, type(exc).__name__, httpx.TransportError)(str(exc)) from exc


class _ResponseStream(httpx.SyncByteStream):
    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _httpx_errors():
            yield from self._stream

    def close(self) -> None:
        if hasattr(self._stream, "close"):
            self._stream.close()


class _DeadlineTransport(httpx.BaseTransport):
    """httpx's plain HTTP/1.1 transport over `_DeadlineBackend` (connection pooling and TLS as usual)."""

    def __init__(self) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=100,  # httpx's default limits
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=_DeadlineBackend(),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = httpcore.URL(
            scheme=request.url.raw_scheme, host=request.url.raw_host, port=request.url.port,
            target=request.url.raw_path,
        )
        core = httpcore.Request(
            method=request.method, url=url, headers=request.headers.raw, content=request.stream,
            extensions=request.extensions,
        )
        with _httpx_errors():
            response = self._pool.handle_request(core)
        return httpx.Response(
            status_code=response.status, headers=response.headers, stream=_ResponseStream(response.stream),
            extensions=response.extensions,
        )

    def close(self) -> None:
        self._pool.close()


class _Failure(Exception):
    """One failed try; `retry` says whether trying again may help."""

    def __init__(self, summary: str, detail: str, retry: bool, status: int | None = None) -> None:
        detail = " ".join(detail.split())  # a server's text may hold line breaks; messages are one line
        super().__init__(f"{summary}: {detail}")
        self.summary = summary
        self.detail = detail
        self.retry = retry
        self.status = status


class OpenAILLM:
    """`openai:<model>` against `base_url` (option, else $OPENAI_BASE_URL, else api.openai.com)."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        retries: int = 2,
        backoff: float = 0.5,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """`timeout`: seconds per try, end to end; `transport`: an httpx transport for tests (the default caps
        every socket wait at the try's deadline)."""
        self.model = model
        self.uri = f"openai:{model}"
        self.chat_template = chat_template_for(self.uri)
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        headers["Accept-Encoding"] = "identity"  # the size limit then counts what the server sends
        self.retries = max(0, retries)
        self.backoff = backoff
        self.timeout = float(timeout)
        self.max_response_bytes = int(max_response_bytes)
        self._client = httpx.Client(timeout=timeout, headers=headers, transport=transport or _DeadlineTransport())
        self._chat_only = False
        self._json_schema_format = True
        self._tokenize_route: str | None = None
        self._tokenize_probed = False

    def close(self) -> None:
        self._client.close()

    # -- transport -------------------------------------------------------------------------------------------

    def _where(self) -> str:
        return f"{self.uri} at {self.base_url}"

    def _fetch(self, url: str, body: dict) -> tuple[int, bytes]:
        """POST `body` as JSON; (status, body bytes), the whole exchange within `timeout` seconds and the body
        within `max_response_bytes`; `_Failure` otherwise."""
        deadline = time.monotonic() + self.timeout
        token = _DEADLINE.set(deadline)
        try:
            with self._client.stream("POST", url, json=body, timeout=self.timeout) as response:
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > self.max_response_bytes:
                    raise _Failure(f"response larger than {self.max_response_bytes} bytes",
                                   f"Content-Length {declared}", retry=False)
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > self.max_response_bytes:
                        raise _Failure(f"response larger than {self.max_response_bytes} bytes",
                                       "refused after reading that much", retry=False)
                    chunks.append(chunk)
                    if time.monotonic() > deadline:
                        raise _Failure("timed out (deadline)", f"no complete answer within {self.timeout:g} s",
                                       retry=True)
                return response.status_code, b"".join(chunks)
        except httpx.TimeoutException as exc:
            detail = f"no complete answer within {self.timeout:g} s ({str(exc) or 'no answer'})"
            raise _Failure(f"timed out ({type(exc).__name__})", detail, retry=True) from None
        except httpx.HTTPError as exc:
            raise _Failure(f"connection failed ({type(exc).__name__})", str(exc), retry=True) from None
        except UnicodeEncodeError as exc:  # a prompt holding an unpaired surrogate cannot be sent as UTF-8
            raise _Failure("request is not UTF-8 text", exc.reason, retry=False) from None
        finally:
            _DEADLINE.reset(token)

    def _try_once(self, url: str, body: dict) -> dict:
        status, raw = self._fetch(url, body)
        if status >= 400:
            retry = status == 429 or status >= 500
            raise _Failure(f"HTTP {status}", raw[:400].decode("utf-8", "replace")[:200], retry=retry, status=status)
        try:
            data = files.parse_json(files.decode_text(raw, "body"), "body")
        except DataError as exc:
            detail = f"{str(exc).removeprefix('body: ')}; body starts {raw[:60]!r}"
            raise _Failure("malformed JSON body", detail, retry=True) from None
        if not isinstance(data, dict) or not data.get("choices"):
            raise _Failure("answer has no choices", str(data)[:120], retry=True)
        try:
            _check_answer(data)
        except DataError as exc:
            raise _Failure("malformed answer", str(exc).removeprefix("answer: "), retry=True) from None
        return data

    def _post(self, path: str, body: dict, passthrough: tuple[int, ...] = ()) -> dict:
        """POST with bounded retries; statuses in `passthrough` come back as `_Failure` to the caller."""
        url = f"{self.base_url}{path}"
        tries = self.retries + 1
        for attempt in range(1, tries + 1):
            try:
                return self._try_once(url, body)
            except _Failure as failure:
                if failure.status in passthrough:
                    raise
                if not failure.retry or attempt == tries:
                    count = f" after {attempt} tries" if attempt > 1 else ""
                    raise BackendError(
                        f"{self._where()}{path}: {failure.summary}{count}: {failure.detail}"
                    ) from None
                time.sleep(self.backoff * 2 ** (attempt - 1))
        raise AssertionError("unreachable")

    # -- protocol --------------------------------------------------------------------------------------------

    def complete(self, prompt: str, *, stop: Sequence[str] = (), max_tokens: int = 256, temperature: float = 0.0,
                 frequency_penalty: float = 0.0, grammar: str | None = None, seed: int = 0) -> Completion:
        start = time.perf_counter()
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "frequency_penalty": frequency_penalty,
            "seed": seed,
        }
        if stop:
            body["stop"] = list(stop)
        if grammar is not None:
            body["grammar"] = grammar
        data = None
        if not self._chat_only:
            try:
                data = self._post("/completions", {**body, "prompt": prompt}, passthrough=(404, 405))
            except _Failure:
                self._chat_only = True
        if data is None:
            data = self._post(
                "/chat/completions", {**body, "messages": [{"role": "user", "content": prompt}]}
            )
        choice = data["choices"][0]
        text = choice.get("text") if "text" in choice else (choice.get("message") or {}).get("content")
        if not isinstance(text, str):
            raise BackendError(f"{self._where()}: answer has no text: {str(choice)[:120]}")
        text, cut = _cap_text(text, max_tokens)
        return Completion(
            text=text,
            finish_reason="length" if cut or choice.get("finish_reason") == "length" else "stop",
            seconds=time.perf_counter() - start,
            **_usage(data),
        )

    def json(self, messages: list[dict], schema: dict, *, max_tokens: int = 512, temperature: float = 0.0,
             seed: int = 0) -> Any:
        conversation = list(messages)
        text = self._chat_json(conversation, schema, max_tokens, temperature, seed)
        problems = _json_problems(text, schema)
        if problems:
            conversation += [
                {"role": "assistant", "content": text},
                {
                    "role": "user",
                    "content": f"That answer is invalid ({problems}). Reply with JSON only, "
                    "matching the schema.",
                },
            ]
            text = self._chat_json(conversation, schema, max_tokens, temperature, seed)
        where = f"{self._where()} (after one retry)" if problems else self._where()
        try:
            files.parse_json(text, "answer")  # bounded nesting and numbers before the plain parser below
        except DataError as exc:
            raise BackendError(f"{where}: answer is not JSON ({exc}): {text[:120]!r}") from None
        return parse_json(text, schema, where)

    def _chat_json(
        self, messages: list[dict], schema: dict, max_tokens: int, temperature: float, seed: int
    ) -> str:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "seed": seed,
        }
        data = None
        if self._json_schema_format:
            strict = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
            request = {**body, "response_format": strict}
            try:
                data = self._post("/chat/completions", request, passthrough=(400, 422, 500))
            except _Failure as failure:
                # Servers that lack json_schema reject it with 400/422 (llama-cpp-python: 500 naming the field).
                if failure.status in (400, 422) or "json_schema" in failure.detail:
                    self._json_schema_format = False
                else:
                    data = self._post("/chat/completions", request)
        if data is None:
            loose = {"type": "json_object", "schema": schema}
            data = self._post("/chat/completions", {**body, "response_format": loose})
        content = (data["choices"][0].get("message") or {}).get("content")
        if not isinstance(content, str):
            raise BackendError(
                f"{self._where()}: chat answer has no content: {str(data['choices'][0])[:120]}"
            )
        return _cap_text(content, max_tokens)[0]

    def count_tokens(self, text: str) -> int:
        root = self.base_url.removesuffix("/v1")
        routes = [self._tokenize_route] if self._tokenize_probed else ["/extras/tokenize", "/tokenize"]
        for route in routes:
            if route is None:
                break
            try:
                status, raw = self._fetch(f"{root}{route}", {"input": text, "content": text})
                data = files.parse_json(files.decode_text(raw, "body"), "body") if status == 200 else None
                tokens = data.get("tokens") if isinstance(data, dict) else None
            except (_Failure, DataError):
                tokens = None
            if isinstance(tokens, list):
                self._tokenize_route, self._tokenize_probed = route, True
                return len(tokens)
        self._tokenize_probed = True
        return math.ceil(len(text) / 4)


_COUNT = int | None


def _check_answer(data: dict) -> None:
    """Type-check the fields of a (chat) completion answer that we read; DataError naming the field."""
    choices = files.field(data, "choices", list[dict[str, Any]], "answer")
    for index, choice in enumerate(choices):
        name = f"choices[{index}]"
        files.check_type(choice.get("finish_reason"), str | None, "answer", name=f"{name}.finish_reason")
        if "text" in choice:
            files.check_type(choice["text"], str, "answer", name=f"{name}.text")
        else:
            message = files.check_type(choice.get("message"), dict[str, Any], "answer", name=f"{name}.message")
            files.check_type(message.get("content"), str, "answer", name=f"{name}.message.content")
    usage = files.field(data, "usage", dict[str, Any] | None, "answer", default=None) or {}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        count = files.check_type(usage.get(key), _COUNT, "answer", name=f"usage.{key}")
        if count is not None and count < 0:
            raise DataError(f"answer: field usage.{key}: negative count {count}")
    details = files.check_type(usage.get("prompt_tokens_details"), dict[str, Any] | None, "answer",
                               name="usage.prompt_tokens_details") or {}
    cached = files.check_type(details.get("cached_tokens"), _COUNT, "answer",
                              name="usage.prompt_tokens_details.cached_tokens")
    if cached is not None and cached < 0:
        raise DataError(f"answer: field usage.prompt_tokens_details.cached_tokens: negative count {cached}")


def _cap_text(text: str, max_tokens: int) -> tuple[str, bool]:
    """`text` cut to `max_tokens` x BYTES_PER_TOKEN UTF-8 bytes (at a character boundary); whether it was cut."""
    if max_tokens <= 0 or len(text) * 4 <= max_tokens * BYTES_PER_TOKEN:
        return text, False
    data = text.encode("utf-8")
    limit = max_tokens * BYTES_PER_TOKEN
    if len(data) <= limit:
        return text, False
    return data[:limit].decode("utf-8", "ignore"), True


def _usage(data: dict) -> dict[str, int]:
    usage = data.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    return {
        "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "completion_tokens": int(usage.get("completion_tokens") or 0),
        "cached_tokens": int(details.get("cached_tokens") or 0),
    }


def _json_problems(text: str, schema: dict) -> str:
    try:
        value = files.parse_json(text, "answer")
    except DataError as exc:
        return f"not JSON: {str(exc).removeprefix('answer: ')}"
    return "; ".join(schema_problems(value, schema)[:3])

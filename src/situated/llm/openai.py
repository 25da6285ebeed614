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
"""

from __future__ import annotations

import json as jsonlib
import math
import os
import time
from collections.abc import Sequence
from typing import Any

import httpx

from situated.errors import BackendError
from situated.llm.base import Completion, parse_json, schema_problems

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class _Failure(Exception):
    """One failed try; `retry` says whether trying again may help."""

    def __init__(self, summary: str, detail: str, retry: bool, status: int | None = None) -> None:
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
    ) -> None:
        self.model = model
        self.uri = f"openai:{model}"
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.retries = max(0, retries)
        self.backoff = backoff
        self._client = httpx.Client(timeout=timeout, headers=headers)
        self._chat_only = False
        self._json_schema_format = True
        self._tokenize_route: str | None = None
        self._tokenize_probed = False

    def close(self) -> None:
        self._client.close()

    # -- transport -------------------------------------------------------------------------------------------

    def _where(self) -> str:
        return f"{self.uri} at {self.base_url}"

    def _try_once(self, url: str, body: dict) -> dict:
        try:
            response = self._client.post(url, json=body)
        except httpx.TimeoutException as exc:
            raise _Failure(f"timed out ({type(exc).__name__})", str(exc) or "no answer", retry=True) from None
        except httpx.HTTPError as exc:
            raise _Failure(f"connection failed ({type(exc).__name__})", str(exc), retry=True) from None
        status = response.status_code
        if status >= 400:
            retry = status == 429 or status >= 500
            raise _Failure(f"HTTP {status}", response.text[:200], retry=retry, status=status)
        try:
            data = response.json()
        except ValueError:
            raise _Failure("malformed JSON body", repr(response.text[:120]), retry=True) from None
        if not isinstance(data, dict) or not data.get("choices"):
            raise _Failure("answer has no choices", str(data)[:120], retry=True)
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
        return Completion(
            text=text,
            finish_reason="length" if choice.get("finish_reason") == "length" else "stop",
            seconds=time.perf_counter() - start,
            **_usage(data),
        )

    def json(
        self,
        messages: list[dict],
        schema: dict,
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> Any:
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
        return parse_json(text, schema, f"{self._where()} (after one retry)" if problems else self._where())

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
        return content

    def count_tokens(self, text: str) -> int:
        root = self.base_url.removesuffix("/v1")
        routes = [self._tokenize_route] if self._tokenize_probed else ["/extras/tokenize", "/tokenize"]
        for route in routes:
            if route is None:
                break
            try:
                response = self._client.post(f"{root}{route}", json={"input": text, "content": text})
                tokens = response.json().get("tokens") if response.status_code == 200 else None
            except (httpx.HTTPError, ValueError, AttributeError):
                tokens = None
            if isinstance(tokens, list):
                self._tokenize_route, self._tokenize_probed = route, True
                return len(tokens)
        self._tokenize_probed = True
        return math.ceil(len(text) / 4)


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
        value = jsonlib.loads(text)
    except ValueError as exc:
        return f"not JSON: {exc}"
    return "; ".join(schema_problems(value, schema)[:3])

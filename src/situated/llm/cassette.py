"""Record/replay of LLM calls: deterministic, free re-runs of experiments.

A cassette is a JSON-lines file; each line holds one call: `{"key", "request", "response"}`. The key is the
sha256 of the backend URI, the call kind and every parameter (prompt or messages, stop, max_tokens,
temperature, frequency_penalty, grammar, schema, seed, scored continuations), so any change makes a new entry.
Calls: `complete`, `json`, `count_tokens` and `score` (log-probabilities of given continuations). Modes:

- `replay`: answer only from the cassette; a missing key is a BackendError naming the cassette and the prompt.
- `record`: always call the backend and append the answer (later lines win when the file is read again).
- `auto`: replay when the key is present, otherwise call the backend and record.

The wrapped backend may be given as a URI: it is then loaded only when a call actually needs it, so a full
replay needs neither weights nor a server.

A cassette is read through `situated.files` (regular file, size limit, UTF-8, bounded JSON) and every record is
type-checked (`key` a string, `request` an object whose `call` is known, `response` shaped as its call answers);
a bad record is a `CassetteError` naming the file, line and field. Records are appended with O_APPEND and fsync,
each on its own line even after an interrupted write.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from situated import files
from situated.errors import BackendError, DataError
from situated.llm import load
from situated.llm.base import LLM, Completion, Scores, ScoringLLM
from situated.llm.chat_template import chat_template_for

MODES = ("replay", "record", "auto")
CALLS = ("complete", "json", "count_tokens", "score")
CASSETTE_LIMIT = 1024 * 1024 * 1024
"""Largest cassette read (about 150,000 recorded completions); `Cassette(limit=...)` changes it."""
_COMPLETION_FIELDS: dict[str, Any] = {
    "text": str,
    "finish_reason": str,
    "prompt_tokens": int,
    "completion_tokens": int,
    "cached_tokens": int,
    "seconds": float,
}
_REQUIRED = ("text", "finish_reason", "prompt_tokens", "completion_tokens")
_SCORES_FIELDS: dict[str, Any] = {"logprobs": list[float], "prompt_tokens": int, "cached_tokens": int, "seconds": float}


class CassetteError(DataError, BackendError):
    """A malformed cassette: bad data (DataError) that stops the model backend (BackendError)."""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _completion(value: Any, where: str) -> Completion:
    """A recorded completion answer as a Completion; CassetteError naming the field that is wrong."""
    try:
        files.check_type(value, dict[str, Any], where, name="response")
        unknown = sorted(set(value) - set(_COMPLETION_FIELDS))
        if unknown:
            raise DataError(f"{files.at(where, field=files.field_path('response', unknown[0]))}: unknown field")
        for name, kind in _COMPLETION_FIELDS.items():
            if name in value:
                files.check_type(value[name], kind, where, name=f"response.{name}")
            elif name in _REQUIRED:
                raise DataError(f"{files.at(where, field=f'response.{name}')}: missing")
    except DataError as exc:
        raise CassetteError(str(exc)) from None
    return Completion(**{**value, "seconds": float(value.get("seconds", 0.0))})


def _scores(value: Any, where: str, expected: int | None = None) -> Scores:
    """A recorded score answer as Scores (`expected` continuations, when known); CassetteError otherwise."""
    try:
        files.check_type(value, dict[str, Any], where, name="response")
        unknown = sorted(set(value) - set(_SCORES_FIELDS))
        if unknown:
            raise DataError(f"{files.at(where, field=files.field_path('response', unknown[0]))}: unknown field")
        if "logprobs" not in value:
            raise DataError(f"{files.at(where, field='response.logprobs')}: missing")
        for name, kind in _SCORES_FIELDS.items():
            if name in value:
                files.check_type(value[name], kind, where, name=f"response.{name}")
        if expected is not None and len(value["logprobs"]) != expected:
            raise DataError(
                f"{files.at(where, field='response.logprobs')}: {len(value['logprobs'])} scores for {expected} "
                "continuations"
            )
    except DataError as exc:
        raise CassetteError(str(exc)) from None
    return Scores(
        logprobs=tuple(float(v) for v in value["logprobs"]),
        prompt_tokens=int(value.get("prompt_tokens", 0)),
        cached_tokens=int(value.get("cached_tokens", 0)),
        seconds=float(value.get("seconds", 0.0)),
    )


def _check_response(call: str, value: Any, where: str) -> None:
    """CassetteError unless `value` is shaped as an answer of `call`."""
    if call == "complete":
        _completion(value, where)
    elif call == "score":
        _scores(value, where)
    elif call == "count_tokens" and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise CassetteError(f"{files.at(where, field='response')}: expected a token count, got {value!r:.40}")


class Cassette:
    """The entries of one cassette file, keyed by request digest; appends on record."""

    def __init__(self, path: str | Path, mode: str = "replay", *, limit: int = CASSETTE_LIMIT) -> None:
        if mode not in MODES:
            raise BackendError(f"cassette mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.path = Path(path)
        self.mode = mode
        self._entries: dict[str, Any] = {}
        self._lines: dict[str, int] = {}
        self._lock = threading.Lock()
        if self.path.exists() or self.path.is_symlink():
            self._read(limit)
        elif mode == "replay":
            raise BackendError(f"cassette {self.path} does not exist; record it with mode 'record' or 'auto'")

    def _read(self, limit: int) -> None:
        try:
            for number, entry in files.read_json_lines(self.path, what="file", limit=limit):
                where = files.at(str(self.path), number)
                if not isinstance(entry, dict):
                    raise DataError(f"{where}: not a cassette entry (expected an object, got {type(entry).__name__})")
                key = files.field(entry, "key", str, where)
                request = files.field(entry, "request", dict[str, Any] | None, where, default=None)
                if "response" not in entry:
                    raise DataError(f"{files.at(where, field='response')}: missing")
                if request is not None:
                    call = files.check_type(request.get("call"), str, where, name="request.call")
                    if call not in CALLS:
                        raise DataError(f"{files.at(where, field='request.call')}: unknown call {call!r:.40}")
                    _check_response(call, entry["response"], where)
                self._entries[key] = entry["response"]
                self._lines[key] = number
        except DataError as exc:
            raise CassetteError(f"cassette {exc}") from None

    def where(self, key: str) -> str:
        """`cassette PATH: line N` of the record answering `key` (no line when it was recorded in this run)."""
        return files.at(f"cassette {self.path}", self._lines.get(key))

    @staticmethod
    def key(request: dict) -> str:
        return _digest(json.dumps(request, sort_keys=True, ensure_ascii=False))

    def get(self, key: str) -> Any | None:
        return self._entries.get(key)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def put(self, key: str, request: dict, response: Any) -> None:
        """Append one record (fsync'd, on its own line) and remember it."""
        line = json.dumps({"key": key, "request": request, "response": response}, ensure_ascii=False)
        try:  # what is written must read back (no NaN, unpaired surrogates, 101-digit integers, deep nesting)
            files.parse_json(line, "record")
        except DataError as exc:
            raise BackendError(f"cassette {self.path}: answer cannot be recorded: {exc}") from None
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise CassetteError(f"cassette {self.path}: cannot create its folder: {exc.strerror}") from None
            try:
                files.append_line(self.path, line)
            except DataError as exc:
                raise CassetteError(f"cassette {exc}") from None
            self._entries[key] = response
            self._lines.pop(key, None)


class CassetteLLM:
    """An LLM that answers from a cassette and (in record/auto mode) from the wrapped backend."""

    def __init__(self, inner: LLM | str, cassette: Cassette, **load_opts: Any) -> None:
        self._inner = inner if not isinstance(inner, str) else None
        self.uri = inner if isinstance(inner, str) else inner.uri
        self.chat_template = chat_template_for(self.uri)   # known from the URI: a replay loads no model
        self._load_opts = load_opts
        self.cassette = cassette

    @property
    def inner(self) -> LLM:
        if self._inner is None:
            self._inner = load(self.uri, **self._load_opts)
        return self._inner

    def _call(self, request: dict, summary: str, run: Any) -> tuple[Any, str]:
        """(answer, key): from the cassette, or from the backend and then recorded."""
        request = {"uri": self.uri, **request}
        key = Cassette.key(request)
        if self.cassette.mode != "record" and key in self.cassette:
            return self.cassette.get(key), key
        if self.cassette.mode == "replay":
            raise BackendError(
                f"not in cassette {self.cassette.path}: {request['call']} for {self.uri}, prompt sha256 "
                f"{_digest(summary)[:12]} ({summary[:60]!r}...); re-record with mode 'auto' or 'record'"
            )
        response = run()
        self.cassette.put(key, request, response)
        return response, key

    def complete(self, prompt: str, *, stop: Sequence[str] = (), max_tokens: int = 256, temperature: float = 0.0,
                 frequency_penalty: float = 0.0, grammar: str | None = None, seed: int = 0) -> Completion:
        params = {
            "stop": list(stop),
            "max_tokens": int(max_tokens),
            "temperature": float(temperature),
            "frequency_penalty": float(frequency_penalty),
            "grammar": grammar,
            "seed": int(seed),
        }

        def run() -> dict:
            return asdict(self.inner.complete(prompt, **params))

        data, key = self._call({"call": "complete", "prompt": prompt, **params}, prompt, run)
        return _completion(data, self.cassette.where(key))

    def json(self, messages: list[dict], schema: dict, *, max_tokens: int = 512, temperature: float = 0.0,
             seed: int = 0) -> Any:
        params = {"max_tokens": int(max_tokens), "temperature": float(temperature), "seed": int(seed)}

        def run() -> Any:
            return self.inner.json(messages, schema, **params)

        request = {"call": "json", "messages": messages, "schema": schema, **params}
        summary = json.dumps(messages, ensure_ascii=False)
        return self._call(request, summary, run)[0]

    def score(self, prompt: str, continuations: Sequence[str]) -> Scores:
        """Log-probabilities of `continuations` after `prompt`, replayed or from a backend that can score."""
        continuations = [str(c) for c in continuations]

        def run() -> dict:
            inner = self.inner
            if not isinstance(inner, ScoringLLM):
                raise BackendError(f"{self.uri} cannot score continuations")
            answer = inner.score(prompt, continuations)
            return {**asdict(answer), "logprobs": list(answer.logprobs)}

        data, key = self._call({"call": "score", "prompt": prompt, "continuations": continuations}, prompt, run)
        return _scores(data, self.cassette.where(key), expected=len(continuations))

    def count_tokens(self, text: str) -> int:
        count, key = self._call({"call": "count_tokens", "text": text}, text, lambda: self.inner.count_tokens(text))
        _check_response("count_tokens", count, self.cassette.where(key))
        return int(count)


def wrap(llm: LLM | str, cassette_path: str | Path, mode: str = "replay", **load_opts: Any) -> LLM:
    """`llm` (an LLM, or a URI loaded lazily with `load_opts`) behind the cassette at `cassette_path`."""
    return CassetteLLM(llm, Cassette(cassette_path, mode), **load_opts)

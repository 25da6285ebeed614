"""Record/replay of LLM calls: deterministic, free re-runs of experiments.

A cassette is a JSON-lines file; each line holds one call: `{"key", "request", "response"}`. The key is the
sha256 of the backend URI, the call kind and every parameter (prompt or messages, stop, max_tokens,
temperature, frequency_penalty, grammar, schema, seed), so any change makes a new entry. Modes:

- `replay`: answer only from the cassette; a missing key is a BackendError naming the cassette and the prompt.
- `record`: always call the backend and append the answer (later lines win when the file is read again).
- `auto`: replay when the key is present, otherwise call the backend and record.

The wrapped backend may be given as a URI: it is then loaded only when a call actually needs it, so a full
replay needs neither weights nor a server.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from situated.errors import BackendError
from situated.llm import load
from situated.llm.base import LLM, Completion

MODES = ("replay", "record", "auto")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Cassette:
    """The entries of one cassette file, keyed by request digest; appends on record."""

    def __init__(self, path: str | Path, mode: str = "replay") -> None:
        if mode not in MODES:
            raise BackendError(f"cassette mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.path = Path(path)
        self.mode = mode
        self._entries: dict[str, Any] = {}
        self._lock = threading.Lock()
        if self.path.exists():
            self._read()
        elif mode == "replay":
            raise BackendError(f"cassette {self.path} does not exist; record it with mode 'record' or 'auto'")

    def _read(self) -> None:
        with self.path.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    self._entries[entry["key"]] = entry["response"]
                except (ValueError, KeyError, TypeError):
                    raise BackendError(f"cassette {self.path}, line {number}: not a cassette entry") from None

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
        line = json.dumps({"key": key, "request": request, "response": response}, ensure_ascii=False)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(line + "\n")
            self._entries[key] = response


class CassetteLLM:
    """An LLM that answers from a cassette and (in record/auto mode) from the wrapped backend."""

    def __init__(self, inner: LLM | str, cassette: Cassette, **load_opts: Any) -> None:
        self._inner = inner if not isinstance(inner, str) else None
        self.uri = inner if isinstance(inner, str) else inner.uri
        self._load_opts = load_opts
        self.cassette = cassette

    @property
    def inner(self) -> LLM:
        if self._inner is None:
            self._inner = load(self.uri, **self._load_opts)
        return self._inner

    def _call(self, request: dict, summary: str, run: Any) -> Any:
        request = {"uri": self.uri, **request}
        key = Cassette.key(request)
        if self.cassette.mode != "record" and key in self.cassette:
            return self.cassette.get(key)
        if self.cassette.mode == "replay":
            raise BackendError(
                f"not in cassette {self.cassette.path}: {request['call']} for {self.uri}, prompt sha256 "
                f"{_digest(summary)[:12]} ({summary[:60]!r}...); re-record with mode 'auto' or 'record'"
            )
        response = run()
        self.cassette.put(key, request, response)
        return response

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

        data = self._call({"call": "complete", "prompt": prompt, **params}, prompt, run)
        return Completion(**data)

    def json(
        self,
        messages: list[dict],
        schema: dict,
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> Any:
        params = {"max_tokens": int(max_tokens), "temperature": float(temperature), "seed": int(seed)}

        def run() -> Any:
            return self.inner.json(messages, schema, **params)

        request = {"call": "json", "messages": messages, "schema": schema, **params}
        summary = json.dumps(messages, ensure_ascii=False)
        return self._call(request, summary, run)

    def count_tokens(self, text: str) -> int:
        return int(
            self._call({"call": "count_tokens", "text": text}, text, lambda: self.inner.count_tokens(text))
        )


def wrap(llm: LLM | str, cassette_path: str | Path, mode: str = "replay", **load_opts: Any) -> LLM:
    """`llm` (an LLM, or a URI loaded lazily with `load_opts`) behind the cassette at `cassette_path`."""
    return CassetteLLM(llm, Cassette(cassette_path, mode), **load_opts)

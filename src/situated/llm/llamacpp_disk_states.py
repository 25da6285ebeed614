"""Saved KV states of conversation prompts on disk, so that a new process starts warm on a prompt it has seen.

A sandbox session's first prompt (system prompt, API, examples: about 1,500-2,000 tokens) costs most of the first
utterance on 2 CPU cores (about 65 tokens/s at that depth). The same scene and library give the same prompt in the
next process; its evaluated state is a file here, keyed by the exact tokens it holds, and a new process restores
the longest prefix it shares instead of evaluating it again. The side questions' prompts (130-850 tokens each,
the same in every process) are kept too: evaluated cold they cost a new process 3-12 s each (measured in a
development run: the first utterance's three side questions took 23 s of its 28).

Files are per model, context size and llama-cpp-python version (`DiskStates.for_model`): a state made by another
build or model is never read. Each state is two files, `<key>.tokens` (int32 tokens) and `<key>.kv` (llama.cpp's
state bytes), written to a temporary name and renamed, so a crash leaves no half-written state; at most `keep`
states and `max_bytes` bytes are kept, the least recently used removed first. A state that llama.cpp refuses is
deleted.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

MIN_DISK_TOKENS = 128
"""Only prefixes at least this long are worth a file (or reading one): about 2 s of evaluation on 2 cores."""
KEEP = 48
"""At most this many states are kept (the side questions' families, each scene's prompt, taught libraries')."""
MAX_BYTES = 1 << 30
"""And at most this many bytes of them (a scene's prompt is about 55 MB, a side question's 4-25 MB); the least
recently used go first."""


class DiskStates:
    """A directory of saved KV states for one model and context size."""

    def __init__(self, directory: Path, keep: int = KEEP, max_bytes: int = MAX_BYTES) -> None:
        self.directory = directory
        self.keep = keep
        self.max_bytes = max_bytes

    @classmethod
    def for_model(cls, root: Path, model: Path, n_ctx: int, version: str, keep: int = KEEP,
                  max_bytes: int = MAX_BYTES) -> DiskStates:
        """The states of `model` (by path, size and modification time) at `n_ctx` under `root`."""
        stat = model.stat()
        ident = f"{model.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{n_ctx}|{version}"
        return cls(root / hashlib.sha256(ident.encode()).hexdigest()[:16], keep, max_bytes)

    def best(self, tokens: Sequence[int]) -> tuple[int, Path] | None:
        """The stored state sharing the longest prefix with `tokens` (at least `MIN_DISK_TOKENS`): that length and
        its `.tokens` file; None when there is none."""
        found: tuple[int, Path] | None = None
        if not self.directory.is_dir():
            return None
        wanted = np.asarray(tokens, dtype=np.int32)
        for path in self.directory.glob("*.tokens"):
            try:
                stored = np.fromfile(path, dtype=np.int32)
            except OSError:
                continue
            n = min(len(stored), len(wanted))
            differ = np.flatnonzero(stored[:n] != wanted[:n])
            common = int(differ[0]) if differ.size else n
            if common >= MIN_DISK_TOKENS and (found is None or common > found[0]):
                found = (common, path)
        return found

    def read(self, tokens_path: Path) -> tuple[tuple[int, ...], bytes] | None:
        """A stored state's tokens and bytes (None when its files are gone); marks it recently used."""
        kv = tokens_path.with_suffix(".kv")
        try:
            tokens = tuple(int(t) for t in np.fromfile(tokens_path, dtype=np.int32))
            data = kv.read_bytes()
        except OSError:
            return None
        self.used(tokens_path)
        return tokens, data

    @staticmethod
    def used(tokens_path: Path) -> None:
        """Mark a state used now (a process that restores its copy from memory uses it too), so that the states
        every process needs outlive those of one session's library; a state already gone is no error."""
        with contextlib.suppress(OSError):
            _touch(tokens_path)

    def write(self, tokens: Sequence[int], data: bytes) -> Path | None:
        """Store a state (a no-op below `MIN_DISK_TOKENS` tokens or when the directory cannot be written); evict the
        least recently used past `keep`."""
        if len(tokens) < MIN_DISK_TOKENS:
            return None
        key = hashlib.sha256(np.asarray(tokens, dtype=np.int32).tobytes()).hexdigest()[:24]
        target = self.directory / f"{key}.tokens"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            for suffix, payload in ((".kv", data), (".tokens", np.asarray(tokens, dtype=np.int32).tobytes())):
                part = self.directory / f"{key}{suffix}.part"
                part.write_bytes(payload)
                part.replace(self.directory / f"{key}{suffix}")
            _touch(target)
        except OSError:
            return None
        self._evict()
        return target

    def forget(self, tokens_path: Path) -> None:
        """Delete a state (llama.cpp refused it)."""
        for path in (tokens_path, tokens_path.with_suffix(".kv")):
            path.unlink(missing_ok=True)

    def _evict(self) -> None:
        """Forget the least recently used states past `keep` files or `max_bytes` bytes (the newest always stays)."""
        stored = []
        for path in self.directory.glob("*.tokens"):
            try:
                info = path.stat()
                stored.append((info.st_mtime_ns, path, info.st_size + path.with_suffix(".kv").stat().st_size))
            except OSError:
                continue   # removed meanwhile (another process evicting)
        total = 0
        for n, (_, path, size) in enumerate(sorted(stored, reverse=True)):
            total += size
            if n and (n >= self.keep or total > self.max_bytes):
                self.forget(path)


def _touch(path: Path) -> None:
    """Mark a state used now, at nanosecond resolution (the file system's own clock may be coarser)."""
    now = time.time_ns()
    os.utime(path, ns=(now, now))

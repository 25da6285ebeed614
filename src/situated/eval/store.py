"""The one results store every evaluation writes and reads: a directory of episodes, resumable and safe.

    DIR/run.json         what was run: `{"format": "situated-run/1", "system": ..., "config": {...}}`
    DIR/episodes.jsonl   one Episode per line (JSON), appended as episodes finish
    DIR/.lock            held (flock) by the one process writing DIR

Guarantees:
- Idempotent by episode key (task id, run): a key is written at most once; resuming skips what is there.
- A rerun with another configuration (model, data, split, settings: every input that changes results) is
  refused with the fields that differ, so episodes of different set-ups never mix.
- Each append is one write of a whole line followed by fsync; a line is only ever appended after a newline.
  A cut-off last line (no newline: the process died mid-write) is dropped from the file, or completed with its
  newline when it is a whole record; any other malformed line is an error naming the line, and nothing is
  changed. So whatever moment a process is killed at, every finished episode stays and none is counted twice.
- One writer per directory: a second process gets a clear error instead of interleaving its lines.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import files
from ..errors import DataError
from .episode import Episode

FORMAT = "situated-run/1"
RUN_FILE = "run.json"
EPISODES_FILE = "episodes.jsonl"
LOCK_FILE = ".lock"
MAX_LINE_BYTES = 64 << 20
MAX_RUN_FILE_BYTES = 16 << 20


def _parse_line(raw: bytes, where: str) -> Episode:
    """One record line through `files.parse_json` (UTF-8, bounded nesting and numbers, no NaN), then typed."""
    try:
        data = files.parse_json(files.decode_text(raw, _RECORD), _RECORD)
    except DataError as err:
        detail = _LINE_ONE.sub(lambda m: f"column {m[1]}: " if m[1] else "", str(err).removeprefix(f"{_RECORD}: "))
        raise DataError(f"{where}: not a JSON episode record ({detail[:160]})") from None
    return Episode.from_dict(data, where)


_RECORD = "record"
_LINE_ONE = re.compile(r"^line 1(?:, column (\d+))?: ")


def _differences(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> list[str]:
    keys = sorted(set(ours) | set(theirs))
    return [f"{k}: {theirs.get(k)!r} there, {ours.get(k)!r} now" for k in keys if ours.get(k) != theirs.get(k)]


def _read_run_file(directory: Path) -> dict[str, Any] | None:
    path = directory / RUN_FILE
    if not os.path.lexists(path):
        return None
    data = files.read_json(path, what="run description", limit=MAX_RUN_FILE_BYTES)
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("config"), dict):
        raise DataError(f"{path}: not a {FORMAT} run description")
    return data


def read_episodes(directory: Path) -> tuple[dict[str, Any], list[Episode]]:
    """The run description and the finished episodes of a store, read only (no lock, no repair): for reports.
    A cut-off last line is ignored."""
    directory = Path(directory)
    run = _read_run_file(directory)
    if run is None:
        raise DataError(f"{directory}: no {RUN_FILE}; not a results directory")
    episodes, _ = _read_lines(directory / EPISODES_FILE)
    return run, episodes


def _read_lines(path: Path) -> tuple[list[Episode], bytes]:
    """The episodes of complete lines and the bytes of a cut-off last line (b"" when the file ends cleanly)."""
    if not os.path.lexists(path):
        return [], b""
    data = files.read_bytes(path, what="results file", limit=4 * MAX_LINE_BYTES)
    *complete, tail = data.split(b"\n")
    episodes: list[Episode] = []
    seen: dict[tuple[str, int], int] = {}
    for number, raw in enumerate(complete, start=1):
        if not raw.strip():
            continue
        episode = _parse_line(raw, f"{path}: line {number}")
        if episode.key in seen:
            raise DataError(f"{path}: line {number}: episode {episode.key[0]!r} run {episode.key[1]} is already on "
                            f"line {seen[episode.key]}; delete one of them")
        seen[episode.key] = number
        episodes.append(episode)
    return episodes, tail


class ResultsStore:
    """Episodes of one configuration in one directory (see the module docstring). Use as a context manager."""

    def __init__(self, directory: Path | None, config: Mapping[str, Any], *, system: str) -> None:
        """`directory=None` keeps the episodes in memory only (an evaluation without --out)."""
        self.directory = Path(directory) if directory is not None else None
        self.config = json.loads(json.dumps(dict(config), default=str))  # as it will read back
        self.system = system
        self._lock_fd: int | None = None
        self._episodes: dict[tuple[str, int], Episode] = {}

    # ------------------------------------------------------------------ opening and closing
    def __enter__(self) -> ResultsStore:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """Create or reopen the directory: take the lock, check the configuration, read (and repair the cut-off
        tail of) the episodes."""
        if self.directory is None:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise DataError(f"{self.directory}: cannot create the output directory ({err.strerror or err})") from None
        if not self.directory.is_dir():
            raise DataError(f"{self.directory}: not a directory")
        self._lock()
        try:
            self._check_config()
            self._load()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    def _lock(self) -> None:
        path = self.directory / LOCK_FILE
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:
            raise DataError(f"{path}: cannot create the lock file ({err.strerror or err})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise DataError(f"{self.directory} is being written by another evaluation; wait for it to finish "
                            "or use another --out") from None
        self._lock_fd = fd

    def _check_config(self) -> None:
        run = _read_run_file(self.directory)
        episodes = self.directory / EPISODES_FILE
        if run is None:
            if episodes.exists() and episodes.stat().st_size > 0:
                raise DataError(f"{episodes}: written without a {RUN_FILE} (an older situated?); "
                                "use another --out")
            files.write_text_atomic(self.directory / RUN_FILE,
                                    json.dumps({"format": FORMAT, "system": self.system, "config": self.config},
                                               indent=1, sort_keys=True) + "\n")
            return
        if run.get("system") != self.system:
            raise DataError(f"{self.directory}: holds {run.get('system')} episodes, not {self.system}; "
                            "use another --out")
        differences = _differences(self.config, run["config"])
        if differences:
            raise DataError(f"{self.directory}: holds episodes of another configuration ("
                            + "; ".join(differences[:4]) + "); use another --out")

    def _load(self) -> None:
        path = self.directory / EPISODES_FILE
        episodes, tail = _read_lines(path)
        if tail.strip():
            try:
                whole = _parse_line(tail, f"{path}: last line")
            except DataError:
                whole = None
            if whole is not None and whole.key not in {e.key for e in episodes}:
                _append(path, b"\n")  # the write was whole; only its newline is missing
                episodes.append(whole)
            else:
                _cut(path, len(tail))  # an interrupted write: cut it off
        elif tail:  # whitespace without a newline
            _cut(path, len(tail))
        self._episodes = {e.key: e for e in episodes}

    # ------------------------------------------------------------------ reading and writing
    def __contains__(self, key: object) -> bool:
        return key in self._episodes

    def __len__(self) -> int:
        return len(self._episodes)

    @property
    def episodes(self) -> list[Episode]:
        """Every episode in the store, in the order they were written."""
        return list(self._episodes.values())

    def select(self, keys: Iterable[tuple[str, int]]) -> list[Episode]:
        """The stored episodes with these keys, in the keys' order (missing ones left out)."""
        return [self._episodes[k] for k in keys if k in self._episodes]

    def add(self, episode: Episode) -> None:
        """Append one finished episode (one write of the whole line, then fsync)."""
        if episode.key in self._episodes:
            raise DataError(f"{self.directory}: episode {episode.task!r} run {episode.run} is already recorded")
        if self.directory is None:
            self._episodes[episode.key] = episode
            return
        if self._lock_fd is None:
            raise DataError(f"{self.directory}: the results store is not open")
        line = json.dumps(episode.to_dict(), ensure_ascii=False).encode("utf-8") + b"\n"
        _append(self.directory / EPISODES_FILE, line)
        self._episodes[episode.key] = episode


def _append(path: Path, data: bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as err:
        raise DataError(f"{path}: cannot write ({err.strerror or err})") from None
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except OSError as err:
        raise DataError(f"{path}: cannot write ({err.strerror or err})") from None
    finally:
        os.close(fd)


def _cut(path: Path, length: int) -> None:
    """Remove the last `length` bytes of `path` (a cut-off last line), then fsync."""
    try:
        with path.open("r+b") as handle:
            handle.truncate(os.fstat(handle.fileno()).st_size - length)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as err:
        raise DataError(f"{path}: cannot remove the cut-off last line ({err.strerror or err})") from None


def fingerprint(value: Any) -> str:
    """A short digest of JSON-able data (task lists, example plans): part of a configuration, so that a rerun
    over changed data is told apart from a resume."""
    import hashlib

    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

"""The results stores a report compares, read only: what each run was, its label, and how the runs differ.

A report takes results stores (directories with run.json and episodes.jsonl) of one system (any in
`eval.systems.registry`). `situated navigate --out DIR` writes its store into a subdirectory named after the
dataset, split and agent; a directory without run.json whose subdirectories are stores stands for those stores,
in name order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import DataError
from ..episode import Episode
from ..store import RUN_FILE, read_episodes
from ..systems.base import System
from ..systems.registry import system_named

# Settings that say what was run; every other config entry is shown only in the full listing.
HEADLINE = ("model", "planner", "ablation", "agent", "dataset", "split", "examples", "grammar", "repairs",
            "replan", "assert_check", "landmarks", "slip_probability", "seed")
# Config entries that are digests or paths: they differ between runs without being a setting worth a column.
NOT_SETTINGS = frozenset({"tasks", "instances", "example_plans", "data", "base_url", "initial_graph",
                          "landmarks_file", "examples_data"})


@dataclass(frozen=True)
class RunResults:
    """One results store as a report sees it."""

    path: Path
    label: str
    system: System
    config: Mapping[str, Any]
    episodes: tuple[Episode, ...] = field(default=())

    @property
    def tasks(self) -> int:
        return len({e.task for e in self.episodes})

    @property
    def runs(self) -> int:
        return len({e.run for e in self.episodes})

    def setting(self, name: str) -> str:
        """A config value as a short text ("–" when absent)."""
        value = self.config.get(name)
        return "–" if value is None else str(value)


def _stores(path: Path) -> list[Path]:
    if (path / RUN_FILE).is_file():
        return [path]
    if not path.is_dir():
        raise DataError(f"{path}: no such results directory")
    inner = sorted(p for p in path.iterdir() if p.is_dir() and (p / RUN_FILE).is_file())
    if not inner:
        raise DataError(f"{path}: no {RUN_FILE}; not a results directory (give the --out of an evaluation)")
    return inner


def _labels(paths: Sequence[Path]) -> list[str]:
    """Directory names, with their parents added until they are unique."""
    depth = 1
    while True:
        labels = ["/".join(p.resolve().parts[-depth:]) for p in paths]
        if len(set(labels)) == len(labels) or depth > 8:
            return labels
        depth += 1


def load_runs(directories: Sequence[Path]) -> list[RunResults]:
    """Read each store (never writing to it). DataError when a directory is not a results store, holds no
    episodes, is given twice, or when the stores hold episodes of different systems."""
    if not directories:
        raise DataError("no results directories given")
    paths = [store for directory in directories for store in _stores(Path(directory))]
    seen: set[Path] = set()
    for path in paths:
        if path.resolve() in seen:
            raise DataError(f"{path}: given twice")
        seen.add(path.resolve())
    read = []
    for path in paths:
        description, episodes = read_episodes(path)
        if not episodes:
            raise DataError(f"{path}: no finished episodes yet")
        read.append((path, str(description.get("system")), description["config"], tuple(episodes)))
    names = sorted({name for _, name, _, _ in read})
    if len(names) > 1:
        first = {s: next(path for path, name, _, _ in read if name == s) for s in names}
        raise DataError("cannot compare runs of different systems: "
                        + ", ".join(f"{first[s]} holds {s}" for s in names))
    system = system_named(names[0], read[0][0])
    return [RunResults(path, label, system, config, episodes)
            for (path, _, config, episodes), label in zip(read, _labels(paths), strict=True)]


def differing_settings(runs: Sequence[RunResults]) -> list[str]:
    """Config entries whose values differ between the runs (digests and paths left out), headline ones first."""
    names = {k for r in runs for k in r.config} - NOT_SETTINGS
    differ = [n for n in names if len({repr(r.config.get(n)) for r in runs}) > 1]
    return sorted(differ, key=lambda n: (HEADLINE.index(n) if n in HEADLINE else len(HEADLINE), n))


def variant_name(run: RunResults, settings: Sequence[str]) -> str:
    """A run named by the settings it differs in (e.g. "repairs=0"), or by its label when none differ."""
    if not settings:
        return run.label
    return ", ".join(f"{name}={run.setting(name)}" for name in settings)

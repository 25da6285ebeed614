"""`situated navigate train` as a library call: `train_adapter(request, ...)` checks the options, reads the
training-area routes, loads the base model and trains (`loop.Trainer`); the command only parses and prints."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SituatedError
from ..eval.settings import check_counts
from .base import load_base, require_train_extra
from .loop import Settings, Trainer, split_routes
from .traces import training_routes

SPLITS = ("dev", "test", "train")


@dataclass(frozen=True)
class TrainRequest:
    """What to train on and from: the dataset folder, its split files, the base model, the output folder."""

    data: Path | None
    split: str
    base: str
    out: Path
    threads: int | None = None


def split_names(text: str) -> list[str]:
    """`--split dev,test` as a list (order kept, duplicates dropped); one-line error for anything else."""
    splits = [s.strip() for s in text.split(",") if s.strip()]
    if not splits or any(s not in SPLITS for s in splits):
        raise SituatedError(f"--split must list dev, test or train (comma-separated), not {text!r}")
    return list(dict.fromkeys(splits))


def train_adapter(request: TrainRequest, settings: Settings, *, on_bytes: Callable[[int, int], None] | None = None,
                  report: Callable[[str, int, int, float | None], None] | None = None) -> dict[str, Any]:
    """Train (or resume) an adapter into `request.out`; its record. Every cheap check (options, routes, enough of
    them to hold some out, the train extra) runs before the base model is loaded."""
    if request.data is None:
        raise SituatedError("--data DIR is required (the map2seq_seen directory)")
    check_counts(("--threads", request.threads, 1))
    routes = training_routes(request.data, split_names(request.split))
    split_routes(routes, settings)
    require_train_extra()
    model = load_base(request.base, threads=request.threads, progress=on_bytes)
    return Trainer(model, routes, settings, request.out, report).run()

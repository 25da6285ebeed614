"""Rules every evaluation's settings share, whichever command gave them: counts with a least value, a choice
among names, the levers that enter a resume key only when on, and run labels that are safe directory names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, TypeVar

from ..errors import SituatedError

T = TypeVar("T")


def check_counts(*checks: tuple[str, int | None, int]) -> None:
    """`(option, value, least)` each: SituatedError `--runs must be >= 1, got 0` for a value below its least
    (None: the option was not given)."""
    for option, value, least in checks:
        if value is not None and value < least:
            raise SituatedError(f"{option} must be >= {least}, got {value}")


def check_choice(value: str, choices: tuple[str, ...], option: str) -> str:
    """`value` when it is one of `choices`; SituatedError naming `option` otherwise."""
    if value not in choices:
        raise SituatedError(f"{option} must be one of {', '.join(choices)}, not {value!r}")
    return value


def check_limit(limit: int | None, message: str = "--limit must be >= 1, got {limit}") -> None:
    if limit is not None and limit < 1:
        raise SituatedError(message.format(limit=limit))


def levers(**settings: object) -> dict[str, object]:
    """Settings of the levers beyond the papers that are on: a run without them keeps the configuration key of
    the runs before they existed, so their results stores still resume."""
    return {name: value for name, value in settings.items() if value is not None}


def model_label(model: str) -> str:
    """A model URI as part of a directory name: `llamacpp:qwen2.5-coder-1.5b` → `llamacpp_qwen2.5-coder-1.5b`."""
    return model.replace(":", "_").replace("/", "_")


def settings_from(kind: type[T], options: Mapping[str, Any]) -> T:
    """A settings dataclass from a command's options (its parameters of the same names; others are ignored)."""
    return kind(**{f.name: options[f.name] for f in fields(kind) if f.name in options})  # type: ignore[arg-type]

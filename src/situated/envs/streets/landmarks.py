"""Which names in a list of instruction landmarks are landmarks at all (VELMA drops generic items)."""

from __future__ import annotations

from collections.abc import Iterable

GENERIC_LANDMARKS = frozenset({"traffic lights", "double lights", "a building", "a large building"})
"""Generic items a landmark extractor lists that are no landmarks (dropped, as in VELMA)."""


def filter_landmarks(unfiltered: Iterable[str]) -> tuple[str, ...]:
    """Drop empty, duplicate and generic items (intersections, side streets, lights, "a building")."""
    kept: list[str] = []
    for item in unfiltered:
        name = item.strip()
        if not name or "intersection" in name or "side street" in name or name in GENERIC_LANDMARKS:
            continue
        if name not in kept:
            kept.append(name)
    return tuple(kept)

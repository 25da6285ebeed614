"""Choosing a landmark-visibility source by name, as the navigate command does."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ...errors import DataError
from .visibility import FileVisibility, NoVisibility, VisibilitySource

VISIBILITY_KINDS: tuple[str, ...] = ("none", "file", "clip")


def make_visibility(kind: str, *, file: Path | None = None, centers: Mapping[str, float] | None = None,
                    panoramas: Path | None = None, stats: Path | None = None, weights: Path | None = None,
                    model: str = "ViT-B-32") -> VisibilitySource:
    """The visibility source called `kind`: none (intersections only), file (a situated-visibility/1 file) or
    clip (CLIP over real panoramas: needs `panoramas`, `stats` and `weights`; `centers` are the panoramas' yaws)."""
    if kind not in VISIBILITY_KINDS:
        raise DataError(f"--landmarks must be one of {', '.join(VISIBILITY_KINDS)}, not {kind!r}")
    if kind == "none":
        return NoVisibility()
    if kind == "file":
        if file is None:
            raise DataError("--landmarks file needs --landmarks-file F (a situated-visibility/1 JSON file)")
        return FileVisibility.load(file)
    if panoramas is None or stats is None or weights is None:
        raise DataError("--landmarks clip needs --panoramas DIR, --clip-stats F and --clip-weights F")
    from .clip_visibility import ClipVisibility, LandmarkStats, OpenClipScorer

    return ClipVisibility(OpenClipScorer(model, weights), panoramas, LandmarkStats.load(stats), centers=centers)

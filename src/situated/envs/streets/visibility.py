"""Pluggable sources of landmark visibility: which instruction landmarks the agent sees, and where.

VELMA scores "picture of <landmark>" with CLIP against five 60° views of the panorama (at −90, −45, 0, +45 and
+90 degrees from the heading). Without panoramas a source answers from elsewhere:

- `NoVisibility` (default): nothing is ever visible — the paper's "no image" ablation (intersections only).
- `FileVisibility`: precomputed answers from a JSON file (format below).
- anything implementing `VisibilitySource` (e.g. a CLIP scorer over real panoramas, added later).

FileVisibility format (UTF-8 JSON)::

    {
      "format": "situated-visibility/1",
      "panoramas": {
        "<panoid>": {
          "<heading>": {"<landmark>": "<bucket>", ...},
          ...
        }
      }
    }

`<heading>` is the agent's integer heading in degrees as a string ("0" … "359"); `<bucket>` is one of
`left`, `slightly_left`, `ahead`, `slightly_right`, `right` (the five views, from −90° to +90°). A landmark
absent for that panorama and heading is not visible. Landmark names match the instance's landmarks exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from ... import files
from ...errors import DataError

#: Direction buckets, left to right, as used in file formats and observations.
BUCKETS: tuple[str, ...] = ("left", "slightly_left", "ahead", "slightly_right", "right")
FILE_FORMAT = "situated-visibility/1"


@runtime_checkable
class VisibilitySource(Protocol):
    """Answers which of `landmarks` are visible from a panorama when facing `heading`."""

    def visible(self, panoid: str, heading: int, landmarks: Sequence[str]) -> Mapping[str, tuple[str, ...]]:
        """Bucket → visible landmarks (in the order of `landmarks`); empty buckets may be absent."""
        ...


class NoVisibility:
    """Nothing is visible: only intersections are verbalized (the paper's no-image ablation)."""

    def visible(self, panoid: str, heading: int, landmarks: Sequence[str]) -> Mapping[str, tuple[str, ...]]:
        return {}


def read_format_json(file: Path, fmt: str, what: str) -> dict:
    """A JSON object whose `format` field is `fmt`, read through `situated.files` (a regular file, UTF-8,
    bounded JSON); DataError naming the file (and line, column or field) otherwise."""
    data = files.read_json(file, what=what)
    if not isinstance(data, dict) or data.get("format") != fmt:
        raise DataError(f"{file}: field format must be {fmt!r}")
    return data


class FileVisibility:
    """Visibility read from a JSON file in the `situated-visibility/1` format (see the module docstring)."""

    def __init__(self, table: Mapping[str, Mapping[int, Mapping[str, str]]]) -> None:
        self._table = table

    @classmethod
    def load(cls, path: str | Path) -> FileVisibility:
        """Read and validate a visibility file; DataError names the file and the offending key."""
        file = Path(path)
        data = read_format_json(file, FILE_FORMAT, "visibility file")
        panoramas = files.field(data, "panoramas", dict[str, dict[str, dict[str, str]]], str(file))
        table: dict[str, dict[int, dict[str, str]]] = {}
        for panoid, headings in panoramas.items():
            for heading_key, entries in headings.items():
                where = files.field_path(files.field_path("panoramas", panoid), heading_key)
                if not (heading_key.isascii() and heading_key.lstrip("-").isdigit() and len(heading_key) <= 9):
                    raise DataError(f"{file}: {where}: heading must be an integer")
                heading = int(heading_key)
                for landmark, bucket in entries.items():
                    if bucket not in BUCKETS:
                        raise DataError(
                            f"{file}: {files.field_path(where, landmark)}: bucket {bucket!r} is not one of "
                            f"{', '.join(BUCKETS)}"[:300]
                        )
                table.setdefault(panoid, {})[heading % 360] = dict(entries)
        return cls(table)

    def visible(self, panoid: str, heading: int, landmarks: Sequence[str]) -> Mapping[str, tuple[str, ...]]:
        entries = self._table.get(panoid, {}).get(heading % 360, {})
        found: dict[str, list[str]] = {}
        for landmark in landmarks:
            bucket = entries.get(landmark)
            if bucket is not None:
                found.setdefault(bucket, []).append(landmark)
        return {bucket: tuple(names) for bucket, names in found.items()}


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

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

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
    """A JSON object whose `format` field is `fmt`; DataError naming the file (and line) otherwise."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as err:
        raise DataError(f"cannot read {what} {file}: {err.strerror or err}") from None
    except json.JSONDecodeError as err:
        raise DataError(f"{file}:{err.lineno}: not valid JSON ({err.msg})") from None
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
        panoramas = data.get("panoramas")
        if not isinstance(panoramas, dict):
            raise DataError(f"{file}: field panoramas must be an object")
        table: dict[str, dict[int, dict[str, str]]] = {}
        for panoid, headings in panoramas.items():
            if not isinstance(headings, dict):
                raise DataError(f"{file}: panoramas.{panoid} must be an object of headings")
            for heading_key, entries in headings.items():
                where = f"panoramas.{panoid}.{heading_key}"
                try:
                    heading = int(heading_key)
                except ValueError:
                    raise DataError(f"{file}: {where}: heading must be an integer") from None
                if not isinstance(entries, dict):
                    raise DataError(f"{file}: {where} must map landmarks to buckets")
                for landmark, bucket in entries.items():
                    if bucket not in BUCKETS:
                        raise DataError(
                            f"{file}: {where}.{landmark}: bucket {bucket!r} is not one of "
                            f"{', '.join(BUCKETS)}"
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


"""A report as plain data, before it becomes HTML or Markdown: sections of paragraphs, tables and figures.

Building the content (`build`) and writing it out (`html`, `markdown`) stay apart, so both
formats show the same numbers and a test can read the numbers without parsing HTML.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Text:
    """A paragraph of plain text (rendered escaped); `muted` for notes and caveats."""

    text: str
    muted: bool = False


@dataclass(frozen=True)
class Table:
    """A table of texts; `numeric` columns are right-aligned."""

    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: frozenset[int] = frozenset()
    note: str = ""


@dataclass(frozen=True)
class Figure:
    """An image (SVG or PNG bytes) with a caption; `name` is a file stem for formats that link figures."""

    name: str
    caption: str
    data: bytes
    mime: str  # "image/svg+xml" or "image/png"
    alt: str = ""

    @property
    def suffix(self) -> str:
        return ".svg" if self.mime == "image/svg+xml" else ".png"


@dataclass(frozen=True)
class Gallery:
    """Figures shown side by side (route maps)."""

    figures: tuple[Figure, ...]
    columns: int = 2


@dataclass(frozen=True)
class Details:
    """Blocks a reader opens on demand (full configurations)."""

    summary: str
    blocks: tuple[Block, ...]


Block = Text | Table | Figure | Gallery | Details


@dataclass(frozen=True)
class Section:
    title: str
    anchor: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Document:
    """The whole report; `summary` is the JSON-able digest `situated report --json` prints."""

    title: str
    subtitle: str
    sections: tuple[Section, ...]
    summary: Mapping[str, Any] = field(default_factory=dict)

    def figures(self) -> list[Figure]:
        """Every figure, in document order."""
        found: list[Figure] = []

        def visit(blocks: tuple[Block, ...]) -> None:
            for block in blocks:
                if isinstance(block, Figure):
                    found.append(block)
                elif isinstance(block, Gallery):
                    found.extend(block.figures)
                elif isinstance(block, Details):
                    visit(block.blocks)

        for section in self.sections:
            visit(section.blocks)
        return found

    def tables(self) -> list[Table]:
        """Every table, in document order."""
        found: list[Table] = []

        def visit(blocks: tuple[Block, ...]) -> None:
            for block in blocks:
                if isinstance(block, Table):
                    found.append(block)
                elif isinstance(block, Details):
                    visit(block.blocks)

        for section in self.sections:
            visit(section.blocks)
        return found

    def table(self, caption_start: str) -> Table:
        """The first table whose caption starts with `caption_start` (KeyError when none does)."""
        for table in self.tables():
            if table.caption.startswith(caption_start):
                return table
        raise KeyError(caption_start)

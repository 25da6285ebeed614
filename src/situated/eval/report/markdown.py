"""A report `Document` as Markdown: headings, paragraphs, pipe tables; figures are files in a folder beside the
Markdown file (`<name>_figures/`), linked relatively; folded parts use <details> (GitHub renders them)."""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from .document import Block, Details, Document, Figure, Gallery, Table, Text


def _text(text: str) -> str:
    """Text with what Markdown would read as HTML escaped (store texts such as "grab <obj>")."""
    return escape(" ".join(text.split()), quote=False)


def _cell(text: str) -> str:
    return _text(text).replace("\\", "\\\\").replace("|", "\\|") or " "


def _table(table: Table) -> str:
    align = ["---:" if i in table.numeric else "---" for i in range(len(table.header))]
    lines = [f"**{_cell(table.caption)}**", "", "| " + " | ".join(_cell(h) for h in table.header) + " |",
             "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows]
    if table.note:
        lines += ["", f"_{_cell(table.note)}_"]
    return "\n".join(lines)


def _figure(figure: Figure, folder: str) -> str:
    link = quote(f"{folder}/{figure.name}{figure.suffix}")
    return f"![{_cell(figure.alt or figure.caption)}]({link})\n\n_{_cell(figure.caption)}_"


def _block(block: Block, folder: str) -> str:
    if isinstance(block, Text):
        return f"> {_text(block.text)}" if block.muted else _text(block.text)
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Figure):
        return _figure(block, folder)
    if isinstance(block, Gallery):
        return "\n\n".join(_figure(f, folder) for f in block.figures)
    if isinstance(block, Details):
        inner = "\n\n".join(_block(b, folder) for b in block.blocks)
        return f"<details><summary>{_cell(block.summary)}</summary>\n\n{inner}\n\n</details>"
    raise TypeError(f"unknown block {type(block).__name__}")


def render_markdown(document: Document, folder: str) -> tuple[str, dict[str, bytes]]:
    """The Markdown text and the figure files it links to (name relative to `folder` → bytes)."""
    parts = [f"# {_text(document.title)}", _text(document.subtitle),
             "Contents: " + " · ".join(f"[{s.title}](#{s.anchor})" for s in document.sections)]
    for section in document.sections:
        parts.append(f'<a id="{section.anchor}"></a>\n\n## {_text(section.title)}')
        parts += [_block(b, folder) for b in section.blocks]
    files = {f"{f.name}{f.suffix}": f.data for f in document.figures()}
    return "\n\n".join(parts) + "\n", files

"""A report `Document` as one self-contained HTML page: a <style> block, tables, and figures embedded as data
URIs. Nothing is fetched when it opens — no CDN, script, web font or external stylesheet — and every text from
the stores is escaped."""

from __future__ import annotations

import base64
from html import escape

from .document import Block, Details, Document, Figure, Gallery, Section, Table, Text

STYLE = """
:root { color-scheme: light; --ink: #1d2433; --muted: #5b6475; --line: #d9dee7; --band: #f4f6fa; --accent: #1f5fbf; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--ink); background: #fff; }
header { background: var(--band); border-bottom: 1px solid var(--line); padding: 1.4rem 2rem 0.8rem; }
header h1 { margin: 0 0 0.2rem; font-size: 1.6rem; }
header .sub { margin: 0 0 0.6rem; color: var(--muted); }
nav a { color: var(--accent); text-decoration: none; margin-right: 1.1rem; font-size: 0.92rem; white-space: nowrap; }
nav a:hover { text-decoration: underline; }
main { max-width: 1280px; padding: 0.5rem 2rem 3rem; }
section { margin-top: 1.6rem; }
h2 { font-size: 1.25rem; border-bottom: 2px solid var(--line); padding-bottom: 0.2rem; }
p { max-width: 70rem; }
p.muted { color: var(--muted); font-size: 0.9rem; }
.table-wrap { overflow-x: auto; margin: 0.8rem 0 1.2rem; }
table { border-collapse: collapse; font-size: 0.88rem; }
caption { text-align: left; font-weight: 600; padding: 0 0 0.35rem; }
th, td { border-bottom: 1px solid var(--line); padding: 0.3rem 0.7rem; text-align: left; vertical-align: top; }
th { background: var(--band); font-weight: 600; }
tbody tr:nth-child(even) td { background: #fafbfd; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }
td.note { color: var(--muted); font-size: 0.85rem; }
figure { margin: 1rem 0 1.4rem; }
figure img { max-width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: 0.88rem; margin-top: 0.3rem; max-width: 60rem; }
.gallery { display: grid; gap: 1rem 1.4rem; }
.gallery figure { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 0.6rem; }
details { margin: 0.6rem 0; }
summary { cursor: pointer; color: var(--accent); }
footer { color: var(--muted); font-size: 0.8rem; padding: 1rem 2rem 2rem; }
"""


def data_uri(figure: Figure) -> str:
    """The figure as a data: URI."""
    return f"data:{figure.mime};base64,{base64.b64encode(figure.data).decode('ascii')}"


def _table(table: Table) -> str:
    def cell(tag: str, index: int, text: str) -> str:
        kind = ' class="num"' if index in table.numeric else ""
        return f"<{tag}{kind}>{escape(text)}</{tag}>"

    head = "".join(cell("th", i, h) for i, h in enumerate(table.header))
    body = "\n".join("<tr>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>" for row in table.rows)
    if not table.rows:
        body = f'<tr><td class="note" colspan="{len(table.header)}">none</td></tr>'
    note = f'<p class="muted">{escape(table.note)}</p>' if table.note else ""
    return (f'<div class="table-wrap"><table><caption>{escape(table.caption)}</caption>'
            f"<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table>{note}</div>")


def _figure(figure: Figure) -> str:
    return (f'<figure id="fig-{escape(figure.name)}"><img src="{data_uri(figure)}" alt="{escape(figure.alt)}">'
            f"<figcaption>{escape(figure.caption)}</figcaption></figure>")


def _block(block: Block) -> str:
    if isinstance(block, Text):
        return f'<p class="muted">{escape(block.text)}</p>' if block.muted else f"<p>{escape(block.text)}</p>"
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Figure):
        return _figure(block)
    if isinstance(block, Gallery):
        inner = "\n".join(_figure(f) for f in block.figures)
        return (f'<div class="gallery" style="grid-template-columns: repeat({block.columns}, minmax(0, 1fr))">'
                f"\n{inner}\n</div>")
    if isinstance(block, Details):
        inner = "\n".join(_block(b) for b in block.blocks)
        return f"<details><summary>{escape(block.summary)}</summary>\n{inner}\n</details>"
    raise TypeError(f"unknown block {type(block).__name__}")


def _section(section: Section) -> str:
    inner = "\n".join(_block(b) for b in section.blocks)
    return f'<section id="{escape(section.anchor)}">\n<h2>{escape(section.title)}</h2>\n{inner}\n</section>'


def render_html(document: Document) -> str:
    """The whole page."""
    toc = " ".join(f'<a href="#{escape(s.anchor)}">{escape(s.title)}</a>' for s in document.sections)
    body = "\n".join(_section(s) for s in document.sections)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{escape(document.title)} — {escape(document.subtitle)}</title>\n<style>{STYLE}</style>\n</head>\n"
        f"<body>\n<header><h1>{escape(document.title)}</h1><p class=\"sub\">{escape(document.subtitle)}</p>"
        f"<nav>{toc}</nav></header>\n<main>\n{body}\n</main>\n"
        "<footer>Written by situated report from results stores; self-contained, it loads nothing.</footer>\n"
        "</body>\n</html>\n"
    )

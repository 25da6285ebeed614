"""Figures of a report, drawn with matplotlib (Agg) into memory: bar charts and success by route length as
SVG (text drawn as paths, so no font is needed to view them), route maps as PNG (`route_drawing.draw_route`).

Every figure gives each run the same colour, and the SVG output is deterministic (no date, fixed id salt).
"""

from __future__ import annotations

import io
import tempfile
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ...envs.streets.graph import StreetGraph
from ...errors import SituatedError
from .document import Figure
from .route_drawing import draw_route

COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")


def colour(index: int) -> str:
    return COLOURS[index % len(COLOURS)]


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise SituatedError("figures need matplotlib: pip install 'situated[plot]'") from None
    matplotlib.use("Agg")
    return matplotlib


@contextmanager
def _pyplot() -> Iterator[Any]:
    matplotlib = _matplotlib()
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"svg.hashsalt": "situated-report", "svg.fonttype": "path", "font.size": 9,
                                "axes.spines.top": False, "axes.spines.right": False}):
        yield plt


def _svg(plt: Any, figure: Any) -> bytes:
    buffer = io.BytesIO()
    try:
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    finally:
        plt.close(figure)
    return buffer.getvalue()


def _wrap(text: str, width: int = 34) -> str:
    return "\n".join(textwrap.wrap(text, width)[:2]) or text


def task_bars(name: str, caption: str, tasks: Sequence[str],
              panels: Mapping[str, Mapping[str, Sequence[float]]]) -> Figure:
    """Horizontal grouped bars, one panel per metric (e.g. SR, GCR): a group per task, a bar per run (values in
    [0, 1], printed at the end of each bar)."""
    with _pyplot() as plt:
        runs = max((len(series) for series in panels.values()), default=1)
        height = 0.8 / max(1, runs)
        size = (3.2 + 3.0 * len(panels), max(2.0, 0.6 + len(tasks) * (0.18 + 0.2 * runs)))
        figure, axes_row = plt.subplots(1, len(panels), figsize=size, sharey=True, squeeze=False)
        for axes, (title, series) in zip(axes_row[0], panels.items(), strict=True):
            for index, (label, values) in enumerate(series.items()):
                ys = [t + (index - (runs - 1) / 2) * height for t in range(len(tasks))]
                axes.barh(ys, values, height=height * 0.92, color=colour(index), label=label)
                for y, value in zip(ys, values, strict=True):
                    axes.annotate(f"{value:.2f}", (value, y), xytext=(3, 0), textcoords="offset points",
                                  va="center", fontsize=7, color="#333333")
            axes.set_xlim(0, 1.12)
            axes.set_title(title, fontsize=10)
            axes.grid(axis="x", color="#dddddd", linewidth=0.6)
            axes.set_axisbelow(True)
        first = axes_row[0][0]
        first.set_yticks(range(len(tasks)), [_wrap(t) for t in tasks])
        first.invert_yaxis()
        if runs > 1:
            figure.legend(*first.get_legend_handles_labels(), loc="upper center", ncols=min(runs, 4), fontsize=8,
                          frameon=False, bbox_to_anchor=(0.5, 0.0))
        return Figure(name, caption, _svg(plt, figure), "image/svg+xml", caption)


def metric_bars(name: str, caption: str, metrics: Sequence[str], series: Mapping[str, Sequence[float]],
                intervals: Mapping[str, Sequence[tuple[float, float]]], ylabel: str, top: float | None) -> Figure:
    """Vertical grouped bars: one group per metric, one bar per run variant, with confidence-interval whiskers."""
    with _pyplot() as plt:
        per_group = max(1, len(series))
        width = 0.8 / per_group
        figure, axes = plt.subplots(figsize=(max(4.5, 1.2 + len(metrics) * (0.5 + 0.45 * per_group)), 3.4))
        for index, (label, values) in enumerate(series.items()):
            xs = [m + (index - (per_group - 1) / 2) * width for m in range(len(metrics))]
            bounds = intervals[label]
            errors = [[max(0.0, v - lo) for v, (lo, _) in zip(values, bounds, strict=True)],
                      [max(0.0, hi - v) for v, (_, hi) in zip(values, bounds, strict=True)]]
            axes.bar(xs, values, width=width * 0.92, color=colour(index), label=_wrap(label, 40),
                     yerr=errors, capsize=3, error_kw={"elinewidth": 0.9, "ecolor": "#333333"})
        axes.set_xticks(range(len(metrics)), metrics)
        if top is not None:
            axes.set_ylim(0, top)
        axes.set_ylabel(ylabel)
        axes.grid(axis="y", color="#dddddd", linewidth=0.6)
        axes.set_axisbelow(True)
        axes.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        return Figure(name, caption, _svg(plt, figure), "image/svg+xml", caption)


def rate_by_bin(name: str, caption: str, bins: Sequence[str], series: Mapping[str, Sequence[float | None]],
                counts: Mapping[str, Sequence[int]], xlabel: str, ylabel: str) -> Figure:
    """One line per run: a rate (percent) per bin; bins without episodes are gaps; n under each point."""
    with _pyplot() as plt:
        figure, axes = plt.subplots(figsize=(7.0, 3.4))
        for index, (label, values) in enumerate(series.items()):
            points = [(i, v) for i, v in enumerate(values) if v is not None]
            axes.plot([p[0] for p in points], [p[1] for p in points], "-o", color=colour(index), label=label,
                      markersize=5, linewidth=1.6)
            for i, v in points:
                axes.annotate(f"n={counts[label][i]}", (i, v), textcoords="offset points", xytext=(0, -12),
                              ha="center", fontsize=6.5, color=colour(index))
        axes.set_xticks(range(len(bins)), bins)
        axes.set_ylim(-8, 105)
        axes.set_xlabel(xlabel)
        axes.set_ylabel(ylabel)
        axes.grid(axis="y", color="#dddddd", linewidth=0.6)
        axes.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        return Figure(name, caption, _svg(plt, figure), "image/svg+xml", caption)


def route_map(name: str, caption: str, graph: StreetGraph, gold: Sequence[str], path: Sequence[str],
              title: str) -> Figure:
    """The gold route and an agent's path over the street graph, as `route_drawing.draw_route` draws it (PNG)."""
    _matplotlib()
    with tempfile.TemporaryDirectory(prefix="situated-report-") as folder:
        written = draw_route(graph, gold, path, title, Path(folder) / "route.png")
        return Figure(name, caption, written.read_bytes(), "image/png", title)

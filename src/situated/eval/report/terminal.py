"""Reports of episodes: terminal tables, the JSON summaries commands end with, and figures.

Household (SR / GCR / Exec, per task and over runs) and navigation (TC / SPD / KPA) episodes are summarized
here for every command, so a notebook gets the same numbers from the same calls.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.table import Table

from ..envs.streets.graph import StreetGraph
from ..errors import DataError
from .episode import Episode
from .household import HOUSEHOLD_METRICS
from .summary import Stat, by_task, stat, summarize


def _stat_text(values: Sequence[float]) -> str:
    """Mean ± std over runs; one run's value alone (its std says nothing and costs the task column its width)."""
    return f"{values[0]:.2f}" if len(values) == 1 else str(stat(values))


def household_table(episodes: Sequence[Episode], title: str) -> Table:
    """Per task: SR, GCR, Exec (mean ± std over runs), mean attempted steps, unknown names, dropped calls and
    abandoned steps (rewrites that made the plan executable by giving up a task step)."""
    table = Table(title=title)
    for column in ("#", "task", "SR", "GCR", "Exec", "steps", "unknown", "dropped", "abandoned"):
        table.add_column(column)
    for _, rows in by_task(episodes):
        table.add_row(str(rows[0].details.get("task_index", "")), rows[0].instruction,
                      _stat_text([r.metrics["success"] for r in rows]), _stat_text([r.metrics["gcr"] for r in rows]),
                      _stat_text([r.metrics["exec"] for r in rows]),
                      str(round(sum(r.details.get("attempted", 0) for r in rows) / len(rows), 1)),
                      str(sum(r.details.get("unknown", 0) for r in rows)),
                      str(sum(r.details.get("dropped", 0) for r in rows)),
                      str(sum(r.details.get("abandoned", 0) for r in rows)))
    return table


def _total(episodes: Sequence[Episode], field: str) -> int:
    return sum(int(e.details.get(field, 0)) for e in episodes)


def household_summary(episodes: Sequence[Episode]) -> dict[str, Any]:
    """SR / GCR / Exec (mean and std over runs), precision, counts and cost: the last line of `eval`."""
    s = summarize(episodes, HOUSEHOLD_METRICS)

    def r(value: float) -> float:
        return round(value, 4)

    return {"sr": r(s["success"].mean), "sr_std": r(s["success"].std), "gcr": r(s["gcr"].mean),
            "exec": r(s["exec"].mean), "tasks": s.tasks, "runs": s.runs, "gcr_std": r(s["gcr"].std),
            "exec_std": r(s["exec"].std), "precision": r(s["precision"].mean),
            "unknown": _total(episodes, "unknown"), "dropped": _total(episodes, "dropped"),
            "replans": _total(episodes, "replans"), "repairs": _total(episodes, "repairs"),
            "abandoned": _total(episodes, "abandoned"),
            "tokens": sum(e.cost.tokens for e in episodes)}


def household_line(episodes: Sequence[Episode]) -> str:
    """The one-line text summary under the household table."""
    s = summarize(episodes, HOUSEHOLD_METRICS)
    return (f"SR {s['success']}  GCR {s['gcr']}  Exec {s['exec']}  "
            f"unknown actions/objects {_total(episodes, 'unknown')}  dropped calls {_total(episodes, 'dropped')}  "
            f"abandoned steps {_total(episodes, 'abandoned')}")


def replay_table(episodes: Sequence[Episode], title: str) -> Table:
    """One row per replayed task: steps, Exec, GCR, success."""
    table = Table(title=title)
    for column in ("#", "task", "steps", "Exec", "GCR", "success"):
        table.add_column(column)
    for i, e in enumerate(episodes):
        table.add_row(str(i), e.instruction, str(e.details.get("attempted", "")), f"{e.metrics['exec']:.2f}",
                      f"{e.metrics['gcr']:.3f}", "[green]yes[/green]" if e.success else "[red]no[/red]")
    return table


def means(episodes: Sequence[Episode]) -> dict[str, Stat]:
    """Household metrics of one run's episodes (mean; std over the one run is 0)."""
    return dict(summarize(episodes, HOUSEHOLD_METRICS).stats)


def navigation_table(summary: dict[str, float | int], title: str) -> Table:
    table = Table(title=title)
    for column in ("TC %", "SPD", "KPA %", "KPA corrected %"):
        table.add_column(column, justify="right")
    table.add_row(f"{summary['tc']:.1f}", f"{summary['spd']:.1f}", f"{summary['kpa']:.1f}",
                  f"{summary['kpa_corrected']:.1f}")
    return table


def draw_route(graph: StreetGraph, gold: Sequence[str], path: Sequence[str], title: str, out: Path) -> Path:
    """Draw the gold route and an agent's path over the street graph; returns the file written (a `.png` is
    added when `out` has no image suffix)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backend_bases import FigureCanvasBase
    from matplotlib.collections import LineCollection

    if not out.suffix:
        out = out.with_name(out.name + ".png")
    if out.suffix.lower().lstrip(".") not in FigureCanvasBase.get_supported_filetypes():
        raise DataError(f"{out}: unsupported image format {out.suffix!r} (use .png, .svg or .pdf)")
    shown = [graph.nodes[p] for p in [*gold, *path]]
    lat_lo, lat_hi = min(n.lat for n in shown), max(n.lat for n in shown)
    lng_lo, lng_hi = min(n.lng for n in shown), max(n.lng for n in shown)
    margin = max(lat_hi - lat_lo, lng_hi - lng_lo, 0.001) * 0.15
    lat_lo, lat_hi, lng_lo, lng_hi = lat_lo - margin, lat_hi + margin, lng_lo - margin, lng_hi + margin

    def inside(panoid: str) -> bool:
        node = graph.nodes[panoid]
        return lat_lo <= node.lat <= lat_hi and lng_lo <= node.lng <= lng_hi

    segments = []
    for panoid, node in graph.nodes.items():
        if not inside(panoid):
            continue
        for neighbour in graph.out_edges(panoid).values():
            other = graph.nodes[neighbour]
            segments.append([(node.lng, node.lat), (other.lng, other.lat)])

    figure, axes = plt.subplots(figsize=(8, 8))
    axes.add_collection(LineCollection(segments, colors="#c8c8c8", linewidths=0.8, zorder=1))
    for route, colour, width, style, label in (
        (gold, "#2a9d3a", 4.0, "-", "gold route"),
        (path, "#d62828", 2.0, "--", "agent path"),
    ):
        xs = [graph.nodes[p].lng for p in route]
        ys = [graph.nodes[p].lat for p in route]
        axes.plot(xs, ys, style, color=colour, linewidth=width, label=label, zorder=2)
    start, target, stop = graph.nodes[gold[0]], graph.nodes[gold[-1]], graph.nodes[path[-1]]
    axes.scatter([start.lng], [start.lat], s=80, c="#1d3557", marker="o", label="start", zorder=3)
    axes.scatter([target.lng], [target.lat], s=180, c="#2a9d3a", marker="*", label="target", zorder=3)
    axes.scatter([stop.lng], [stop.lat], s=80, c="#d62828", marker="X", label="agent stop", zorder=3)
    axes.set_xlim(lng_lo, lng_hi)
    axes.set_ylim(lat_lo, lat_hi)
    axes.set_aspect(1 / max(0.1, math.cos(math.radians(start.lat))))
    axes.ticklabel_format(useOffset=False, style="plain")
    axes.set_xlabel("longitude")
    axes.set_ylabel("latitude")
    axes.set_title(title)
    axes.legend(loc="best")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(out, dpi=120, bbox_inches="tight")
    except OSError as err:
        raise DataError(f"{out}: cannot write the figure ({err.strerror or err})") from None
    finally:
        plt.close(figure)
    return out

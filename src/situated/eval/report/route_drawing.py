"""One navigation episode drawn over the street graph (`situated navigate show`): the gold route and the agent's
path, as an image file."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from ...envs.streets.graph import StreetGraph
from ...errors import DataError


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

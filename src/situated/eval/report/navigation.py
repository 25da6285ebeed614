"""Navigation sections of a report: success by route length, route maps, where agents stopped, episodes.

Route maps need the street graph: it is loaded from the dataset directory a run's run.json names (`data`,
`dataset`); when that is missing or unreadable the maps of that run are left out with a note. Which episodes get
a map is decided by the seed: tasks every run has, half of them (where there are such) tasks some run completed.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Sequence
from pathlib import Path

from ...datasets.map2seq import graph_dir
from ...envs.streets.graph import StreetGraph, load_graph
from ...errors import DataError
from ..episode import Episode
from .document import Block, Details, Figure, Gallery, Section, Table, Text
from .failures import STOP_KINDS, route_followed, route_length, stop_kind
from .figures import rate_by_bin, route_map
from .runs import RunResults
from .sections import Options

MAX_EPISODE_ROWS = 1000


def _tc(episodes: Sequence[Episode]) -> float:
    return 100 * sum(e.metrics.get("tc", 0.0) for e in episodes) / len(episodes)


def length_bins(lengths: Sequence[int], count: int = 5) -> list[int]:
    """Lower bounds (after the first bin) splitting `lengths` into up to `count` bins of similar size."""
    ordered = sorted(lengths)
    bounds = sorted({ordered[len(ordered) * i // count] for i in range(1, count)} - {ordered[0]})
    return bounds


def by_length(runs: Sequence[RunResults]) -> Section:
    """Task completion against gold route length: a figure (one line per run) and the table behind it."""
    lengths = [route_length(e) for run in runs for e in run.episodes]
    bounds = length_bins(lengths)
    members: list[list[list[Episode]]] = []
    for run in runs:
        bins: list[list[Episode]] = [[] for _ in range(len(bounds) + 1)]
        for episode in run.episodes:
            bins[bisect.bisect_right(bounds, route_length(episode))].append(episode)
        members.append(bins)
    used = [i for i in range(len(bounds) + 1) if any(m[i] for m in members)]
    labels = []
    for i in used:
        values = [route_length(e) for m in members for e in m[i]]
        low, high = min(values), max(values)
        labels.append(f"{low}" if low == high else f"{low}–{high}")
    series = {run.label: [_tc(m[i]) if m[i] else None for i in used] for run, m in zip(runs, members, strict=True)}
    counts = {run.label: [len(m[i]) for i in used] for run, m in zip(runs, members, strict=True)}
    figure = rate_by_bin("tc_by_route_length", "Task completion by gold route length (moves), one line per run",
                         labels, series, counts, "gold route length (moves)", "TC %")
    header = ("route length (moves)", *(f"{r.label}: TC % (n) · SPD" for r in runs))
    rows = []
    for column, i in enumerate(used):
        cells = []
        for run, m in zip(runs, members, strict=True):
            if not m[i]:
                cells.append("–")
                continue
            spd = sum(e.metrics.get("spd", 0.0) for e in m[i]) / len(m[i])
            cells.append(f"{series[run.label][column]:.1f} ({len(m[i])}) · {spd:.1f}")
        rows.append((labels[column], *cells))
    return Section("Success by route length", "length", (
        figure, Table("TC and mean SPD by gold route length", header, tuple(rows), frozenset(range(1, len(header))))))


def stops(runs: Sequence[RunResults]) -> Section:
    """Where agents stopped relative to the route, and how far they followed it before leaving it."""
    header = ("where the agent stopped", *(r.label for r in runs))
    rows = []
    for kind, words in STOP_KINDS:
        cells = []
        for run in runs:
            n = sum(stop_kind(e) == kind for e in run.episodes)
            cells.append(f"{n} ({100 * n / len(run.episodes):.0f}%)")
        rows.append((words, *cells))
    followed = tuple(f"{100 * sum(route_followed(e) for e in r.episodes) / len(r.episodes):.0f}%" for r in runs)
    moves = tuple(f"{sum(len(e.details.get('actions') or []) for e in r.episodes) / len(r.episodes):.1f}"
                  for r in runs)
    gold = tuple(f"{sum(route_length(e) for e in r.episodes) / len(r.episodes):.1f}" for r in runs)
    rows += [("route followed before first leaving it (mean)", *followed), ("actions taken (mean)", *moves),
             ("gold route length in moves (mean)", *gold)]
    return Section("Where agents stopped", "stops", (
        Text("Past the target: the agent's path went through the target but it stopped elsewhere (too late). "
             "Before the target: it stopped on the route short of it (too early). Never stopped: it ran out of "
             "steps."),
        Table("Stops relative to the gold route", header, tuple(rows), frozenset(range(1, len(runs) + 1)))))


def _graph(run: RunResults, cache: dict[str, StreetGraph | str]) -> StreetGraph | str:
    """The run's street graph, or the reason it cannot be loaded."""
    data, dataset = run.config.get("data"), run.config.get("dataset")
    if not data or not dataset:
        return "its run.json names no dataset directory"
    key = f"{data}|{dataset}"
    if key not in cache:
        try:
            cache[key] = load_graph(graph_dir(Path(str(data)), str(dataset)))
        except (DataError, OSError) as err:
            cache[key] = f"cannot read the street graph of {data} ({err})"
    return cache[key]


def choose_map_tasks(runs: Sequence[RunResults], count: int, seed: int) -> list[str]:
    """`count` task ids every run has, chosen with `seed`: up to half completed by some run, the rest not."""
    if count <= 0:
        return []
    common = set.intersection(*({e.task for e in r.episodes} for r in runs))
    completed = sorted(t for t in common if any(e.task == t and e.metrics.get("tc") for r in runs
                                                for e in r.episodes))
    others = sorted(common - set(completed))
    rng = random.Random(seed)
    take = min(len(completed), max((count + 1) // 2, count - len(others)))
    chosen = rng.sample(completed, take) + rng.sample(others, min(len(others), count - take))
    return sorted(chosen, key=lambda t: (len(t), t))


def route_maps(runs: Sequence[RunResults], options: Options) -> tuple[Section, int]:
    """Gold route and agent path of a few episodes per run (at most `options.maps` maps in all)."""
    per_run = options.maps // len(runs) if options.maps > 0 else 0
    tasks = choose_map_tasks(runs, max(1, per_run) if per_run else 0, options.seed)
    notes: list[str] = []
    figures: list[Figure] = []
    cache: dict[str, StreetGraph | str] = {}
    drawn: set[str] = set()
    if not tasks:
        notes.append("No route maps: --maps is 0 or fewer than one per run." if options.maps < len(runs)
                     else "No route maps: no task is common to every run.")
    for task in tasks:
        for run in runs:
            graph = _graph(run, cache)
            if isinstance(graph, str):
                notes.append(f"{run.label}: route maps left out: {graph}.")
                continue
            episode = next(e for e in run.episodes if e.task == task)
            gold, path = episode.details.get("gold_path") or [], episode.details.get("pano_path") or []
            if not gold or not path or any(p not in graph for p in (*gold, *path)):
                notes.append(f"{run.label} #{task}: no map (its panoramas are not all in the graph).")
                continue
            m = episode.metrics
            title = (f"#{task} — {run.label}: TC {'yes' if m.get('tc') else 'no'}, SPD {m.get('spd', 0):.0f}, "
                     f"KPA {100 * m.get('kpa', 0):.0f}%")
            words = " ".join(episode.instruction.split())
            caption = f"{title}. {words[:220]}{'…' if len(words) > 220 else ''}"
            figures.append(route_map(f"route_{len(figures):02d}", caption, graph, gold, path, title))
            drawn.add(run.label)
    blocks: list[Block] = [Text("Gold route (green) and the agent's path (red, dashed) over the street graph; one "
                                "row per episode, one map per run. Episodes are chosen by the seed among those every "
                                "run has, up to half of them ones that some run completed.")]
    if figures:
        blocks.append(Gallery(tuple(figures), max(1, min(len(drawn), 3))))
    blocks += [Text(n, muted=True) for n in dict.fromkeys(notes)]
    return Section("Route maps", "maps", tuple(blocks)), len(figures)


def episodes_table(runs: Sequence[RunResults]) -> Section:
    """Every episode's metrics and cost, folded away (at most MAX_EPISODE_ROWS rows per run)."""
    header = ("episode", "route length", "TC", "SPD", "KPA %", "KPA corrected %", "stop", "actions", "tokens",
              "calls", "model seconds", "wall seconds")
    details = []
    for run in runs:
        rows = tuple((e.task, str(route_length(e)), "yes" if e.metrics.get("tc") else "no",
                      f"{e.metrics.get('spd', 0):.0f}", f"{100 * e.metrics.get('kpa', 0):.0f}",
                      f"{100 * e.metrics.get('kpa_corrected', 0):.0f}", stop_kind(e),
                      str(len(e.details.get("actions") or [])), str(e.cost.tokens), str(e.cost.calls),
                      f"{e.cost.model_seconds:.2f}", f"{e.cost.seconds:.3f}")
                     for e in run.episodes[:MAX_EPISODE_ROWS])
        note = (f"first {MAX_EPISODE_ROWS} of {len(run.episodes)} episodes" if len(run.episodes) > MAX_EPISODE_ROWS
                else "")
        details.append(Details(f"Episodes of {run.label} ({len(run.episodes)})",
                               (Table(f"Episodes — {run.label}", header, rows, frozenset({1, 3, 4, 5, 7, 8, 9, 10, 11}),
                                      note),)))
    return Section("Episodes", "episodes", tuple(details))

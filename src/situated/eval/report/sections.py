"""Sections every report has, whatever the system: what is compared, the overall numbers with bootstrap
intervals, differences between runs, the papers' numbers, cost, and how the numbers were computed.

A system may also have parts, subsets of each run's episodes reported apart as well as together (tabletop:
without and with distractors): `split_runs` restricts every run to each part and bootstraps it on its own, and
`results`, `comparison` and `papers` add a row per part.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from ..bootstrap import Interval, bootstrap, bootstrap_differences
from ..summary import summarize
from ..systems.base import Metric, Part, System
from ..systems.papers import PaperResult
from .document import Block, Details, Section, Table, Text
from .figures import metric_bars
from .runs import HEADLINE, RunResults, differing_settings, variant_name


@dataclass(frozen=True)
class Options:
    """What a report's numbers depend on beyond the episodes."""

    seed: int = 0
    resamples: int = 2000
    level: float = 0.95
    maps: int = 12


@dataclass(frozen=True)
class PartResults:
    """One part of every run (None where a run has none of it) with its bootstrap intervals."""

    part: Part
    runs: tuple[RunResults | None, ...]
    cis: tuple[dict[str, Interval] | None, ...]

    def members(self) -> list[tuple[RunResults, dict[str, Interval]]]:
        """(run restricted to the part, its intervals) of the runs that have the part."""
        return [(r, ci) for r, ci in zip(self.runs, self.cis, strict=True) if r is not None and ci is not None]


def _settings_text(run: RunResults) -> str:
    shown = [n for n in HEADLINE if n in run.config and n not in ("model", "dataset", "split")]
    return ", ".join(f"{n}={run.setting(n)}" for n in shown)


# ---------------------------------------------------------------------------------------------- what
def intro(runs: Sequence[RunResults]) -> Section:
    """What the report compares: one row per run, the settings that differ, the full configurations."""
    system = runs[0].system
    differ = differing_settings(runs)
    if len(runs) == 1:
        scope = "one run"
        contrast = ""
    elif differ:
        scope = f"{len(runs)} runs"
        contrast = (" The runs differ in " + ", ".join(f"{n} ({' / '.join(r.setting(n) for r in runs)})"
                                                       for n in differ)
                    + "; everything else is the same. The first run is the reference the others are compared with.")
    else:
        scope = f"{len(runs)} runs"
        contrast = (" The runs have the same settings (repeated evaluations). The first run is the reference the "
                    "others are compared with.")
    blocks: list[Block] = [Text(f"This report summarizes {scope} of the {system.name} evaluation ({system.command} "
                                f"--out DIR), read from their results stores.{contrast}"
                                + (f" {system.cases}" if system.cases else ""))]
    rows = []
    for index, run in enumerate(runs, start=1):
        split = system.split_of(run.config).strip("/") or "–"
        rows.append((str(index), run.label, run.setting("model"), split, _settings_text(run), str(len(run.episodes)),
                     str(run.tasks), str(run.runs), str(run.path)))
    blocks.append(Table("Runs compared", ("#", "run", "model", "split", "settings", "episodes", "tasks", "runs",
                                          "directory"), tuple(rows), frozenset({5, 6, 7})))
    keys = sorted({k for r in runs for k in r.config})
    config_rows = tuple((k, *(json.dumps(r.config.get(k)) for r in runs)) for k in keys)
    blocks.append(Details("Full configuration of each run (run.json)",
                          (Table("Configuration", ("setting", *(r.label for r in runs)), config_rows),)))
    return Section("What this compares", "what", tuple(blocks))


# ---------------------------------------------------------------------------------------------- results
def intervals(runs: Sequence[RunResults], options: Options) -> list[dict[str, Interval]]:
    """Bootstrap intervals of every metric of every run."""
    return [bootstrap(run.episodes, run.system.metric_keys, resamples=options.resamples,
                      seed=options.seed, level=options.level) for run in runs]


def split_runs(runs: Sequence[RunResults], options: Options) -> list[PartResults]:
    """Every part of the runs' system (none for most), each run restricted to it, with its own intervals."""
    found = []
    for part in runs[0].system.parts:
        members = tuple(part.of(run) for run in runs)
        cis = tuple(None if run is None else intervals([run], options)[0] for run in members)
        found.append(PartResults(part, members, cis))
    return found


def _cells(run: RunResults, ci: dict[str, Interval], metrics: Sequence[Metric], repeated: bool) -> tuple[str, ...]:
    """tasks × runs, then each metric (mean ± std over runs when any run is repeated) with its interval."""
    summary = summarize(run.episodes, [m.key for m in metrics])
    return (f"{summary.tasks} × {summary.runs}",
            *(f"{m.show_stat(summary[m.key]) if repeated else m.show(summary[m.key].mean)} "
              f"{m.show_interval(ci[m.key])}" for m in metrics))


def results(runs: Sequence[RunResults], cis: Sequence[dict[str, Interval]], options: Options,
            splits: Sequence[PartResults] = ()) -> Section:
    """Overall numbers: mean ± std over runs and the bootstrap interval, per run (and per part of a run); a
    figure when runs differ or have parts."""
    metrics = runs[0].system.metrics
    level = f"{options.level:.0%}"
    repeated = any(r.runs > 1 for r in runs)
    header = ("run", "tasks × runs", *(f"{m.label} [{level} CI]" for m in metrics))
    rows = [(run.label, *_cells(run, ci, metrics, repeated)) for run, ci in zip(runs, cis, strict=True)]
    spread = "mean over tasks of each run, then mean ± std over runs" if repeated else "mean over tasks"
    blocks: list[Block] = [Table(f"Overall ({spread}; {level} bootstrap CI over tasks)", header, tuple(rows),
                                 frozenset(range(1, len(header))))]
    differ = differing_settings(runs)
    names = [variant_name(r, differ) for r in runs]
    if len(set(names)) < len(names):
        names = [r.label for r in runs]
    bars = list(zip(names, cis, strict=True))  # (series of the figure, its intervals)
    what = ", ".join(differ) if differ else "run"
    if splits:
        parts = " / ".join(s.part.name for s in splits)
        rows, bars = [], []
        for index, (run, name) in enumerate(zip(runs, names, strict=True)):
            for s in splits:
                part, ci = s.runs[index], s.cis[index]
                if part is not None and ci is not None:
                    rows.append((run.label, s.part.name, *_cells(part, ci, metrics, repeated)))
                    bars.append((f"{name}, {s.part.name}" if len(runs) > 1 else s.part.name, ci))
        blocks.append(Table(f"By part: {parts} (each on its own: {spread}; {level} bootstrap CI over its tasks)",
                            (header[0], "part", *header[1:]), tuple(rows), frozenset(range(2, len(header) + 1))))
        what = f"{what} and part ({parts})" if len(runs) > 1 else f"part ({parts})"
    if len(bars) > 1:
        shown = [m for m in metrics if m.scale == metrics[0].scale][:3]
        scale = shown[0].scale
        series = {n: [ci[m.key].mean * scale for m in shown] for n, ci in bars}
        bounds = {n: [(ci[m.key].low * scale, ci[m.key].high * scale) for m in shown] for n, ci in bars}
        caption = (f"{' / '.join(m.label for m in shown)} by {what} (bars: mean; whiskers: {level} bootstrap CI)")
        blocks.append(metric_bars("metrics_by_variant", caption, [m.label for m in shown], series, bounds,
                                  "percent" if scale == 100 else "rate", 100 if scale == 100 else 1.0))
    return Section("Results", "results", tuple(blocks))


def comparison(runs: Sequence[RunResults], options: Options,
               splits: Sequence[PartResults] = ()) -> tuple[Section | None, list[dict]]:
    """Each run against the first, over all episodes and then within each part: differences with bootstrap
    intervals (and a JSON digest of them; its entries name the part when the system has parts)."""
    if len(runs) < 2:
        return None, []
    metrics = runs[0].system.metrics
    level = f"{options.level:.0%}"
    reference = runs[0]
    part_column = ("episodes",) if splits else ()  # which episodes a row compares: all, or one part
    header = ("run", "vs", *part_column, "paired", *(f"Δ {m.label} [{level} CI]" for m in metrics))
    views: list[tuple[str, Sequence[RunResults | None]]] = [("all", runs), *((s.part.name, s.runs) for s in splits)]
    rows, digest = [], []
    for name, members in views:
        first = members[0]
        which, part = ((name,), {"part": name}) if splits else ((), {})
        for run in members[1:]:
            if first is None or run is None:
                continue
            cells = []
            differences = bootstrap_differences(first.episodes, run.episodes, [m.key for m in metrics],
                                                resamples=options.resamples, seed=options.seed, level=options.level)
            for m in metrics:
                d = differences[m.key]
                cells.append(f"{d.mean * m.scale:+.{m.digits}f} [{d.low * m.scale:+.{m.digits}f}, "
                             f"{d.high * m.scale:+.{m.digits}f}]{' *' if d.excludes_zero else ''}")
                digest.append({"run": run.label, "vs": first.label, **part, "metric": m.key, **d.to_dict()})
            paired = differences[metrics[0].key].paired
            rows.append((run.label, first.label, *which, "yes" if paired else "no", *cells))
    numeric = frozenset(range(len(header) - len(metrics), len(header)))
    blocks = (
        Text(f"Differences are each later run minus {reference.label}. Paired: both ran the same tasks, and each "
             "bootstrap replicate resamples the same tasks for both, so task difficulty cancels out. * marks an "
             "interval that excludes 0: that difference is unlikely to be an accident of which tasks were "
             "evaluated; one that spans 0 shows no clear difference. With few tasks the intervals are wide."),
        Table("Differences against the first run", tuple(header), tuple(rows), numeric),
    )
    return Section("Comparison", "comparison", blocks), digest


# ---------------------------------------------------------------------------------------------- papers
def _paper_value(row: PaperResult, key: str, metric: Metric, scaled: bool) -> str:
    if key not in row.metrics:
        return "–"
    scale = metric.scale if scaled else 1.0  # VELMA's and EAI's rows are already in percent / hops
    value = row.metrics[key] * scale
    text = f"{value:.{metric.digits}f}"
    if key in row.std:
        text += f" ± {row.std[key] * scale:.{metric.digits}f}"
    return text


def papers(runs: Sequence[RunResults], cis: Sequence[dict[str, Interval]],
           splits: Sequence[PartResults] = ()) -> tuple[Section, int]:
    """The papers' published rows for the runs' splits (and parts: `<split>/<part>`), beside the runs themselves,
    with caveats; and how many published rows were shown."""
    system = runs[0].system
    by_key = {m.key: m for m in system.metrics}
    keys = system.paper_metrics
    header = ("source", "setting", "model", "split", *(by_key[k].label for k in keys), "tasks × runs", "same setting")
    views = [(s.part.name, s.members()) for s in splits] or [(None, list(zip(runs, cis, strict=True)))]
    blocks: list[Block] = []
    shown: list[PaperResult] = []
    for split in dict.fromkeys(system.split_of(r.config) for r in runs):
        settings = {system.setting_of(r.config) for r in runs if system.split_of(r.config) == split}
        ours: list[tuple[str, ...]] = []
        theirs: list[tuple[str, ...]] = []
        notes: list[str] = []
        for part, pairs in views:
            key = split if part is None else f"{split}/{part}"
            members = [(r, ci) for r, ci in pairs if system.split_of(r.config) == split]
            rows = system.comparable(key)
            ours += [(f"this report: {r.label}", system.setting_of(r.config),
                      r.setting("model") if r.setting("model") != "–" else "none", key,
                      *(by_key[k].show(ci[k].mean) for k in keys), f"{r.tasks} × {r.runs}", "")
                     for r, ci in members]
            theirs += [(f"{row.paper}{', ' + row.table if row.table else ''}", row.setting, row.model, row.split,
                        *(_paper_value(row, k, by_key[k], system.papers_scaled) for k in keys),
                        f"{row.tasks or '?'} × {row.runs}",
                        "yes" if row.agent in settings else "")
                       for row in rows]
            shown += rows
            notes += _caveats(system, key, rows, members)
        blocks.append(Table(f"Published numbers for {split or 'this split'}", header, (*ours, *theirs),
                            frozenset(range(4, 4 + len(keys) + 1))))
        blocks += [Text(n, muted=True) for n in dict.fromkeys(notes)]
    if not shown:
        blocks.append(Text("The papers report no numbers for these splits.", muted=True))
    sources = sorted({row.source for row in shown if row.source})
    if sources:
        blocks.append(Text("Sources: " + "; ".join(sources) + ".", muted=True))
    return Section("Against the papers", "papers", tuple(blocks)), len(shown)


def _caveats(system: System, split: str, rows: Sequence[PaperResult],
             members: Sequence[tuple[RunResults, dict[str, Interval]]]) -> list[str]:
    notes = []
    models = sorted({row.model for row in rows if row.model != "none"})
    ours = sorted({r.setting("model") for r, _ in members if r.setting("model") != "–"})
    if models:
        notes.append(f"The papers used {', '.join(models)}"
                     + (f"; these runs used {', '.join(ours)}." if ours else "; these runs used no language model."))
    other = sorted({row.split for row in rows if row.split != split})
    if other:
        notes.append(f"The papers report no numbers on {split}; the rows above are on {', '.join(other)} "
                     "(another scene, other tasks): a reference, not a like-for-like comparison.")
    for row in rows:
        if row.note:
            notes.append(f"{row.setting}: {row.note}.")
    if rows:
        notes += system.paper_notes
    sizes = {row.tasks for row in rows if row.tasks}
    for run, _ in members:
        if sizes and run.tasks < max(sizes):
            notes.append(f"{run.label} covers {run.tasks} of the {max(sizes)} tasks the papers averaged over; its "
                         "numbers are on that subset.")
    return notes


# ---------------------------------------------------------------------------------------------- cost
def _ratio(value: float, reference: float) -> str:
    if reference <= 0:
        return "–" if value <= 0 else "∞"
    return f"{value / reference:.2f}×"


def cost(runs: Sequence[RunResults]) -> tuple[Section, list[dict]]:
    """What each run spent, in total and per episode, and relative to the first run."""
    rows, digest = [], []
    reference = None
    for run in runs:
        n = len(run.episodes)
        tokens = sum(e.cost.tokens for e in run.episodes)
        prompt = sum(e.cost.prompt_tokens for e in run.episodes)
        calls = sum(e.cost.calls for e in run.episodes)
        model_s = sum(e.cost.model_seconds for e in run.episodes)
        seconds = sum(e.cost.seconds for e in run.episodes)
        if reference is None:
            reference = (tokens, prompt, calls, seconds, model_s)
        rows.append((run.label, str(n), f"{tokens:,} ({tokens / n:,.0f})", f"{prompt:,} ({prompt / n:,.0f})",
                     f"{calls:,} ({calls / n:.1f})", f"{model_s:,.1f}", f"{seconds:,.1f}",
                     _ratio(tokens + prompt, reference[0] + reference[1]), _ratio(model_s, reference[4])))
        digest.append({"run": run.label, "episodes": n, "tokens": tokens, "prompt_tokens": prompt, "calls": calls,
                       "model_seconds": round(model_s, 3), "seconds": round(seconds, 3)})
    header = ("run", "episodes", "tokens (per episode)", "prompt tokens (per episode)", "model calls (per episode)",
              "model seconds", "wall seconds", "all tokens vs first run", "model seconds vs first run")
    blocks = (
        Text("Tokens are generated tokens; prompt tokens are those read. Model seconds are the time the model "
             "took when the calls were made (a replayed cassette keeps the recorded times); wall seconds are the "
             "episodes' time as this run ran them. A setting that wins by spending much more shows here."),
        Table("Cost per run", header, tuple(rows), frozenset(range(1, len(header)))),
    )
    return Section("Cost", "cost", blocks), digest


# ---------------------------------------------------------------------------------------------- method
def method(system: System, options: Options) -> Section:
    cases = ""
    if system.parts:
        names = " and ".join(p.name for p in system.parts)
        cases = (f" {system.cases} The {names} rows restrict every run to that part and compute everything on it "
                 "alone: the means, their own bootstrap, and differences paired within the part.")
    return Section("How these numbers were computed", "method", (
        Text(f"{system.definitions} are averaged over the tasks of each run, then the mean ± (population) standard "
             f"deviation is taken over runs, as the evaluation commands print them.{cases}"),
        Text(f"Confidence intervals are {options.level:.0%} percentile bootstrap intervals with {options.resamples} "
             "replicates: each replicate resamples, within every run, as many tasks as the run has, with "
             "replacement, and recomputes the mean over runs; runs themselves are not resampled. Differences "
             "between two runs are paired by task when both ran the same tasks. Replicates are drawn with "
             f"numpy's default_rng({options.seed}), so the same stores give the same report."
             + (" The two settings of one task are resampled independently although they share its difficulty, "
                "so the overall intervals may be somewhat narrow." if system.parts else "")),
        Text("The stores were read, never written. Figures are drawn with matplotlib and embedded in this file; it "
             "loads nothing from the network.", muted=True),
    ))

"""Reports of results stores written by the real runners: household runs on the real env1 tasks with fixed
plans, navigation runs of the gold and forward agents on the small street dataset and on real Map2seq dev
instances, a tabletop run of the example tasks with fixed plans. The numbers in the report are the stores'
numbers; the HTML page loads nothing from outside and renders every figure in a real browser (Debian's chromium
driven by Playwright, skipped where absent)."""

from __future__ import annotations

import hashlib
import re
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from fakes import EXAMPLES, write_street_dataset
from situated.datasets.map2seq import load_split as load_streets
from situated.datasets.progprompt import HouseholdTask, load_split
from situated.datasets.tabletop import load_tabletop_tasks
from situated.envs.streets.env import StreetEnv
from situated.eval.report.build import Options, build_report, load_runs, report_of, write_report
from situated.eval.report.document import Document
from situated.eval.report.html import render_html
from situated.eval.store import read_episodes
from situated.eval.summary import by_task, stat, summarize
from situated.eval.systems.household_episodes import evaluate_household
from situated.eval.systems.household_metrics import HOUSEHOLD_METRICS
from situated.eval.systems.navigation_episodes import evaluate_navigation, navigation_config, navigation_summary
from situated.eval.systems.tabletop_episodes import evaluate_tabletop, tabletop_config
from situated.llm.base import Completion
from situated.planners.base import PlanResult
from situated.planners.nav_baselines import ForwardAgent, GoldAgent
from situated.program import parse

GOOD = {
    "watch tv": "find('tv')\n\tswitchon('tv')\n",
    "turn off tablelamp": "find('tablelamp')\n\tswitchoff('tablelamp')\n",
    "put the soap in the bathroomcabinet": "find('barsoap')\n\tgrab('barsoap')\n\tfind('bathroomcabinet')\n"
                                           "\topen('bathroomcabinet')\n\tputin('barsoap', 'bathroomcabinet')\n"
                                           "\tclose('bathroomcabinet')\n",
    "put the apple in the bowl": "grab_and_putin('apple', 'bowl')\n",
}
CLUMSY = "grab('barsoap')\n\tfind('tv')\n"  # grabs without walking there first: a failed step


class Planner:
    """Writes the good plan of a task on the calls `good(task, call number)` allows, else a clumsy one."""

    max_repairs = 0
    can_replan = False

    def __init__(self, good: Callable[[str, int], bool], tokens: int) -> None:
        self.llm = None
        self.good = good
        self.tokens = tokens
        self.calls: dict[str, int] = {}

    def plan(self, task_name: str, objects: list[str], *, affordances: object = None) -> PlanResult:
        count = self.calls.get(task_name, 0)
        self.calls[task_name] = count + 1
        body = GOOD[task_name] if task_name in GOOD and self.good(task_name, count) else CLUMSY
        text = f"def task():\n\t{body}"
        return PlanResult(parse(text), text, (Completion(body, "stop", 200, self.tokens),), self.tokens, 200)


@pytest.fixture(scope="module")
def tasks(progprompt_data: Path) -> list[HouseholdTask]:
    return load_split(progprompt_data, "env1")[:4]


@pytest.fixture(scope="module")
def household(tasks: list[HouseholdTask], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two stores of two runs each: `careful` plans three tasks right every time; `sloppy` gets "watch tv"
    right only in its first run and spends ten times the tokens."""
    root = tmp_path_factory.mktemp("household")
    careful, sloppy = root / "careful", root / "sloppy"
    evaluate_household(tasks, lambda: Planner(lambda task, n: True, 10), runs=2, out=careful,
                       config={"model": "fixed", "split": "env1", "ablation": "full"})
    evaluate_household(tasks, lambda: Planner(lambda task, n: task == "watch tv" and n == 0, 100), runs=2,
                       out=sloppy, config={"model": "fixed", "split": "env1", "ablation": "no-comments"})
    return careful, sloppy


@pytest.fixture(scope="module")
def streets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Gold and forward agents on the small street dataset (three instances)."""
    root = tmp_path_factory.mktemp("streets")
    data = write_street_dataset(root)
    dataset = load_streets(data, "dev")
    stores = []
    for name, agent, env in (("gold", GoldAgent(dataset.graph), StreetEnv(dataset.graph, max_steps=None)),
                             ("forward", ForwardAgent(), StreetEnv(dataset.graph))):
        config = navigation_config(dataset.instances, dataset="map2seq", split="dev", data=str(data), agent=name)
        evaluate_navigation(env, agent, dataset.instances, out=root / name, config=config)
        stores.append(root / name)
    return stores[0], stores[1]


@pytest.fixture(scope="module")
def tabletop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first two example tabletop tasks, each without and with its distractors, in the simulated arm's world:
    the apple task planned right, the other clumsily."""
    pytest.importorskip("pybullet")
    tasks = load_tabletop_tasks(EXAMPLES / "tabletop" / "tasks.json")[:2]
    out = tmp_path_factory.mktemp("tabletop") / "fixed"
    evaluate_tabletop(tasks, lambda: Planner(lambda task, n: True, 10), out=out,
                      config=tabletop_config(tasks, model="fixed", planner="progprompt_tabletop"))
    return out


@pytest.fixture(scope="module")
def household_report(household: tuple[Path, Path]) -> Document:
    return report_of(household, Options(resamples=200))


def digest(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


# ---------------------------------------------------------------------------------------------- household
def test_per_task_and_overall_numbers_are_the_stores(household: tuple[Path, Path], household_report: Document) -> None:
    document = household_report
    for directory in household:
        _, episodes = read_episodes(directory)
        table = document.table(f"Per task — {directory.name}")
        assert len(table.rows) == 4
        for row, (_, group) in zip(table.rows, by_task(episodes), strict=True):
            assert row[0].endswith(group[0].instruction)
            assert row[1:4] == tuple(str(stat([e.metrics[m] for e in group])) for m in ("success", "gcr", "exec"))
        summary = summarize(episodes, HOUSEHOLD_METRICS)
        overall = {r[0]: r for r in document.table("Overall").rows}[directory.name]
        assert overall[2].startswith(f"{summary['success'].mean:.2f} ± {summary['success'].std:.2f} [")
    by_run = {r["label"]: r for r in document.summary["runs"]}
    assert by_run["careful"]["metrics"]["success"]["mean"] == 0.75
    assert by_run["sloppy"]["metrics"]["success"]["mean"] == 0.125


def test_two_runs_are_compared_with_a_paired_difference(household: tuple[Path, Path]) -> None:
    document = report_of(household, Options(resamples=500, seed=3))
    row = document.table("Differences").rows[0]
    assert row[:3] == ("sloppy", "careful", "yes")
    assert row[3].startswith("-0.62 [")  # 0.125 - 0.75
    sr = next(d for d in document.summary["differences"] if d["metric"] == "success")
    assert sr["paired"] and sr["low"] <= sr["mean"] == -0.625 <= sr["high"] < 0
    assert row[3].endswith(" *")  # the interval excludes 0
    # the variant figure names the setting the runs differ in; SR by task has a bar group per task
    captions = [f.caption for f in document.figures()]
    assert any("by ablation" in c for c in captions) and any("by task" in c for c in captions)
    cost = {r[0]: r for r in document.table("Cost per run").rows}
    assert cost["sloppy"][2].startswith("800 (100)") and cost["sloppy"][7] == f"{(800 + 1600) / (80 + 1600):.2f}×"


def test_failures_are_grouped_by_normalized_reason(household: tuple[Path, Path], household_report: Document) -> None:
    document = household_report
    failed = document.table("Failed steps").rows
    assert failed[0][0] == "grab <obj>: the character is not close to <obj>"
    assert failed[0][1:3] == ("2", "7")  # careful: the 4th task in 2 runs; sloppy: 7 clumsy plans
    assert "(id " in failed[0][3]  # the example keeps the original text
    unmet = document.table("Goal conditions left unmet").rows
    counts = [Counter(c for e in read_episodes(d)[1] for c in e.details["missing"]) for d in household]
    assert unmet and all(row[1:3] == (str(counts[0][row[0]]), str(counts[1][row[0]])) for row in unmet)
    assert counts[0]["tv ON"] == 0 and counts[1]["tv ON"] == 1  # sloppy watched tv in one run of two


def test_the_bootstrap_is_seeded(household: tuple[Path, Path]) -> None:
    runs = load_runs(household)
    first = build_report(runs, Options(seed=1, resamples=300)).summary["runs"]
    again = build_report(runs, Options(seed=1, resamples=300)).summary["runs"]
    assert first == again
    for run in first:
        for interval in run["metrics"].values():
            assert interval["low"] <= interval["mean"] <= interval["high"]


def test_papers_are_matched_by_split(household_report: Document) -> None:
    document = household_report
    rows = document.table("Published numbers for env1").rows
    assert [r[0] for r in rows[:2]] == ["this report: careful", "this report: sloppy"]
    paper = rows[2]
    assert paper[0].startswith("ProgPrompt") and "Table III" in paper[0] and paper[4:7] == ("0.56", "0.81", "0.85")
    assert paper[-1] == "yes"  # the careful run's setting (full prompt) is the paper's
    texts = [b.text for s in document.sections if s.anchor == "papers" for b in s.blocks if hasattr(b, "text")]
    assert any("GPT-3" in t and "these runs used fixed" in t for t in texts)
    assert any("covers 4 of the 10 tasks" in t for t in texts)


def test_html_is_self_contained_and_stores_are_untouched(household: tuple[Path, Path], tmp_path: Path) -> None:
    before = [digest(d) for d in household]
    out = tmp_path / "report.html"
    write_report(report_of(household, Options(resamples=50)), out)  # reads the stores anew
    html = out.read_text()
    assert [digest(d) for d in household] == before
    assert "http://" not in html and "https://" not in html and "//cdn" not in html
    assert "<script" not in html and "<link" not in html and "@import" not in html and "url(" not in html
    sources = re.findall(r'src="([^"]*)"', html)
    assert sources and all(s.startswith(("data:image/svg+xml;base64,", "data:image/png;base64,")) for s in sources)
    assert "<style>" in html and "What this compares" in html


def test_text_from_the_stores_is_escaped(household: tuple[Path, Path], tmp_path: Path) -> None:
    runs = load_runs(household)
    hostile = tmp_path / "<em>&x"
    shutil.copytree(runs[0].path, hostile)
    html = render_html(report_of([hostile], Options(resamples=20)))
    assert "<em>" not in html and "&lt;em&gt;&amp;x" in html


def test_markdown_has_the_tables_and_links_its_figures(household_report: Document, tmp_path: Path) -> None:
    out = tmp_path / "r.md"
    written = write_report(household_report, out, "md")
    text = out.read_text()
    assert "| task | SR | GCR | Exec |" in text and "## Per task" in text and "| --- | ---: |" in text
    assert "| grab &lt;obj&gt;: the character is not close to &lt;obj&gt; |" in text  # not read as HTML tags
    figures = [p for p in written if p != out]
    assert figures and all(p.parent == tmp_path / "r_figures" and p.stat().st_size > 1000 for p in figures)
    for figure in figures:
        assert f"](r_figures/{figure.name})" in text


# ---------------------------------------------------------------------------------------------- navigation
def test_navigation_report_of_the_small_street(streets: tuple[Path, Path]) -> None:
    document = report_of(streets, Options(resamples=200, maps=6))
    forward = read_episodes(streets[1])[1]
    overall = {r[0]: r for r in document.table("Overall").rows}
    assert overall["forward"][2].startswith(f"{navigation_summary(forward)['tc']:.1f} [")
    assert overall["gold"][2] == "100.0 [100.0, 100.0]"
    assert document.summary["maps"] == 6  # three instances × two runs
    stops = {r[0]: r for r in document.table("Stops relative").rows}
    assert stops["stopped at the target (or next to it)"][1] == "3 (100%)"
    lengths = document.table("TC and mean SPD by gold route length")
    assert sum(int(re.search(r"\((\d+)\)", r[1]).group(1)) for r in lengths.rows) == 3
    assert any(f.name == "tc_by_route_length" for f in document.figures())
    assert all(f.data.startswith(b"\x89PNG") for f in document.figures() if f.name.startswith("route_"))


def test_maps_are_capped_and_chosen_by_the_seed(streets: tuple[Path, Path]) -> None:
    runs = load_runs(streets)
    first = [f.caption for f in build_report(runs, Options(resamples=20, maps=2, seed=5)).figures()]
    again = [f.caption for f in build_report(runs, Options(resamples=20, maps=2, seed=5)).figures()]
    assert first == again and sum(c.startswith("#") for c in first) == 2
    none = build_report(runs, Options(resamples=20, maps=0))
    assert none.summary["maps"] == 0


def test_maps_are_skipped_with_a_note_when_the_graph_is_gone(streets: tuple[Path, Path], tmp_path: Path) -> None:
    moved = tmp_path / "gold"
    shutil.copytree(streets[0], moved)
    run = (moved / "run.json").read_text().replace('"data": "', '"data": "/nowhere')
    (moved / "run.json").write_text(run)
    document = report_of([moved], Options(resamples=20))
    assert document.summary["maps"] == 0
    notes = [b.text for s in document.sections if s.anchor == "maps" for b in s.blocks if hasattr(b, "text")]
    assert any("route maps left out" in n and "cannot read the street graph" in n for n in notes)


def test_real_map2seq_dev_instances(velma_data: Path, tmp_path: Path) -> None:
    data = velma_data / "map2seq_unseen"
    dataset = load_streets(data, "dev")
    instances = dataset.instances[:6]
    stores = []
    for name, agent, steps in (("gold", GoldAgent(dataset.graph), None), ("forward", ForwardAgent(), 55)):
        config = navigation_config(instances, dataset="map2seq", split="dev", data=str(data.resolve()), agent=name)
        evaluate_navigation(StreetEnv(dataset.graph, max_steps=steps), agent, instances, out=tmp_path / name,
                            config=config)
        stores.append(tmp_path / name)
    document = report_of(stores, Options(resamples=200, maps=4))
    assert document.summary["maps"] == 4
    papers = document.table("Published numbers for map2seq/dev").rows
    forward_only = next(r for r in papers if r[1] == "forward-only baseline")
    assert forward_only[4:7] == ("0.8", "37.9", "37.2") and forward_only[-1] == "yes"
    assert any(r[1] == "2-shot prompting" and r[2] == "GPT-4" for r in papers)
    difference = next(d for d in document.summary["differences"] if d["metric"] == "tc")
    assert difference["paired"] and difference["mean"] <= 0


# ---------------------------------------------------------------------------------------------- browser
def _browser():  # -> playwright Browser
    """Debian's chromium under Playwright (Playwright cannot download its own browsers here)."""
    executable = shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed: pip install playwright (and apt-get install -y chromium)")
    if executable is None:
        pytest.skip("chromium is not installed: apt-get install -y chromium (and pip install playwright)")
    return sync_playwright, executable


def _render(pages: list[Path], tmp_path: Path) -> None:
    """Open each page in chromium: every figure rendered with a size, a full-page screenshot taken, and no
    request left the file."""
    sync_playwright, executable = _browser()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            requests: list[str] = []
            page.on("request", lambda request: requests.append(request.url))
            for out in pages:
                page.goto(out.as_uri())
                page.wait_for_load_state("load")
                images = page.eval_on_selector_all("img", "els => els.map(e => [e.complete, e.naturalWidth, "
                                                          "e.getBoundingClientRect().width, "
                                                          "e.getBoundingClientRect().height])")
                assert images, out
                assert all(done and natural > 0 and width > 0 and height > 0
                           for done, natural, width, height in images), images
                shot = tmp_path / f"{out.stem}.png"
                page.screenshot(path=str(shot), full_page=True)
                assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 20_000
            assert all(url.startswith(("file:", "data:")) for url in requests), requests
        finally:
            browser.close()


def test_every_figure_renders_in_a_browser(household: tuple[Path, Path], streets: tuple[Path, Path],
                                           tmp_path: Path) -> None:
    pages = []
    for name, stores in (("household", household), ("navigation", streets)):
        out = tmp_path / f"{name}.html"
        write_report(report_of(stores, Options(resamples=50, maps=4)), out)
        pages.append(out)
    _render(pages, tmp_path)


def test_a_tabletop_report_renders_in_a_browser(tabletop: Path, tmp_path: Path) -> None:
    document = report_of([tabletop], Options(resamples=50))
    assert {f.name for f in document.figures()} == {"metrics_by_variant", "sr_by_task"}
    out = tmp_path / "tabletop.html"
    write_report(document, out)
    _render([out], tmp_path)

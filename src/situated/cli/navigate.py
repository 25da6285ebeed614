"""`situated navigate`: street navigation (Touchdown / Map2seq) with the gold, forward-only, random or LLM agent.

`situated navigate --data DIR ...` runs an agent over a split;
`situated navigate show ID --data DIR --out F.png` draws one episode over the street graph;
`situated navigate landmarks --data DIR --model URI` scores the LLM landmark extractor against the release's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from typer import Option

from ..eval.report.route_drawing import draw_route
from ..eval.report.terminal import landmark_table, navigation_table
from ..eval.settings import check_counts, settings_from
from ..eval.systems.navigation_episodes import navigation_summary
from ..eval.systems.navigation_run import (
    ROUTE_SHOTS,
    NavigationSettings,
    data_files,
    drawn_episode,
    find_instance,
    landmark_scoring,
    load_dataset,
    prepare_navigation,
)
from ..planners.nav_baselines import AGENTS
from . import app
from .models import BaseUrlOpt, CommandModels, ExecutorOpt, JobsOpt, RayAddressOpt, check_cassette, open_model
from .progress import episode_progress
from .render import ForceOpt, check_outputs, input_files

navigate_app = typer.Typer(
    help="Street navigation (VELMA's Touchdown / Map2seq environment): run agents, draw routes.",
    invoke_without_command=True,
    no_args_is_help=False,
)
app.add_typer(navigate_app, name="navigate")


DataOpt = Annotated[Path | None, Option("--data", help="Dataset directory with graph/ and data/<split>.json.")]
SplitOpt = Annotated[str, Option("--split", help="Split file under data/: dev or test.")]
AgentOpt = Annotated[str, Option("--agent", help=f"Agent: {'|'.join(AGENTS)}.")]
DatasetOpt = Annotated[str | None, Option("--dataset", help="map2seq or touchdown (default: from the directory).")]
SeedOpt = Annotated[int, Option("--seed", help="Seed of the random agent.")]
ModelOpt = Annotated[str | None, Option("--model", help="Model URI for --agent llm.")]
LoraOpt = Annotated[Path | None, Option("--lora", help=(
    "A LoRA adapter (llama.cpp GGUF, from `navigate train`) applied to the embedded --model; the finetuned "
    "agent runs with --agent llm --shots 0."))]
LandmarksOpt = Annotated[str, Option("--landmarks", help="Landmark visibility: none (intersections only) or file.")]
LandmarksFileOpt = Annotated[Path | None, Option("--landmarks-file", help="Visibility JSON (situated-visibility/1).")]
PanoramasOpt = Annotated[Path | None, Option("--panoramas", help="--landmarks clip: directory of <panoid>.jpg "
                                                               "panoramas.")]
ClipStatsOpt = Annotated[Path | None, Option("--clip-stats", help="--landmarks clip: per-landmark statistics (JSON).")]
ClipWeightsOpt = Annotated[Path | None, Option("--clip-weights", help="--landmarks clip: OpenCLIP weights file.")]
ClipModelOpt = Annotated[str, Option("--clip-model", help="--landmarks clip: model name.")]
ExtractOpt = Annotated[bool, Option("--extract-landmarks", help="List each instruction's landmarks with --model.")]
ExamplesDataOpt = Annotated[Path | None, Option("--examples-data", help="--agent llm: dataset of training-area "
                                                                      "example routes.")]
ExamplesOpt = Annotated[str | None, Option("--examples", help=(
    "--agent llm/route: fixed (--shots routes drawn by --seed, VELMA's set-up; the llm agent's default) or "
    "retrieved (the --shots training routes whose directions are nearest to each episode's, by --retriever; "
    "the route agent's default)."))]
ShotsOpt = Annotated[int | None, Option("--shots", help=(
    f"--agent llm/route: solved examples in the prompt (default: llm 2, route {ROUTE_SHOTS})."))]
RetrieverOpt = Annotated[str, Option("--retriever", help="--examples retrieved: minilm (sentence embeddings) or bm25.")]
StopOpt = Annotated[float | None, Option("--stop-threshold", help=(
    "--agent llm: stop when the model's probability of 'stop' among the actions reaches this; otherwise "
    "the likeliest other action (embedded models only)."))]
CountOpt = Annotated[bool, Option("--count-intersections", help=(
    "--agent llm: the observations say which intersection this is since the last turn or the start."))]
TurnWordsOpt = Annotated[bool, Option("--turn-words", help=(
    "--agent route: when the directions name their turns ('take a left', 'right onto ...'), the grammar "
    "fixes those turns in order; the model writes where each happens and where to stop."))]
WordCountsOpt = Annotated[bool, Option("--word-counts", help=(
    "--agent route: as --turn-words, and the grammar also fixes where each turn happens, counted from the "
    "lights the directions pass (as --agent words reads them); the model writes only the stop line."))]
CassetteOpt = Annotated[Path | None, Option("--cassette", help="Record/replay LLM calls in this JSON-lines file.")]
CassetteModeOpt = Annotated[str, Option("--cassette-mode", help="replay, record or auto (with --cassette).")]
ThreadsOpt = Annotated[int | None, Option("--threads", help="llama.cpp threads (1 is fastest on a busy machine).")]
LimitOpt = Annotated[int | None, Option("--limit", help="Only the first N instances.")]
OutOpt = Annotated[Path | None, Option("--out", help="Directory for resumable per-episode results (JSON lines).")]
JsonOpt = Annotated[bool, Option("--json", help="End with one JSON line of the metrics.")]


@navigate_app.callback()
def navigate(
    ctx: typer.Context, data: DataOpt = None, split: SplitOpt = "dev", agent: AgentOpt = "forward",
    model: ModelOpt = None, lora: LoraOpt = None, landmarks: LandmarksOpt = "none",
    landmarks_file: LandmarksFileOpt = None, panoramas: PanoramasOpt = None, clip_stats: ClipStatsOpt = None,
    clip_weights: ClipWeightsOpt = None, clip_model: ClipModelOpt = "ViT-B-32", extract_landmarks: ExtractOpt = False,
    examples_data: ExamplesDataOpt = None, examples: ExamplesOpt = None, shots: ShotsOpt = None,
    retriever: RetrieverOpt = "minilm", stop_threshold: StopOpt = None, count_intersections: CountOpt = False,
    turn_words: TurnWordsOpt = False, word_counts: WordCountsOpt = False, cassette: CassetteOpt = None,
    cassette_mode: CassetteModeOpt = "auto", threads: ThreadsOpt = None, base_url: BaseUrlOpt = None,
    dataset: DatasetOpt = None, limit: LimitOpt = None, seed: SeedOpt = 0, out: OutOpt = None,
    executor: ExecutorOpt = "local", jobs: JobsOpt = 1, ray_address: RayAddressOpt = None, as_json: JsonOpt = False,
) -> None:
    """Run an agent over a split and report TC, SPD and KPA."""
    if ctx.invoked_subcommand is not None:
        return
    check_counts(("--threads", threads, 1), ("--jobs", jobs, 1))
    models = settings_from(CommandModels, locals())
    run = prepare_navigation(settings_from(NavigationSettings, locals()), models)
    with episode_progress(Console(stderr=True), run.title, quiet=as_json) as progress:
        episodes = run.run(on_progress=progress)
    summary = navigation_summary(episodes)
    console = Console()
    console.print(navigation_table(summary, f"{run.dataset.name} {split} — {agent} agent ({summary['n']} episodes)"))
    if run.store is not None:
        console.print(f"episodes: {run.store / 'episodes.jsonl'}")
    if as_json:
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in summary.items()}))


@navigate_app.command("show")
def show(
    instance_id: Annotated[str, typer.Argument(help="Instance id (Map2seq id / Touchdown route_id).")],
    out: Annotated[Path, Option("--out", help="Image to write (PNG, SVG or PDF; no suffix: PNG).")],
    data: DataOpt = None, split: SplitOpt = "dev", agent: AgentOpt = "forward", dataset: DatasetOpt = None,
    seed: SeedOpt = 0, force: ForceOpt = False,
) -> None:
    """Draw the gold route and an agent's path over the street graph."""
    loaded = load_dataset(data, split, dataset)
    instance = find_instance(loaded, instance_id)
    out = out if out.suffix else out.with_name(out.name + ".png")  # as draw_route names it
    check_outputs([out], input_files(*data_files(data)), force)
    episode = drawn_episode(loaded, instance, agent, seed)
    m = episode.metrics
    title = (f"{loaded.name} {split} #{instance.id} — {agent}: TC {'yes' if m['tc'] else 'no'}, "
             f"SPD {m['spd']:.0f}, KPA {100 * m['kpa']:.0f}%")
    written = draw_route(loaded.graph, instance.route, episode.details["pano_path"], title, out)
    Console().print(f"{title}\nwrote {written}")


@navigate_app.command("landmarks")
def landmarks_command(
    data: DataOpt = None, split: SplitOpt = "dev",
    model: Annotated[str, Option("--model", help="Model URI.")] = "llamacpp:qwen2.5-coder-1.5b",
    reference: Annotated[Path | None, Option(
        "--reference", help="Landmarks file to compare with (default: the release's).")] = None,
    limit: LimitOpt = None,
    cassette: Annotated[Path | None, Option("--cassette", help="Record/replay LLM calls here.")] = None,
    cassette_mode: Annotated[str, Option("--cassette-mode", help="replay, record or auto.")] = "auto",
    threads: Annotated[int | None, Option("--threads", help="llama.cpp threads.")] = None,
    base_url: BaseUrlOpt = None, dataset: DatasetOpt = None,
    as_json: Annotated[bool, Option("--json", help="End with one JSON line of the scores.")] = False,
) -> None:
    """Score the LLM landmark extractor against a reference landmarks file (precision / recall / F1)."""
    check_counts(("--threads", threads, 1))
    scoring = landmark_scoring(data, split, dataset, reference, limit)
    check_cassette(cassette, cassette_mode, input_files(*data_files(data), scoring.reference))
    llm = open_model(model, cassette=cassette, cassette_mode=cassette_mode, threads=threads, base_url=base_url)
    with Progress(TextColumn("extracting landmarks"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("instructions", total=len(scoring.instances))
        score = scoring.score(llm, lambda: bar.advance(task))
    Console().print(landmark_table(score, f"landmark extraction, {model} vs {scoring.reference.name} "
                                          f"({score.n} instructions)"))
    if as_json:
        print(json.dumps(score.as_dict()))

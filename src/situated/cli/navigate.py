"""`situated navigate`: street navigation (Touchdown / Map2seq) with the gold, forward-only, random or LLM agent.

`situated navigate --data DIR ...` runs an agent over a split;
`situated navigate show ID --data DIR --out F.png` draws one episode over the street graph;
`situated navigate landmarks --data DIR --model URI` scores the LLM landmark extractor against the release's.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from ..datasets.map2seq import NavDataset, examples_dir, load_split
from ..envs.streets.env import DATASETS, MAX_STEPS, NavInstance, StreetEnv
from ..envs.streets.graph import StreetGraph
from ..envs.streets.visibility import NoVisibility, VisibilitySource
from ..errors import SituatedError
from ..eval.executors import choose_executor
from ..eval.navigation import (
    NavigationJob,
    VisibilitySpec,
    evaluate_navigation_job,
    navigation_config,
    navigation_episode,
    navigation_summary,
    route_examples,
    velma_examples,
)
from ..eval.report import draw_route, navigation_table
from ..planners.nav_baselines import AGENTS, make_agent
from . import app
from .models import BaseUrlOpt, ExecutorOpt, JobsOpt, RayAddressOpt, check_cassette, evaluation_model, open_model
from .progress import episode_progress
from .render import ForceOpt, check_counts, check_outputs, input_files

navigate_app = typer.Typer(
    help="Street navigation (VELMA's Touchdown / Map2seq environment): run agents, draw routes.",
    invoke_without_command=True,
    no_args_is_help=False,
)
app.add_typer(navigate_app, name="navigate")

DataOpt = Annotated[
    Path | None, typer.Option("--data", help="Dataset directory with graph/ and data/<split>.json.")
]
SplitOpt = Annotated[str, typer.Option("--split", help="Split file under data/: dev or test.")]
AgentOpt = Annotated[str, typer.Option("--agent", help=f"Agent: {'|'.join(AGENTS)}.")]
DatasetOpt = Annotated[
    str | None, typer.Option("--dataset", help="map2seq or touchdown (default: from the directory).")
]
PROMPTED = ("llm", "route")
"""Agents that prompt a model with solved examples."""
ROUTE_SHOTS = 5
"""Example routes in the route agent's prompt (chosen on training-area routes of map2seq_seen's test file)."""
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the random agent.")]


def _check_choice(value: str, choices: tuple[str, ...], option: str) -> str:
    if value not in choices:
        raise SituatedError(f"{option} must be one of {', '.join(choices)}, not {value!r}")
    return value


def _load(data: Path | None, split: str, dataset: str | None) -> NavDataset:
    if data is None:
        raise SituatedError("--data DIR is required (a dataset directory with graph/ and data/<split>.json)")
    _check_choice(split, ("dev", "test", "train"), "--split")
    if dataset is not None:
        _check_choice(dataset, DATASETS, "--dataset")
    return load_split(data, split, dataset)


def _data_files(data: Path | None) -> list[Path]:
    """The folders whose files a command over `data` reads (never to be overwritten by an output)."""
    return [] if data is None else [data, data / "graph", data / "data"]


def _retrieved(examples: str, retriever: str, shots: int) -> str | None:
    """The retriever's name for `--examples retrieved`, None for `fixed`; one-line errors otherwise."""
    from ..planners.retrieval import RETRIEVERS

    if examples == "fixed":
        return None
    if examples != "retrieved":
        raise SituatedError(f"--examples must be fixed or retrieved, not {examples!r}")
    if retriever not in RETRIEVERS:
        raise SituatedError(f"--retriever must be one of {', '.join(RETRIEVERS)}, not {retriever!r}")
    if shots < 1:
        raise SituatedError(f"--examples retrieved needs --shots >= 1, got {shots}")
    return retriever


def _agent_label(agent: str, seed: int, model: str | None) -> str:
    if agent == "random":
        return f"random-seed{seed}"
    if agent in PROMPTED and model:
        return f"{agent}-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in model)
    return agent


def _text(path: Path | None) -> str | None:
    return str(path.resolve()) if path is not None else None


def _env(graph: StreetGraph, agent: str, visibility: VisibilitySource) -> StreetEnv:
    # The gold agent replays routes of any length; every other agent gets VELMA's step limit.
    return StreetEnv(graph, visibility, max_steps=None if agent == "gold" else MAX_STEPS)


@navigate_app.callback()
def navigate(
    ctx: typer.Context,
    data: DataOpt = None,
    split: SplitOpt = "dev",
    agent: AgentOpt = "forward",
    model: Annotated[str | None, typer.Option("--model", help="Model URI for --agent llm.")] = None,
    lora: Annotated[Path | None, typer.Option("--lora", help=(
        "A LoRA adapter (llama.cpp GGUF, from `navigate train`) applied to the embedded --model; the finetuned "
        "agent runs with --agent llm --shots 0."))] = None,
    landmarks: Annotated[
        str, typer.Option("--landmarks", help="Landmark visibility: none (intersections only) or file.")
    ] = "none",
    landmarks_file: Annotated[
        Path | None, typer.Option("--landmarks-file", help="Visibility JSON (situated-visibility/1).")
    ] = None,
    panoramas: Annotated[
        Path | None, typer.Option("--panoramas", help="--landmarks clip: directory of <panoid>.jpg panoramas.")
    ] = None,
    clip_stats: Annotated[
        Path | None, typer.Option("--clip-stats", help="--landmarks clip: per-landmark statistics (JSON).")
    ] = None,
    clip_weights: Annotated[
        Path | None, typer.Option("--clip-weights", help="--landmarks clip: OpenCLIP weights file.")
    ] = None,
    clip_model: Annotated[str, typer.Option("--clip-model", help="--landmarks clip: model name.")] = "ViT-B-32",
    extract_landmarks: Annotated[
        bool, typer.Option("--extract-landmarks", help="List each instruction's landmarks with --model.")
    ] = False,
    examples_data: Annotated[
        Path | None, typer.Option("--examples-data", help="--agent llm: dataset of training-area example routes.")
    ] = None,
    examples: Annotated[str | None, typer.Option("--examples", help=(
        "--agent llm/route: fixed (--shots routes drawn by --seed, VELMA's set-up; the llm agent's default) or "
        "retrieved (the --shots training routes whose directions are nearest to each episode's, by --retriever; "
        "the route agent's default)."))] = None,
    shots: Annotated[int | None, typer.Option("--shots", help=(
        f"--agent llm/route: solved examples in the prompt (default: llm 2, route {ROUTE_SHOTS})."))] = None,
    retriever: Annotated[str, typer.Option(
        "--retriever", help="--examples retrieved: minilm (sentence embeddings) or bm25.")] = "minilm",
    stop_threshold: Annotated[float | None, typer.Option("--stop-threshold", help=(
        "--agent llm: stop when the model's probability of 'stop' among the actions reaches this; otherwise "
        "the likeliest other action (embedded models only)."))] = None,
    count_intersections: Annotated[bool, typer.Option("--count-intersections", help=(
        "--agent llm: the observations say which intersection this is since the last turn or the start."))] = False,
    turn_words: Annotated[bool, typer.Option("--turn-words", help=(
        "--agent route: when the directions name their turns ('take a left', 'right onto ...'), the grammar "
        "fixes those turns in order; the model writes where each happens and where to stop."))] = False,
    word_counts: Annotated[bool, typer.Option("--word-counts", help=(
        "--agent route: as --turn-words, and the grammar also fixes where each turn happens, counted from the "
        "lights the directions pass (as --agent words reads them); the model writes only the stop line."))] = False,
    cassette: Annotated[
        Path | None, typer.Option("--cassette", help="Record/replay LLM calls in this JSON-lines file.")
    ] = None,
    cassette_mode: Annotated[
        str, typer.Option("--cassette-mode", help="replay, record or auto (with --cassette).")
    ] = "auto",
    threads: Annotated[
        int | None, typer.Option("--threads", help="llama.cpp threads (1 is fastest on a busy machine).")
    ] = None,
    base_url: BaseUrlOpt = None,
    dataset: DatasetOpt = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N instances.")] = None,
    seed: SeedOpt = 0,
    out: Annotated[
        Path | None, typer.Option("--out", help="Directory for resumable per-episode results (JSON lines).")
    ] = None,
    executor: ExecutorOpt = "local",
    jobs: JobsOpt = 1,
    ray_address: RayAddressOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="End with one JSON line of the metrics.")] = False,
) -> None:
    """Run an agent over a split and report TC, SPD and KPA."""
    if ctx.invoked_subcommand is not None:
        return
    _check_choice(agent, AGENTS, "--agent")
    if limit is not None and limit < 1:
        raise SituatedError("--limit must be at least 1")
    prompted = agent in PROMPTED
    if not prompted and (examples is not None or shots is not None):
        raise SituatedError("--examples and --shots are for --agent llm or route")
    if agent != "llm" and (stop_threshold is not None or count_intersections):
        raise SituatedError("--stop-threshold and --count-intersections are for --agent llm")
    if agent != "route" and (turn_words or word_counts):
        raise SituatedError("--turn-words and --word-counts are for --agent route")
    shots = shots if shots is not None else ROUTE_SHOTS if agent == "route" else 2
    check_counts(("--threads", threads, 1), ("--jobs", jobs, 1), ("--shots", shots, 1 if agent == "route" else 0))
    examples = examples or ("retrieved" if agent == "route" else "fixed")
    retrieved = _retrieved(examples, retriever, shots)
    if stop_threshold is not None and not 0.0 < stop_threshold <= 1.0:
        raise SituatedError(f"--stop-threshold must lie in (0, 1], got {stop_threshold}")
    loaded = _load(data, split, dataset)
    assert data is not None
    seen = VisibilitySpec(landmarks, file=_text(landmarks_file), panoramas=_text(panoramas), stats=_text(clip_stats),
                          weights=_text(clip_weights), model=clip_model)
    instances = loaded.instances[:limit] if limit is not None else loaded.instances
    if (prompted or extract_landmarks) and not model:
        who = f"the {agent} agent needs" if prompted else "--extract-landmarks needs"
        raise SituatedError(f"{who} a model: --model URI (e.g. llamacpp:qwen2.5-coder-1.5b)")
    if model and (prompted or extract_landmarks):
        check_cassette(cassette, cassette_mode, input_files(*_data_files(data), landmarks_file, examples_data))
    if extract_landmarks and model:
        from ..planners.landmarks import LandmarkExtractor, with_landmarks

        llm = open_model(model, cassette=cassette, cassette_mode=cassette_mode, threads=threads, base_url=base_url)
        with Console(stderr=True).status("extracting landmarks"):
            instances = tuple(with_landmarks(instances, LandmarkExtractor(llm)))
    if lora is not None and (not (model or "").startswith("llamacpp:") or cassette or executor == "batched"):
        raise SituatedError("--lora needs an embedded --model llamacpp:..., without --cassette or --executor batched")
    if lora is not None and not lora.is_file():
        raise SituatedError(f"--lora {lora}: no such adapter file")
    spec = None
    if prompted and model:
        runner, spec = evaluation_model(model, executor=executor, jobs=jobs, ray_address=ray_address,
                                        cassette=cassette, cassette_mode=cassette_mode, threads=threads,
                                        base_url=base_url, lora=lora)
    else:
        runner, _ = choose_executor(executor, jobs, ray_address=ray_address)
    solved: tuple = ()
    if prompted:
        with Console(stderr=True).status("replaying example routes"):
            examples_source = load_split(examples_data or examples_dir(data, loaded.name), "dev")
            if agent == "route":
                solved = route_examples(examples_source)
                if not retrieved:  # fixed: --shots routes drawn by --seed
                    solved = tuple(sorted(random.Random(seed).sample(solved, min(shots, len(solved))),
                                          key=lambda e: e.id))
            else:
                solved = velma_examples(examples_source, None if retrieved else shots, seed=seed,
                                        count_intersections=count_intersections)
    job = NavigationJob(agent, str(data.resolve()), dataset=loaded.name, seed=seed, model=spec, examples=solved,
                        visibility=seen, max_steps=None if agent == "gold" else MAX_STEPS, graph=loaded.graph,
                        shots=shots if retrieved else None, retriever=retrieved, stop_threshold=stop_threshold,
                        count_intersections=count_intersections, turn_words=turn_words, word_counts=word_counts)
    store = None
    if out is not None:
        label = _agent_label(agent, seed, model) + (f"-lora_{lora.resolve().parent.name}" if lora else "") + (
            "-extracted" if extract_landmarks else "") + "".join((
            f"-shots{shots}" if shots != 2 else "", f"-{retrieved}" if retrieved else "",
            f"-stop{stop_threshold:g}" if stop_threshold is not None else "",
            "-counted" if count_intersections else "", "-turnwords" if turn_words and not word_counts else "",
            "-wordcounts" if word_counts else ""))
        store = out / f"{loaded.name}_{split}_{label}"
    config = navigation_config(
        loaded.instances, dataset=loaded.name, split=split, data=str(data.resolve()) if data else None, agent=agent,
        model=model if prompted or extract_landmarks else None, base_url=base_url, seed=seed,
        **({"lora": f"{lora.resolve()}#sha256:{hashlib.sha256(lora.read_bytes()).hexdigest()[:16]}"} if lora else {}),
        landmarks=landmarks, landmarks_file=str(landmarks_file) if landmarks_file else None,
        examples_data=str(examples_data) if examples_data else None, extract_landmarks=extract_landmarks,
        **{name: value for name, value in (("shots", shots if shots != 2 else None), ("retriever", retrieved),
                                           ("stop_threshold", stop_threshold),
                                           ("count_intersections", count_intersections or None),
                                           ("turn_words", turn_words or None),
                                           ("word_counts", word_counts or None))
           if value is not None})
    with episode_progress(Console(stderr=True), f"{loaded.name} {split} · {agent}", quiet=as_json) as progress:
        episodes = evaluate_navigation_job(job, instances, runner, out=store, config=config, on_progress=progress)
    summary = navigation_summary(episodes)
    console = Console()
    console.print(navigation_table(summary, f"{loaded.name} {split} — {agent} agent ({summary['n']} episodes)"))
    if store is not None:
        console.print(f"episodes: {store / 'episodes.jsonl'}")
    if as_json:
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in summary.items()}))


def _find(loaded: NavDataset, instance_id: str) -> NavInstance:
    for instance in loaded.instances:
        if instance.id == instance_id:
            return instance
    raise SituatedError(f"no instance with id {instance_id} in {loaded.name} {loaded.split}")


@navigate_app.command("show")
def show(
    instance_id: Annotated[str, typer.Argument(help="Instance id (Map2seq id / Touchdown route_id).")],
    out: Annotated[Path, typer.Option("--out", help="Image to write (PNG, SVG or PDF; no suffix: PNG).")],
    data: DataOpt = None,
    split: SplitOpt = "dev",
    agent: AgentOpt = "forward",
    dataset: DatasetOpt = None,
    seed: SeedOpt = 0,
    force: ForceOpt = False,
) -> None:
    """Draw the gold route and an agent's path over the street graph."""
    _check_choice(agent, AGENTS, "--agent")
    loaded = _load(data, split, dataset)
    instance = _find(loaded, instance_id)
    out = out if out.suffix else out.with_name(out.name + ".png")  # as draw_route names it
    check_outputs([out], input_files(*_data_files(data)), force)
    if agent in PROMPTED:
        raise SituatedError("navigate show draws the gold, forward or random agent (an LLM episode: use --out "
                            "with navigate and a report)")
    nav_agent = make_agent(agent, graph=loaded.graph, seed=seed)
    episode = navigation_episode(_env(loaded.graph, agent, NoVisibility()), nav_agent, instance)
    m = episode.metrics
    title = (f"{loaded.name} {split} #{instance.id} — {agent}: TC {'yes' if m['tc'] else 'no'}, "
             f"SPD {m['spd']:.0f}, KPA {100 * m['kpa']:.0f}%")
    written = draw_route(loaded.graph, instance.route, episode.details["pano_path"], title, out)
    Console().print(f"{title}\nwrote {written}")


@navigate_app.command("landmarks")
def landmarks_command(
    data: DataOpt = None,
    split: SplitOpt = "dev",
    model: Annotated[str, typer.Option("--model", help="Model URI.")] = "llamacpp:qwen2.5-coder-1.5b",
    reference: Annotated[
        Path | None, typer.Option("--reference", help="Landmarks file to compare with (default: the release's).")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N instances.")] = None,
    cassette: Annotated[Path | None, typer.Option("--cassette", help="Record/replay LLM calls here.")] = None,
    cassette_mode: Annotated[str, typer.Option("--cassette-mode", help="replay, record or auto.")] = "auto",
    threads: Annotated[int | None, typer.Option("--threads", help="llama.cpp threads.")] = None,
    base_url: BaseUrlOpt = None,
    dataset: DatasetOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="End with one JSON line of the scores.")] = False,
) -> None:
    """Score the LLM landmark extractor against a reference landmarks file (precision / recall / F1)."""
    from ..datasets.map2seq import default_landmarks_file, load_landmarks
    from ..planners.landmarks import LandmarkExtractor, score_extractions

    if limit is not None and limit < 1:
        raise SituatedError("--limit must be at least 1")
    check_counts(("--threads", threads, 1))
    loaded = _load(data, split, dataset)
    source = reference or (default_landmarks_file(data, loaded.name) if data is not None else None)
    if source is None:
        raise SituatedError("no reference landmarks file beside --data; give --reference F")
    gold = load_landmarks(source)
    instances = [i for i in loaded.instances if i.id in gold][:limit]
    if not instances:
        raise SituatedError(f"no instance of {loaded.name} {split} has landmarks in {source}")
    check_cassette(cassette, cassette_mode, input_files(*_data_files(data), source))
    extractor = LandmarkExtractor(open_model(
        model, cassette=cassette, cassette_mode=cassette_mode, threads=threads, base_url=base_url))
    pairs = []
    with Progress(
        TextColumn("extracting landmarks"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=Console(stderr=True), transient=True,
    ) as bar:
        task = bar.add_task("instructions", total=len(instances))
        for instance in instances:
            pairs.append((extractor(instance.instruction), gold[instance.id]))
            bar.advance(task)
    score = score_extractions(pairs)
    table = Table(title=f"landmark extraction, {model} vs {source.name} ({score.n} instructions)")
    for column in ("precision %", "recall %", "F1 %", "predicted", "reference"):
        table.add_column(column, justify="right")
    table.add_row(f"{score.precision:.1f}", f"{score.recall:.1f}", f"{score.f1:.1f}",
                  str(score.predicted), str(score.reference))
    Console().print(table)
    if as_json:
        print(json.dumps(score.as_dict()))

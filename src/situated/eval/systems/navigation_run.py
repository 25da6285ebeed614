"""`situated navigate` as a library call: the settings of a run over a split, the rules their combinations obey,
and `prepare_navigation(settings, models) -> NavigationRun` (data loaded, examples replayed, job, resume key and
results store chosen); `NavigationRun.run` then evaluates."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...datasets.map2seq import NavDataset, examples_dir, load_split
from ...envs.streets.env import DATASETS, MAX_STEPS, NavInstance, StreetEnv
from ...envs.streets.visibility import NoVisibility
from ...errors import SituatedError
from ...planners.nav_baselines import AGENTS, make_agent
from ..episode import Episode
from ..episode_runner import Progress
from ..executors import Executor
from ..model_source import ModelSource
from ..settings import check_choice, check_counts, check_limit
from .navigation_episodes import (
    NavigationJob,
    VisibilitySpec,
    evaluate_navigation_job,
    navigation_config,
    navigation_episode,
    route_examples,
    velma_examples,
)

PROMPTED = ("llm", "route")
"""Agents that prompt a model with solved examples."""
ROUTE_SHOTS = 5
"""Example routes in the route agent's prompt (chosen on training-area routes of map2seq_seen's test file)."""
VELMA_SHOTS = 2
SPLITS = ("dev", "test", "train")


@dataclass(frozen=True)
class NavigationSettings:
    """The options of `situated navigate` (see its help) that decide what runs."""

    data: Path | None = None
    split: str = "dev"
    agent: str = "forward"
    model: str | None = None
    lora: Path | None = None
    landmarks: str = "none"
    landmarks_file: Path | None = None
    panoramas: Path | None = None
    clip_stats: Path | None = None
    clip_weights: Path | None = None
    clip_model: str = "ViT-B-32"
    extract_landmarks: bool = False
    examples_data: Path | None = None
    examples: str | None = None
    shots: int | None = None
    retriever: str = "minilm"
    stop_threshold: float | None = None
    count_intersections: bool = False
    turn_words: bool = False
    word_counts: bool = False
    base_url: str | None = None
    dataset: str | None = None
    limit: int | None = None
    seed: int = 0
    out: Path | None = None

    @property
    def prompted(self) -> bool:
        return self.agent in PROMPTED


def data_files(data: Path | None) -> list[Path]:
    """The folders whose files a command over `data` reads (never to be overwritten by an output)."""
    return [] if data is None else [data, data / "graph", data / "data"]


def load_dataset(data: Path | None, split: str, dataset: str | None) -> NavDataset:
    """The split of the dataset directory `data`; one-line errors for a missing directory or a bad choice."""
    if data is None:
        raise SituatedError("--data DIR is required (a dataset directory with graph/ and data/<split>.json)")
    check_choice(split, SPLITS, "--split")
    if dataset is not None:
        check_choice(dataset, DATASETS, "--dataset")
    return load_split(data, split, dataset)


def _retrieved(examples: str, retriever: str, shots: int) -> str | None:
    """The retriever's name for `--examples retrieved`, None for `fixed`; one-line errors otherwise."""
    from ...planners.retrieval import RETRIEVERS

    if examples == "fixed":
        return None
    if examples != "retrieved":
        raise SituatedError(f"--examples must be fixed or retrieved, not {examples!r}")
    check_choice(retriever, RETRIEVERS, "--retriever")
    if shots < 1:
        raise SituatedError(f"--examples retrieved needs --shots >= 1, got {shots}")
    return retriever


def checked(s: NavigationSettings) -> NavigationSettings:
    """The settings with their defaults filled in (shots, examples; `retriever` becomes "" when the examples are
    fixed), after the rules on which options go together; SituatedError naming the option otherwise."""
    check_choice(s.agent, AGENTS, "--agent")
    if s.limit is not None and s.limit < 1:
        raise SituatedError("--limit must be at least 1")
    if not s.prompted and (s.examples is not None or s.shots is not None):
        raise SituatedError("--examples and --shots are for --agent llm or route")
    if s.agent != "llm" and (s.stop_threshold is not None or s.count_intersections):
        raise SituatedError("--stop-threshold and --count-intersections are for --agent llm")
    if s.agent != "route" and (s.turn_words or s.word_counts):
        raise SituatedError("--turn-words and --word-counts are for --agent route")
    shots = s.shots if s.shots is not None else ROUTE_SHOTS if s.agent == "route" else VELMA_SHOTS
    check_counts(("--shots", shots, 1 if s.agent == "route" else 0))
    examples = s.examples or ("retrieved" if s.agent == "route" else "fixed")
    retrieved = _retrieved(examples, s.retriever, shots)
    if s.stop_threshold is not None and not 0.0 < s.stop_threshold <= 1.0:
        raise SituatedError(f"--stop-threshold must lie in (0, 1], got {s.stop_threshold}")
    if s.lora is not None and not s.prompted:
        raise SituatedError("--lora is for --agent llm or route (it adapts their --model)")
    if s.lora is not None and not s.lora.is_file():
        raise SituatedError(f"--lora {s.lora}: no such adapter file")
    return replace(s, shots=shots, examples=examples, retriever=retrieved or "")


def run_label(s: NavigationSettings) -> str:
    """The store's directory name under `--out`: the agent (and model) and every setting that is not the
    default, e.g. `llm-llamacpp_qwen2.5-coder-1.5b-shots3-minilm`."""
    if s.agent == "random":
        label = f"random-seed{s.seed}"
    elif s.prompted and s.model:
        label = f"{s.agent}-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in s.model)
    else:
        label = s.agent
    label += f"-lora_{s.lora.resolve().parent.name}" if s.lora else ""
    return label + ("-extracted" if s.extract_landmarks else "") + "".join((
        f"-shots{s.shots}" if s.shots != VELMA_SHOTS else "", f"-{s.retriever}" if s.retriever else "",
        f"-stop{s.stop_threshold:g}" if s.stop_threshold is not None else "",
        "-counted" if s.count_intersections else "", "-turnwords" if s.turn_words and not s.word_counts else "",
        "-wordcounts" if s.word_counts else ""))


def resume_key(s: NavigationSettings, loaded: NavDataset) -> dict[str, object]:
    """The store's configuration: every setting that changes results; levers only when on."""
    assert s.data is not None
    levers = (("shots", s.shots if s.shots != VELMA_SHOTS else None), ("retriever", s.retriever or None),
              ("stop_threshold", s.stop_threshold), ("count_intersections", s.count_intersections or None),
              ("turn_words", s.turn_words or None), ("word_counts", s.word_counts or None))
    return navigation_config(
        loaded.instances, dataset=loaded.name, split=s.split, data=str(s.data.resolve()), agent=s.agent,
        model=s.model if s.prompted or s.extract_landmarks else None, base_url=s.base_url, seed=s.seed,
        landmarks=s.landmarks, landmarks_file=str(s.landmarks_file) if s.landmarks_file else None,
        examples_data=str(s.examples_data) if s.examples_data else None, extract_landmarks=s.extract_landmarks,
        **({"lora": adapter_key(s.lora)} if s.lora else {}),
        **{name: value for name, value in levers if value is not None})


def adapter_key(lora: Path) -> str:
    """A LoRA adapter in the resume key: its path and the start of its bytes' SHA-256 (a retrained adapter at the
    same path is another configuration)."""
    return f"{lora.resolve()}#sha256:{hashlib.sha256(lora.read_bytes()).hexdigest()[:16]}"


def solved_examples(s: NavigationSettings, loaded: NavDataset) -> tuple:
    """The prompted agents' solved examples, replayed from training-area routes: the route agent's example routes
    (all, for retrieval, or `shots` drawn by the seed), VELMA's fixed or retrievable trajectories."""
    assert s.data is not None and s.shots is not None
    source = load_split(s.examples_data or examples_dir(s.data, loaded.name), "dev")
    if s.agent != "route":
        return velma_examples(source, None if s.retriever else s.shots, seed=s.seed,
                              count_intersections=s.count_intersections)
    routes = route_examples(source)
    if s.retriever:
        return routes
    return tuple(sorted(random.Random(s.seed).sample(routes, min(s.shots, len(routes))), key=lambda e: e.id))


def _text(path: Path | None) -> str | None:
    return str(path.resolve()) if path is not None else None


@dataclass(frozen=True)
class NavigationRun:
    """A prepared `situated navigate` run: what to run, on which instances, where its store is."""

    settings: NavigationSettings
    dataset: NavDataset
    instances: tuple[NavInstance, ...]
    job: NavigationJob
    executor: Executor
    config: dict[str, object]
    store: Path | None

    @property
    def title(self) -> str:
        return f"{self.dataset.name} {self.settings.split} · {self.settings.agent}"

    def run(self, on_progress: Progress | None = None) -> list[Episode]:
        return evaluate_navigation_job(self.job, self.instances, self.executor, out=self.store, config=self.config,
                                       on_progress=on_progress)


def prepare_navigation(settings: NavigationSettings, models: ModelSource) -> NavigationRun:
    """Check the settings, load the split, extract landmarks and open the model when asked, replay the solved
    examples, and choose the job, resume key and store (`--out`/<dataset>_<split>_<label>)."""
    s = checked(settings)
    loaded = load_dataset(s.data, s.split, s.dataset)
    assert s.data is not None
    seen = VisibilitySpec(s.landmarks, file=_text(s.landmarks_file), panoramas=_text(s.panoramas),
                          stats=_text(s.clip_stats), weights=_text(s.clip_weights), model=s.clip_model)
    instances = tuple(loaded.instances[:s.limit] if s.limit is not None else loaded.instances)
    if (s.prompted or s.extract_landmarks) and not s.model:
        who = f"the {s.agent} agent needs" if s.prompted else "--extract-landmarks needs"
        raise SituatedError(f"{who} a model: --model URI (e.g. llamacpp:qwen2.5-coder-1.5b)")
    if s.model and (s.prompted or s.extract_landmarks):
        models.check_cassette([*data_files(s.data), *(p for p in (s.landmarks_file, s.examples_data) if p)])
    if s.extract_landmarks and s.model:
        from ...planners.landmarks import LandmarkExtractor, with_landmarks

        instances = tuple(with_landmarks(instances, LandmarkExtractor(models.open(s.model))))
    spec = None
    if s.prompted and s.model:
        executor, spec = models.for_episodes(s.model, lora=s.lora)
    else:
        executor = models.without_model()
    job = NavigationJob(s.agent, str(s.data.resolve()), dataset=loaded.name, seed=s.seed, model=spec,
                        examples=solved_examples(s, loaded) if s.prompted else (), visibility=seen,
                        max_steps=None if s.agent == "gold" else MAX_STEPS, graph=loaded.graph,
                        shots=s.shots if s.retriever else None, retriever=s.retriever or None,
                        stop_threshold=s.stop_threshold, count_intersections=s.count_intersections,
                        turn_words=s.turn_words, word_counts=s.word_counts)
    store = s.out / f"{loaded.name}_{s.split}_{run_label(s)}" if s.out is not None else None
    return NavigationRun(s, loaded, instances, job, executor, resume_key(s, loaded), store)


def find_instance(loaded: NavDataset, instance_id: str) -> NavInstance:
    for instance in loaded.instances:
        if instance.id == instance_id:
            return instance
    raise SituatedError(f"no instance with id {instance_id} in {loaded.name} {loaded.split}")


def drawn_episode(loaded: NavDataset, instance: NavInstance, agent: str, seed: int) -> Episode:
    """One episode of a model-free agent (gold, forward, random), for `situated navigate show`."""
    check_choice(agent, AGENTS, "--agent")
    if agent in PROMPTED:
        raise SituatedError("navigate show draws the gold, forward or random agent (an LLM episode: use --out "
                            "with navigate and a report)")
    env = StreetEnv(loaded.graph, NoVisibility(), max_steps=None if agent == "gold" else MAX_STEPS)
    return navigation_episode(env, make_agent(agent, graph=loaded.graph, seed=seed), instance)


@dataclass(frozen=True)
class LandmarkScoring:
    """`situated navigate landmarks`: extracted landmarks against a reference file, instruction by instruction."""

    reference: Path
    instances: tuple[NavInstance, ...]
    gold: dict

    def score(self, llm: Any, on_each: Callable[[], None] = lambda: None) -> Any:
        """Precision / recall / F1 of `llm`'s extractions (`planners.landmarks.score_extractions`)."""
        from ...planners.landmarks import LandmarkExtractor, score_extractions

        extractor = LandmarkExtractor(llm)
        pairs = []
        for instance in self.instances:
            pairs.append((extractor(instance.instruction), self.gold[instance.id]))
            on_each()
        return score_extractions(pairs)


def landmark_scoring(data: Path | None, split: str, dataset: str | None, reference: Path | None,
                     limit: int | None) -> LandmarkScoring:
    """The instances with reference landmarks (the release's file beside `data` unless `reference` is given)."""
    from ...datasets.map2seq import default_landmarks_file, load_landmarks

    check_limit(limit, "--limit must be at least 1")
    loaded = load_dataset(data, split, dataset)
    source = reference or (default_landmarks_file(data, loaded.name) if data is not None else None)
    if source is None:
        raise SituatedError("no reference landmarks file beside --data; give --reference F")
    gold = load_landmarks(source)
    instances = tuple([i for i in loaded.instances if i.id in gold][:limit])
    if not instances:
        raise SituatedError(f"no instance of {loaded.name} {split} has landmarks in {source}")
    return LandmarkScoring(source, instances, gold)

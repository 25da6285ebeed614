"""`situated eval progprompt` as a library call: the settings of a run over a split, the rules on which go
together, the example choice, the variant name and resume key, and `prepare_household(settings, models) ->
HouseholdRun`, whose `run` evaluates the split."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import SituatedError
from ...planners.assertion_check import ASSERT_CHECKS
from ..episode import Episode
from ..episode_runner import Progress
from ..executors import Executor
from ..model_source import ModelSource
from ..settings import check_choice, check_counts, check_limit, levers, model_label
from ..store import fingerprint
from .household_episodes import HouseholdJob, evaluate_household_job, household_config
from .household_sampling import check_temperature
from .scene_plan import examples_path

APARTMENT = "apartment"
"""`--split apartment`: ProgPrompt's 10 test_unseen tasks in the project's apartment (datasets.progprompt_apartment)."""
DEFAULT_K = {"fixed": 3, "retrieved": 5}
"""Example plans per prompt when --k is not given: the paper's 3 fixed ones, or the 5 nearest (docs/progprompt.md:
SR 0.60 vs 0.50 on env1 and 0.70 vs 0.40 on env2 with the 1.5B model, fewer tokens)."""


@dataclass(frozen=True)
class HouseholdSettings:
    """The options of `situated eval progprompt` (see its help) that decide what runs."""

    data: Path
    split: str
    initial_graph: Path | None = None
    model: str = "llamacpp:qwen2.5-coder-1.5b"
    base_url: str | None = None
    runs: int = 1
    limit: int | None = None
    ablation: str = "full"
    examples: str | None = None
    k: int | None = None
    retriever: str = "minilm"
    goals: bool = False
    plan_tokens: int | None = None
    examples_file: Path | None = None
    assert_check: str = "symbolic"
    replan: int = 0
    repairs: int = 5
    no_grammar: bool = False
    langprompt: bool = False
    out: Path | None = None
    seed: int = 0
    temperature: float = 0.0
    scene_examples: bool | None = None
    """Examples naming the fewest objects the scene lacks first; None: with retrieved examples only, so `--examples
    fixed` stays the paper's set-up (docs/progprompt.md: on the development set as good as without and cheaper)."""
    preconditions: bool = False
    """A failing call's missing steps searched for before the model rewrites it (`--preconditions`)."""
    keep_steps: bool = False
    """That search only where the model's rewrite would give a task step up (`--keep-steps`)."""
    room_walks: bool = True
    """A walk to the room written before each move into another room (`--room-walks`; the default since the
    development set's paired runs, docs/progprompt.md "Seventh turn")."""
    open_first: bool = True
    """The precondition search only for calls that fail for want of something opened (`--open-first`; the
    default since the same runs)."""
    skip_done: bool = False
    """A call whose effect already holds on the private copy is dropped, not sent back to the model
    (`--skip-done`)."""


def example_choice(examples: str | None, k: int | None, retriever: str, *,
                   langprompt: bool = False) -> tuple[int, str | None]:
    """(number of example plans, retriever name or None) from `--examples fixed|retrieved|N`, `--k`, `--retriever`.

    Default: retrieved (k 5) for ProgPrompt; fixed (k 3, the paper's) for the LangPrompt baseline."""
    from ...planners.retrieval import RETRIEVERS

    examples = examples if examples is not None else "fixed" if langprompt else "retrieved"
    if examples.isdigit():
        return int(examples), None
    if examples not in DEFAULT_K:
        raise SituatedError(f"--examples must be fixed, retrieved or a number, not {examples!r}")
    k = DEFAULT_K[examples] if k is None else k
    if examples == "fixed":
        return k, None
    check_choice(retriever, RETRIEVERS, "--retriever")
    if k < 1:
        raise SituatedError(f"--examples retrieved needs --k >= 1, got {k}")
    return k, retriever


def checked(s: HouseholdSettings) -> tuple[int, str | None]:
    """The rules on the options; (example plans per prompt, retriever or None)."""
    check_choice(s.assert_check, ASSERT_CHECKS, "--assert-check")
    if s.langprompt and s.replan:
        raise SituatedError("--replan needs ProgPrompt (LangPrompt plans are not programs)")
    check_limit(s.limit)
    check_temperature(s.temperature)
    k, retrieved = example_choice(s.examples, s.k, s.retriever, langprompt=s.langprompt)
    check_counts(("--runs", s.runs, 1), ("--k", k, 0), ("--replan", s.replan, 0), ("--repairs", s.repairs, 0),
                 ("--plan-tokens", s.plan_tokens, 1))
    if s.goals and s.langprompt:
        raise SituatedError("--goals needs ProgPrompt (LangPrompt plans are not programs)")
    if s.goals and s.repairs == 0:
        raise SituatedError("--goals needs grounded decoding (--repairs >= 1): stated goals are checked on its copy")
    return k, retrieved


def scene_first(s: HouseholdSettings, retrieved: str | None) -> bool:
    """Whether examples are chosen for the scene first: `--scene-examples`/`--any-examples`, else with retrieved
    examples (the default) and not with fixed ones (the paper's)."""
    wanted = s.scene_examples if s.scene_examples is not None else retrieved is not None
    return wanted and not s.langprompt


def variant_name(s: HouseholdSettings, repairs: int, k: int, retrieved: str | None) -> str:
    """"progprompt-full-grounded5-minilm5": the planner, ablation and every lever that is on."""
    if s.langprompt:
        return "langprompt"
    return (f"progprompt-{s.ablation}{'-nogrammar' if s.no_grammar else ''}{f'-grounded{repairs}' if repairs else ''}"
            f"{f'-{retrieved}{k}' if retrieved else ''}{'-goals' if s.goals else ''}"
            f"{'-scene' if scene_first(s, retrieved) else ''}{'-pre' if s.preconditions and repairs else ''}"
            f"{'-keep' if s.keep_steps and repairs else ''}{'-rooms' if s.room_walks and repairs else ''}"
            f"{'-open' if s.open_first and repairs else ''}{'-done' if s.skip_done and repairs else ''}"
            f"{f'-t{s.temperature:g}' if s.temperature else ''}")


@dataclass(frozen=True)
class HouseholdRun:
    """A prepared `situated eval progprompt` run."""

    settings: HouseholdSettings
    variant: str
    tasks: tuple
    job: HouseholdJob
    executor: Executor
    config: dict[str, Any]
    out: Path

    def run(self, on_progress: Progress | None = None) -> list[Episode]:
        return evaluate_household_job(self.tasks, self.job, self.executor, runs=self.settings.runs, out=self.out,
                                      config=self.config, on_progress=on_progress)

    def summary(self, episodes: list[Episode]) -> dict[str, Any]:
        """The last JSON line of `situated eval progprompt --json`."""
        from .household import household_summary

        return {**household_summary(episodes), "split": self.settings.split, "model": self.settings.model,
                "variant": self.variant, "out": str(self.out)}


def prepare_household(s: HouseholdSettings, models: ModelSource) -> HouseholdRun:
    """Check the settings, load the split and the example plans, choose the variant, resume key and store
    (`--out` or runs/<split>-<variant>-<model>), then open the model's executor."""
    from ...datasets.progprompt import load_example_plans, load_split
    from ...datasets.progprompt_apartment import load_apartment_tasks

    k, retrieved = checked(s)
    repairs = 0 if s.langprompt else s.repairs  # LangPrompt is the paper's open-loop baseline
    scene = scene_first(s, retrieved)
    if s.split == APARTMENT:  # environment 0's test tasks in the project's apartment (reporting only)
        if s.initial_graph is not None:
            raise SituatedError(f"--split {APARTMENT} has its own scene; --initial-graph does not apply")
        all_tasks = load_apartment_tasks()
    else:
        all_tasks = load_split(s.data, s.split, initial_graph=s.initial_graph)
    tasks = tuple(all_tasks[:s.limit] if s.limit is not None else all_tasks)
    plans_path = examples_path(s.examples_file, s.data)
    plans = load_example_plans(plans_path)
    variant = variant_name(s, repairs, k, retrieved)
    config = household_config(
        all_tasks, model=s.model, base_url=s.base_url, planner="langprompt" if s.langprompt else "progprompt",
        ablation=s.ablation, examples=k, example_plans=fingerprint(plans), grammar=not s.no_grammar,
        split=s.split, data=str(s.data.resolve()),
        initial_graph=str(s.initial_graph.resolve()) if s.initial_graph else None, repairs=repairs,
        assert_check=s.assert_check,
        **levers(retriever=retrieved, goals=s.goals or None, plan_tokens=s.plan_tokens,
                 temperature=s.temperature or None, scene_examples=scene or None,
                 preconditions=(s.preconditions and repairs > 0) or None,
                 keep_steps=(s.keep_steps and repairs > 0) or None,
                 room_walks=(s.room_walks and repairs > 0) or None,
                 open_first=(s.open_first and repairs > 0) or None,
                 skip_done=(s.skip_done and repairs > 0) or None))
    models.check_cassette([p for p in (s.initial_graph, plans_path) if p is not None]
                          + [s.data / d for d in ("new_env", "final_states", s.split)])
    executor, spec = models.for_episodes(s.model)
    job = HouseholdJob(spec, tuple(plans.items()), n_examples=k, ablation=s.ablation, grammar=not s.no_grammar,
                       langprompt=s.langprompt, repairs=repairs, assert_check=s.assert_check, replan=s.replan,
                       seed=s.seed, retriever=retrieved, goals=s.goals, plan_tokens=s.plan_tokens,
                       temperature=s.temperature, scene_examples=scene,
                       preconditions=s.preconditions and repairs > 0, keep_steps=s.keep_steps and repairs > 0,
                       room_walks=s.room_walks and repairs > 0, open_first=s.open_first and repairs > 0,
                       skip_done=s.skip_done and repairs > 0)
    out = s.out or Path("runs") / f"{s.split}-{variant}-{model_label(s.model)}"
    return HouseholdRun(s, variant, tasks, job, executor, config, out)

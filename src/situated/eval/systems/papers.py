"""Published numbers of the papers `situated` reimplements, with their sources, for reports to compare against.

Household rows (ProgPrompt) use the metric names of household episodes as fractions: success (SR), gcr, exec,
with the standard deviation over runs where the paper gives one. Navigation rows (VELMA) use the units of
`navigation.navigation_summary`: tc and kpa in percent, spd in hops. VELMA's KPA is the faithful variant (the
release code's), so it compares with our `kpa`, not `kpa_corrected`. Tabletop rows (ProgPrompt's real robot)
use the metric names of tabletop episodes as fractions: success (SR), exec, plan_success (Plan SR).

`split` is the key a run is matched on: "env0", "env1", "env2" for ProgPrompt's VirtualHome scenes,
"<dataset>/<split>" (e.g. "map2seq/dev", unseen areas) for VELMA, and "tabletop/no distractors" and
"tabletop/with distractors" for the tabletop (a tabletop run is matched on "tabletop" plus the part of its
episodes), "virtualhome/action_sequencing" for EAI (SR in percent, as published). Each `System`
(`eval.systems.registry`) holds its rows and derives a run's split from its results store's description.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

PROGPROMPT = "ProgPrompt (Singh et al., ICRA 2023)"
PROGPROMPT_SOURCE = ("I. Singh et al., ProgPrompt: Generating Situated Robot Task Plans using Large Language "
                     "Models, ICRA 2023, arXiv:2209.11302")
PROGPROMPT_JOURNAL = "ProgPrompt, journal version (Singh et al., Autonomous Robots 2023)"
PROGPROMPT_JOURNAL_SOURCE = ("I. Singh et al., ProgPrompt: program generation for situated robot task planning "
                             "using large language models, Autonomous Robots 47 (2023)")
VELMA = "VELMA (Schumann et al., AAAI 2024)"
VELMA_SOURCE = ("R. Schumann et al., VELMA: Verbalization Embodiment of LLM Agents for Vision and Language "
                "Navigation in Street View, AAAI 2024, arXiv:2307.06082")
VELMA_RELEASE = "VELMA's released code (measured)"
RELEASE_NOTE = "measured by running VELMA's released code (PROTOCOLS.md §2); the paper prints no such row"


@dataclass(frozen=True)
class PaperResult:
    """One published row: which paper, system and setting, on which split, with which numbers and source."""

    paper: str
    system: str  # "household", "navigation", "tabletop" or "eai", as in run.json
    setting: str  # what was run, in the paper's words
    model: str  # the language model the paper used
    split: str  # see the module docstring
    metrics: Mapping[str, float]
    std: Mapping[str, float] = field(default_factory=dict)
    source: str = ""  # the citation
    table: str = ""  # where in it ("Table I"); empty for numbers measured rather than printed
    tasks: int = 0  # tasks (instances) the number is over; 0 when not stated
    runs: int = 1
    agent: str = ""  # our setting that reproduces this row: a household ablation or planner, a navigation agent,
    # the tabletop planner
    note: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", MappingProxyType(dict(self.metrics)))
        object.__setattr__(self, "std", MappingProxyType(dict(self.std)))


def _pp(setting: str, model: str, split: str, sr: float, exec_: float, gcr: float,
        std: tuple[float, float, float] | None = None, *, agent: str = "", table: str = "Table I",
        journal: bool = False, note: str = "") -> PaperResult:
    stds = {"success": std[0], "exec": std[1], "gcr": std[2]} if std else {}
    return PaperResult(PROGPROMPT_JOURNAL if journal else PROGPROMPT, "household", setting, model, split,
                       {"success": sr, "exec": exec_, "gcr": gcr}, stds,
                       PROGPROMPT_JOURNAL_SOURCE if journal else PROGPROMPT_SOURCE, table, tasks=10, runs=5,
                       agent=agent, note=note)


def _velma(setting: str, model: str, split: str, tc: float, *, kpa: float | None = None, spd: float | None = None,
           table: str = "Table 2", agent: str = "", note: str = "") -> PaperResult:
    metrics = {"tc": tc} | ({"kpa": kpa} if kpa is not None else {}) | ({"spd": spd} if spd is not None else {})
    return PaperResult(VELMA if table else VELMA_RELEASE, "navigation", setting, model, split, metrics,
                       source=VELMA_SOURCE, table=table, tasks=800 if split.endswith("/dev") else 0, agent=agent,
                       note=note or ("" if table else RELEASE_NOTE))


GPT3 = "GPT-3 (text-davinci-002)"
LLAMA = "LLaMA-7B, finetuned (LoRA)"
TABLETOP_NOTE = ("read from the text of §V-C (its Table IV is not in the text we have; the model is the paper's GPT-3 "
                 "backbone, the variant not stated): four tasks, one run each; "
                 "only the sort task failed, without distractors by a gripper failure (its plan right), with two "
                 "distractors by taking a soup can for a bottle; Exec was 1 in every run")

def _tabletop(split: str, sr: float, exec_: float, plan_sr: float) -> PaperResult:
    return PaperResult(PROGPROMPT, "tabletop", "comments, no feedback (Franka Panda arm)", "GPT-3", f"tabletop/{split}",
                       {"success": sr, "exec": exec_, "plan_success": plan_sr}, source=PROGPROMPT_SOURCE,
                       table="§V-C", tasks=4, runs=1, agent="progprompt_tabletop", note=TABLETOP_NOTE)


EAI = "Embodied Agent Interface (Li et al., NeurIPS 2024)"
EAI_SOURCE = ("M. Li et al., Embodied Agent Interface: Benchmarking LLMs for Embodied Decision Making, NeurIPS 2024 "
              "Datasets and Benchmarks, arXiv:2410.07166")
EAI_SPLIT = "virtualhome/action_sequencing"
EAI_NOTE = ("the published leaderboard's SR (eai-eval 1.0.4, names-only answers, 305 scored tasks), as docs/eai.md "
            "quotes it; it gives no ESR beside it here")


def _eai(model: str, sr: float) -> PaperResult:
    return PaperResult(EAI, "eai", "open loop, EAI's prompt", model, EAI_SPLIT, {"success": sr}, source=EAI_SOURCE,
                       tasks=305, agent="open loop", note=EAI_NOTE)


PAPER_RESULTS: tuple[PaperResult, ...] = (
    # ProgPrompt, VirtualHome environment 0: 10 test tasks, mean ± std over 5 runs.
    _pp("Codex, comments + feedback", "Codex", "env0", 0.40, 0.90, 0.72, (0.11, 0.05, 0.09), agent="full"),
    _pp("comments + feedback", GPT3, "env0", 0.34, 0.84, 0.65, (0.08, 0.01, 0.05), agent="full"),
    _pp("no feedback (no assertions)", GPT3, "env0", 0.28, 0.82, 0.56, (0.04, 0.01, 0.02), agent="no-feedback"),
    _pp("no comments", GPT3, "env0", 0.30, 0.65, 0.58, (0.00, 0.01, 0.02), agent="no-comments"),
    _pp("neither comments nor feedback", GPT3, "env0", 0.18, 0.68, 0.42, (0.04, 0.01, 0.02), agent="neither"),
    _pp("LangPrompt baseline", GPT3, "env0", 0.00, 0.36, 0.42, agent="langprompt"),
    _pp("comments + feedback", "GPT-4", "env0", 0.37, 0.87, 0.64, (0.06, 0.01, 0.02), agent="full",
        table="", journal=True, note="the journal version's GPT-4 run on the environment-0 test tasks, as "
        "PROTOCOLS.md §1 quotes it"),
    # ProgPrompt, environments 1 and 2 (GPT-3): 10 tasks each, 5 runs.
    _pp("comments + feedback", GPT3, "env1", 0.56, 0.85, 0.81, agent="full", table="Table III"),
    _pp("comments + feedback", GPT3, "env2", 0.56, 0.85, 0.72, agent="full", table="Table III"),
    # VELMA, unseen areas, development sets (TC %).
    _velma("2-shot prompting", "GPT-4", "touchdown/dev", 10.0, kpa=56.1, agent="llm"),
    _velma("2-shot prompting", "GPT-4", "map2seq/dev", 23.1, kpa=70.1, agent="llm"),
    _velma("2-shot prompting", "GPT-3", "touchdown/dev", 6.8, agent="llm"),
    _velma("2-shot prompting", "GPT-3", "map2seq/dev", 9.2, agent="llm"),
    _velma("VELMA-FT", LLAMA, "touchdown/dev", 23.4),
    _velma("VELMA-FT", LLAMA, "map2seq/dev", 41.3),
    _velma("VELMA-FT", LLAMA, "touchdown/test", 23.5),
    _velma("VELMA-FT", LLAMA, "map2seq/test", 40.0),
    _velma("VELMA-RBL (response-based learning)", LLAMA, "touchdown/dev", 26.0),
    _velma("VELMA-RBL (response-based learning)", LLAMA, "map2seq/dev", 45.3),
    _velma("VELMA-RBL (response-based learning)", LLAMA, "touchdown/test", 26.4),
    _velma("VELMA-RBL (response-based learning)", LLAMA, "map2seq/test", 47.5),
    _velma("finetuned, no image (intersections only)", LLAMA, "touchdown/dev", 15.0, spd=26.7, table="Table 3"),
    _velma("finetuned, no image (intersections only)", LLAMA, "map2seq/dev", 37.8, spd=9.1, table="Table 3"),
    _velma("forward-only baseline", "none", "touchdown/dev", 1.4, spd=42.6, kpa=32.4, table="", agent="forward"),
    _velma("forward-only baseline", "none", "map2seq/dev", 0.8, spd=37.9, kpa=37.2, table="", agent="forward"),
    # ProgPrompt on a real Franka arm (§V-C): four tasks, one run each without and with 1-3 distractors.
    _tabletop("no distractors", 0.75, 1.00, 1.00),
    _tabletop("with distractors", 0.75, 1.00, 0.75),
    # EAI, VirtualHome action sequencing (SR %), eai-eval 1.0.4's names-only answers.
    *(_eai(model, sr) for model, sr in (("GPT-3.5-turbo", 14.7), ("Llama-3-8B", 21.6), ("GPT-4o", 61.6),
                                        ("o1-preview", 71.1))),
)

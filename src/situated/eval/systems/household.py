"""The household system (ProgPrompt on VirtualHome scenes): `situated eval progprompt`, `situated replay`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..bootstrap import bootstrap
from ..episode import Episode
from ..summary import Stat, summarize
from .base import FAILED, RAW, REJECTED, UNMET, System, detail_total
from .household_episodes import HouseholdJob, household_config
from .household_metrics import HOUSEHOLD_METRICS, METRICS
from .papers import PAPER_RESULTS


def _setting(config: Mapping[str, Any]) -> str:
    """The ablation a run reproduces (or "langprompt")."""
    return "langprompt" if config.get("planner") == "langprompt" else str(config.get("ablation") or "full")


def total(episodes: Sequence[Episode], field: str) -> int:
    """The sum of `details[field]` over episodes."""
    return sum(int(e.details.get(field, 0)) for e in episodes)


INTERVAL_KEYS = {"success": "sr_ci", "gcr": "gcr_ci", "exec": "exec_ci"}
"""The summary's 95 % bootstrap intervals over tasks (`eval.bootstrap`), one per headline metric."""


def intervals(episodes: Sequence[Episode], seed: int = 0) -> dict[str, list[float]]:
    """SR / GCR / Exec's 95 % bootstrap intervals over tasks (resampled within runs) as [low, high]."""
    found = bootstrap(episodes, list(INTERVAL_KEYS), seed=seed)
    return {key: [round(found[m].low, 4), round(found[m].high, 4)] for m, key in INTERVAL_KEYS.items()}


def abandoned_per_split(episodes: Sequence[Episode]) -> dict[str, int]:
    """Abandoned steps (task steps traded for an executable rewrite) per split, in the order splits appear."""
    counts: dict[str, int] = {}
    for e in episodes:
        split = str(e.details.get("split", ""))
        counts[split] = counts.get(split, 0) + int(e.details.get("abandoned", 0))
    return counts


def household_summary(episodes: Sequence[Episode]) -> dict[str, Any]:
    """SR / GCR / Exec (mean and std over runs, 95 % bootstrap interval over tasks), precision, counts and cost:
    the last line of `eval`."""
    s = summarize(episodes, HOUSEHOLD_METRICS)

    def r(value: float) -> float:
        return round(value, 4)

    return {"sr": r(s["success"].mean), "sr_std": r(s["success"].std), "gcr": r(s["gcr"].mean),
            "exec": r(s["exec"].mean), "tasks": s.tasks, "runs": s.runs, "gcr_std": r(s["gcr"].std),
            "exec_std": r(s["exec"].std), "precision": r(s["precision"].mean),
            "unknown": total(episodes, "unknown"), "dropped": total(episodes, "dropped"),
            "replans": total(episodes, "replans"), "repairs": total(episodes, "repairs"),
            "abandoned": total(episodes, "abandoned"), "abandoned_per_split": abandoned_per_split(episodes),
            **intervals(episodes), "tokens": sum(e.cost.tokens for e in episodes),
            "model_seconds": round(sum(e.cost.model_seconds for e in episodes), 1)}


def means(episodes: Sequence[Episode]) -> dict[str, Stat]:
    """Household metrics of one run's episodes (mean; std over the one run is 0)."""
    return dict(summarize(episodes, HOUSEHOLD_METRICS).stats)


def replay_summary(split: str, episodes: Sequence[Episode]) -> dict[str, Any]:
    """The last JSON line of `situated replay --json`."""
    s = summarize(episodes, HOUSEHOLD_METRICS)
    return {"split": split, "tasks": s.tasks, "sr": round(s["success"].mean, 4), "gcr": round(s["gcr"].mean, 4),
            "exec": round(s["exec"].mean, 4)}


HOUSEHOLD = System(
    name="household", title="Household", command="situated eval progprompt", metrics=METRICS,
    definitions="SR (success: every goal condition met), GCR and Exec",
    sections=("tasks", "cost", "failures"),
    paper_metrics=("success", "gcr", "exec"),
    papers=tuple(r for r in PAPER_RESULTS if r.system == "household"), fallback_split="env0",
    setting_of=_setting,
    task_panels=("success", "gcr"),
    failure_counts=(("dropped calls", detail_total("dropped")), ("unknown names", detail_total("unknown")),
                    ("replans", detail_total("replans")), ("rejected drafts", detail_total("repairs"))),
    failure_tables=(FAILED, UNMET, REJECTED, RAW),
    config=household_config, job=HouseholdJob, summary=household_summary,
)

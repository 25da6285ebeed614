"""The household system (ProgPrompt on VirtualHome scenes): `situated eval progprompt`, `situated replay`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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


def household_summary(episodes: Sequence[Episode]) -> dict[str, Any]:
    """SR / GCR / Exec (mean and std over runs), precision, counts and cost: the last line of `eval`."""
    s = summarize(episodes, HOUSEHOLD_METRICS)

    def r(value: float) -> float:
        return round(value, 4)

    return {"sr": r(s["success"].mean), "sr_std": r(s["success"].std), "gcr": r(s["gcr"].mean),
            "exec": r(s["exec"].mean), "tasks": s.tasks, "runs": s.runs, "gcr_std": r(s["gcr"].std),
            "exec_std": r(s["exec"].std), "precision": r(s["precision"].mean),
            "unknown": total(episodes, "unknown"), "dropped": total(episodes, "dropped"),
            "replans": total(episodes, "replans"), "repairs": total(episodes, "repairs"),
            "abandoned": total(episodes, "abandoned"),
            "tokens": sum(e.cost.tokens for e in episodes)}


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

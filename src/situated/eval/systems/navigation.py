"""The navigation system (VELMA on Touchdown / Map2seq street graphs): `situated navigate`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import System
from .navigation_episodes import NavigationJob, navigation_config, navigation_summary
from .navigation_metrics import METRICS
from .papers import PAPER_RESULTS


def _split(config: Mapping[str, Any]) -> str:
    """"map2seq/dev": the dataset and split file a run used."""
    return f"{config.get('dataset') or ''}/{config.get('split') or ''}"


NAVIGATION = System(
    name="navigation", title="Navigation", command="situated navigate", metrics=METRICS,
    definitions="TC (stopped at the target or next to it), SPD (hops from the stop to the target) and KPA",
    sections=("lengths", "maps", "stops", "cost", "episodes"),
    paper_metrics=("tc", "spd", "kpa"),
    papers=tuple(r for r in PAPER_RESULTS if r.system == "navigation"), papers_scaled=False,
    paper_notes=("VELMA reports KPA in the faithful variant (the start counted as the release code counts it), so it "
                 "compares with KPA here, not with KPA corrected.",),
    split_of=_split,
    config=navigation_config, job=NavigationJob, summary=navigation_summary,
)

"""Every system by the name its results stores carry (`system` in run.json).

The sandbox study (scripted Vocal Sandbox sessions under two conditions) is `sandbox_study`.
"""

from __future__ import annotations

from ...errors import DataError
from .base import System
from .eai import EAI
from .household import HOUSEHOLD
from .navigation import NAVIGATION
from .sandbox_study import SANDBOX_STUDY
from .tabletop import TABLETOP

SYSTEMS: dict[str, System] = {s.name: s for s in (HOUSEHOLD, NAVIGATION, TABLETOP, EAI, SANDBOX_STUDY)}


def system_named(name: str, where: object = "") -> System:
    """The system of a results store; DataError naming `where` for one no report covers."""
    if name not in SYSTEMS:
        names = list(SYSTEMS)
        raise DataError(f"{where}: episodes of system {name!r}; a report covers {', '.join(names[:-1])} and "
                        f"{names[-1]} runs")
    return SYSTEMS[name]

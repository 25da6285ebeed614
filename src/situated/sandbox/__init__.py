"""Vocal Sandbox: teaching a robot by talking to it.

The persistent skill library lives in `library`; a user's session with the arm in `session` (`SandboxSession`,
whose replies are in `replies`); behaviours as plan programs in `behaviours`, lessons in `teaching`, motions taught
by demonstration in `motions` and `dmp` (Dynamic Movement Primitives, needing the ``sandbox`` extra), scripted
sessions in `script`, the study's measures in `metrics`. The session and its parts are imported on first use, so
the library needs nothing beyond the standard library.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .library import (
    EXPORT_FORMAT,
    BehaviourRecord,
    EventRecord,
    ObjectRecord,
    Record,
    SessionRecord,
    SkillLibrary,
    SkillRecord,
)

_LAZY = {"SandboxSession": ".session", "Reply": ".replies", "Plan": ".replies", "Execution": ".replies",
         "CallOutcome": ".replies", "SkillOutcome": ".replies", "Taught": ".replies",
         "SessionMetrics": ".metrics", "session_metrics": ".metrics", "DemoSkill": ".motions",
         "run_script": ".script", "read_script": ".script", "ScriptResult": ".script"}

__all__ = [
    "EXPORT_FORMAT",
    "BehaviourRecord",
    "CallOutcome",
    "DemoSkill",
    "EventRecord",
    "Execution",
    "ObjectRecord",
    "Plan",
    "Record",
    "Reply",
    "SandboxSession",
    "ScriptResult",
    "SessionMetrics",
    "SessionRecord",
    "SkillLibrary",
    "SkillOutcome",
    "SkillRecord",
    "Taught",
    "read_script",
    "run_script",
    "session_metrics",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

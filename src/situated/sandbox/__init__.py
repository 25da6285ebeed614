"""Vocal Sandbox: teaching a robot by talking to it. The persistent skill library lives in `library`; motions
taught by demonstration (Dynamic Movement Primitives, needing the ``sandbox`` extra) in `dmp`."""

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

__all__ = [
    "EXPORT_FORMAT",
    "BehaviourRecord",
    "EventRecord",
    "ObjectRecord",
    "Record",
    "SessionRecord",
    "SkillLibrary",
    "SkillRecord",
]

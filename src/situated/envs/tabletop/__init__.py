"""The tabletop robot world: a Franka Panda and household objects on a table, simulated headless by pybullet.

The catalogue and scenes are plain Python; the simulator, camera and environment need the optional dependencies
`pybullet` and `numpy` (`pip install situated[tabletop]`) and are imported on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .catalogue import CATALOGUE, CONTAINERS, ITEMS, ObjectSpec
from .scene import BUILTIN_SCENES, FORMAT, Placement, Scene, builtin_scene, layout, load_scene, scene_from_dict

_LAZY = {"TabletopEnv": ".env", "SKILLS": ".env", "Camera": ".camera", "Detection": ".perception",
         "Observation": ".perception"}

__all__ = ["BUILTIN_SCENES", "CATALOGUE", "CONTAINERS", "FORMAT", "ITEMS", "SKILLS", "Camera", "Detection",
           "ObjectSpec", "Observation", "Placement", "Scene", "TabletopEnv", "builtin_scene", "layout",
           "load_scene", "scene_from_dict"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

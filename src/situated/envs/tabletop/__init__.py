"""The tabletop robot world: a Franka Panda and household objects on a table, simulated headless by pybullet.

Needs the optional dependency `pybullet` (`pip install situated[tabletop]`).
"""

from .camera import Camera
from .catalogue import CATALOGUE, CONTAINERS, ITEMS, ObjectSpec
from .env import SKILLS, TabletopEnv
from .perception import Detection, Observation
from .scene import BUILTIN_SCENES, FORMAT, Placement, Scene, builtin_scene, layout, load_scene, scene_from_dict

__all__ = ["BUILTIN_SCENES", "CATALOGUE", "CONTAINERS", "FORMAT", "ITEMS", "SKILLS", "Camera", "Detection",
           "ObjectSpec", "Observation", "Placement", "Scene", "TabletopEnv", "builtin_scene", "layout",
           "load_scene", "scene_from_dict"]

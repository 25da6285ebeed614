"""The table as the camera saw it: the geometry the skills aim with, from percepts instead of the simulator.

`SeenWorld` answers the questions the skills ask of a `World` (`bodies`, `origin`, `orientation`, `centre`, `top`,
`bottom`, `held_name`, frames) from one view's percepts (`percepts.py`): only what the camera saw is there. What
the gripper holds is where the grasp put it: its pose in the hand (`Grip`, taken from the percept it was grasped
on) moved with the hand, as a robot knows its own arm. Touch (finger and arm contacts) is read from the simulator,
as a robot's force and finger sensors would tell it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .bodies import Body, Quat, extent_at, rotation
from .percepts import Percept
from .world import World


@dataclass(frozen=True)
class Grip:
    """Where a grasped item sits in the hand: its frame's origin and rotation in the hand's frame."""

    name: str
    offset: np.ndarray
    rotation: np.ndarray


def yaw_matrix(yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def quaternion(r: np.ndarray) -> Quat:
    """The (x, y, z, w) quaternion of a rotation matrix."""
    w = math.sqrt(max(0.0, 1.0 + r[0, 0] + r[1, 1] + r[2, 2])) / 2
    x = math.copysign(math.sqrt(max(0.0, 1.0 + r[0, 0] - r[1, 1] - r[2, 2])) / 2, r[2, 1] - r[1, 2])
    y = math.copysign(math.sqrt(max(0.0, 1.0 - r[0, 0] + r[1, 1] - r[2, 2])) / 2, r[0, 2] - r[2, 0])
    z = math.copysign(math.sqrt(max(0.0, 1.0 - r[0, 0] - r[1, 1] + r[2, 2])) / 2, r[1, 0] - r[0, 1])
    return (x, y, z, w)


class SeenWorld:
    """One view of the table (see the module docstring); `bodies` holds the seen objects and what is held."""

    def __init__(self, world: World, percepts: Mapping[str, Percept], grip: Grip | None = None) -> None:
        self.world = world
        self.client = world.client
        self.arm = world.arm
        self.table = world.table
        self.percepts = dict(percepts)
        self.grip = grip
        held = world.held_name()
        self.bodies: dict[str, Body] = {n: b for n, b in world.bodies.items() if n in self.percepts or n == held}

    def held_name(self) -> str | None:
        return self.world.held_name()

    def _held(self, name: str) -> bool:
        return self.grip is not None and self.grip.name == name and self.world.held_name() == name

    def pose(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The object's frame (origin on its bottom face, rotation matrix) as seen, or as held."""
        if self._held(name):
            assert self.grip is not None
            ee, q = self.arm.ee_pose()
            hand = rotation(q)
            return ee + hand @ self.grip.offset, hand @ self.grip.rotation
        if name not in self.percepts:
            raise KeyError(f"the camera did not see {name!r}")
        p = self.percepts[name]
        return np.array(p.origin), yaw_matrix(p.yaw)

    def origin(self, name: str) -> np.ndarray:
        return self.pose(name)[0]

    def orientation(self, name: str) -> Quat:
        return quaternion(self.pose(name)[1])

    def to_world(self, name: str, local: tuple[float, float, float] | np.ndarray) -> np.ndarray:
        origin, r = self.pose(name)
        return origin + r @ np.asarray(local, dtype=float)

    def to_local(self, name: str, point: np.ndarray | tuple[float, ...]) -> np.ndarray:
        origin, r = self.pose(name)
        return r.T @ (np.asarray(point, dtype=float) - origin)

    def centre(self, name: str) -> np.ndarray:
        body = self.bodies[name]
        return self.to_world(name, (np.array(body.low) + np.array(body.high)) / 2)

    def _extent(self, name: str) -> tuple[float, float]:
        if not self._held(name) and name in self.percepts:
            p = self.percepts[name]
            return p.origin[2], p.top
        origin, r = self.pose(name)
        return extent_at(self.bodies[name], origin, quaternion(r))

    def bottom(self, name: str) -> float:
        return self._extent(name)[0]

    def top(self, name: str) -> float:
        return self._extent(name)[1]

    def contacts(self, a: str, b: str) -> bool:
        return self.world.contacts(a, b)

    def inside(self, item: str, container: str, slack: float = 0.005) -> bool:
        """Whether the item, as seen, lies inside the container, as seen (relations.inside's rule)."""
        shape = self.bodies[container].spec.container
        if shape is None or item == container or self.held_name() == item:
            return False
        x, y, _ = self.to_local(container, self.centre(item))
        if shape.footprint == "rect":
            over = abs(x) <= shape.half_x + slack and abs(y) <= shape.half_y + slack
        else:
            over = math.hypot(x, y) <= shape.half_x + slack
        floor_z = float(self.origin(container)[2]) + shape.floor
        return over and floor_z - 0.01 <= self.bottom(item) <= floor_z - shape.floor + shape.rim

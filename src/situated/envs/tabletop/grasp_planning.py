"""Choosing the gripper's heading for a top-down grasp so that the hand and fingers miss the neighbours.

The Panda's hand is 21 cm wide along the finger axis and 7 cm across; next to a tall container (the gift bag's
walls are 16 cm high) a grasp of a small item can hit the wall. Among the headings that hold the object (see
ObjectSpec.grasp_turns) the one whose hand and finger footprints overlap the fewest neighbours wins; ties keep the
object's own grasp axis.
"""

from __future__ import annotations

import math

import numpy as np

from .bodies import yaw_of
from .world import World

HAND_HALF = (0.036, 0.11)      # half extents of the hand's footprint: across, along the finger axis (m)
HAND_ABOVE = 0.035             # the hand's lowest point above the gripper point
FINGER_SPAN = (0.034, 0.072)   # the open fingers' inner and outer distance from the gripper point, along their axis
FINGER_BELOW = 0.012           # the fingertips reach this far below the gripper point


def _overlap(centre_a: np.ndarray, yaw_a: float, half_a: tuple[float, float], centre_b: np.ndarray, yaw_b: float,
             half_b: tuple[float, float]) -> bool:
    """Whether two rectangles on the table overlap (separating axis test)."""
    axes_a = (np.array([math.cos(yaw_a), math.sin(yaw_a)]), np.array([-math.sin(yaw_a), math.cos(yaw_a)]))
    axes_b = (np.array([math.cos(yaw_b), math.sin(yaw_b)]), np.array([-math.sin(yaw_b), math.cos(yaw_b)]))
    d = centre_b - centre_a
    for axis in (*axes_a, *axes_b):
        ra = sum(h * abs(float(axis @ a)) for h, a in zip(half_a, axes_a, strict=True))
        rb = sum(h * abs(float(axis @ b)) for h, b in zip(half_b, axes_b, strict=True))
        if abs(float(axis @ d)) > ra + rb:
            return False
    return True


def collisions(world: World, target: str, point: np.ndarray, yaw: float) -> int:
    """How many neighbours the hand (counted twice) or the open fingers would touch in a grasp at `point`."""
    count = 0
    finger_axis = np.array([-math.sin(yaw), math.cos(yaw)])
    middle = (FINGER_SPAN[0] + FINGER_SPAN[1]) / 2
    finger_half = (0.012, (FINGER_SPAN[1] - FINGER_SPAN[0]) / 2)
    for name, body in world.bodies.items():
        if name == target or name == world.held_name():
            continue
        centre = world.centre(name)[:2]
        half = (body.spec.footprint[0] / 2, body.spec.footprint[1] / 2)
        turn = yaw_of(world.orientation(name))
        top = world.top(name)
        if top > point[2] + HAND_ABOVE and _overlap(point[:2], yaw, HAND_HALF, centre, turn, half):
            count += 2
        elif top > point[2] - FINGER_BELOW and any(
                _overlap(point[:2] + side * middle * finger_axis, yaw, finger_half, centre, turn, half)
                for side in (-1.0, 1.0)):
            count += 1
    return count


def rank_yaws(world: World, target: str, point: np.ndarray, base_yaw: float) -> list[float]:
    """The headings `base_yaw + turn` (the object's grasp turns), those that touch the fewest neighbours first."""
    turns = world.bodies[target].spec.grasp_turns()
    ranked = sorted(turns, key=lambda turn: (collisions(world, target, point, base_yaw + turn), turns.index(turn)))
    return [base_yaw + turn for turn in ranked]

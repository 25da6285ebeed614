"""Choosing a top-down grasp (heading, where along the item, how wide the fingers open) that misses the neighbours
and the walls of the container the item lies in.

The Panda's hand is 21 cm wide along the finger axis and 7 cm across; next to a tall container (the gift bag's
walls are 16 cm high) a grasp of a small item can hit the wall, and with the fingers fully open (8 cm) a small item
near a bowl's wall puts one finger on the wall. Candidates: the headings that hold the object (ObjectSpec.grasp_turns),
for a long item points slid along its length (ObjectSpec.grasp_slide: off the end an apple leans on), and two
openings, full and the item's width plus `GRASP_MARGIN` a side. The candidate whose hand and fingers overlap the
fewest neighbours and walls wins; ties keep the centre, the full opening and the object's own grasp axis, so a
grasp on a clear table is what it always was.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .arm import FINGER_OPEN
from .bodies import yaw_of

if TYPE_CHECKING:
    from .seen import SeenWorld

HAND_HALF = (0.036, 0.11)      # half extents of the hand's footprint: across, along the finger axis (m)
HAND_ABOVE = 0.035             # the hand's lowest point above the gripper point
FINGER_FACES = (-0.006, 0.032)  # a finger's inner and outer face along the axis, from its opening (travel)
FINGER_HALF_ACROSS = 0.012     # half a finger's extent across the finger axis
FINGER_BELOW = 0.012           # the fingertips reach this far below the gripper point
GRASP_MARGIN = 0.012           # a narrow opening leaves this much between each finger and the item
WALL_SLACK = 0.003             # a finger may touch the inner wall's face by this much (the camera is off by mm)
SLIDE_STEP = 0.02              # slid grasp points along a long item, this far apart


@dataclass(frozen=True)
class Grasp:
    """A chosen grasp: the gripper point's offset along the item's local x from its grasp offset, the heading
    (world yaw of the finger axis's normal, as `top_down` takes it) and each finger's opening before closing."""

    slide: float
    yaw: float
    opening: float


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


def _corners(centre: np.ndarray, yaw: float, half: tuple[float, float]) -> np.ndarray:
    """The four corners (4, 2) of a rectangle on the table."""
    c, s = math.cos(yaw), math.sin(yaw)
    axes = np.array([[c, s], [-s, c]])
    signs = np.array([[1, 1], [1, -1], [-1, 1], [-1, -1]], dtype=float)
    return centre[None, :] + (signs * np.array(half)[None, :]) @ axes


def _fingers(point: np.ndarray, yaw: float, opening: float) -> list[tuple[np.ndarray, tuple[float, float]]]:
    """The two open fingers' footprints (centre, half extents across and along the finger axis)."""
    axis = np.array([-math.sin(yaw), math.cos(yaw)])
    inner, outer = opening + FINGER_FACES[0], opening + FINGER_FACES[1]
    half = (FINGER_HALF_ACROSS, (outer - inner) / 2)
    return [(point[:2] + side * (inner + outer) / 2 * axis, half) for side in (-1.0, 1.0)]


def hand_overlaps(world: SeenWorld, name: str, point: np.ndarray, yaw: float) -> bool:
    """Whether the hand's footprint, the gripper point at `point` turned `yaw`, overlaps the object's."""
    body = world.bodies[name]
    half = (body.spec.footprint[0] / 2, body.spec.footprint[1] / 2)
    return _overlap(point[:2], yaw, HAND_HALF, world.centre(name)[:2], yaw_of(world.orientation(name)), half)


def container_of(world: SeenWorld, target: str) -> str | None:
    """The container the item lies in, as seen (None: on the table)."""
    for name, body in world.bodies.items():
        if body.spec.container is not None and name != target and world.inside(target, name):
            return name
    return None


def _beyond_walls(world: SeenWorld, container: str, corners: np.ndarray) -> float:
    """How far (m) the farthest corner (world x, y) lies beyond the container's inner walls (0: within)."""
    shape = world.bodies[container].spec.container
    assert shape is not None
    local = np.array([world.to_local(container, (x, y, float(world.origin(container)[2])))[:2] for x, y in corners])
    if shape.footprint == "circle":
        beyond = np.hypot(local[:, 0], local[:, 1]) - shape.half_x
    else:
        beyond = np.maximum(np.abs(local[:, 0]) - shape.half_x, np.abs(local[:, 1]) - shape.half_y)
    return max(0.0, float(np.max(beyond)) - WALL_SLACK)


def collisions(world: SeenWorld, target: str, point: np.ndarray, yaw: float, opening: float = FINGER_OPEN,
               container: str | None = None) -> tuple[int, float]:
    """How many neighbours and walls the hand (counted twice) or the open fingers would touch in a grasp at `point`,
    and how far (m, summed) they reach into the walls of `container`, the one the target lies in (whose walls
    count instead of its footprint)."""
    count, depth = 0, 0.0
    fingers = _fingers(point, yaw, opening)
    for name, body in world.bodies.items():
        if name in (target, container) or name == world.held_name():
            continue
        centre = world.centre(name)[:2]
        half = (body.spec.footprint[0] / 2, body.spec.footprint[1] / 2)
        turn = yaw_of(world.orientation(name))
        top = world.top(name)
        if top > point[2] + HAND_ABOVE and _overlap(point[:2], yaw, HAND_HALF, centre, turn, half):
            count += 2
        elif top > point[2] - FINGER_BELOW and any(
                _overlap(f_centre, yaw, f_half, centre, turn, half) for f_centre, f_half in fingers):
            count += 1
    if container is not None:
        shape = world.bodies[container].spec.container
        assert shape is not None
        rim = float(world.origin(container)[2]) + shape.rim
        hand = _beyond_walls(world, container, _corners(point[:2], yaw, HAND_HALF))
        if rim > point[2] + HAND_ABOVE and hand > 0:
            count, depth = count + 2, depth + hand
        elif rim > point[2] - FINGER_BELOW:
            reach = [_beyond_walls(world, container, _corners(c, yaw, h)) for c, h in fingers]
            count, depth = count + sum(r > 0 for r in reach), depth + sum(reach)
    return count, depth


def _width_across(world: SeenWorld, target: str, turn: float) -> float:
    """The item's extent along the finger axis for a grasp turned `turn` from its grasp axis."""
    spec = world.bodies[target].spec
    if len(spec.grasp_turns()) > 2:      # round: every heading holds it
        return max(spec.footprint)
    along = turn + spec.grasp_yaw
    return spec.footprint[0] * abs(math.sin(along)) + spec.footprint[1] * abs(math.cos(along))


def rank_grasps(world: SeenWorld, target: str, point_at: Callable[[float], np.ndarray],
                 base_yaw: float) -> list[tuple[Grasp, np.ndarray]]:
    """Every candidate grasp with its gripper point (`point_at(slide)`), those touching the fewest neighbours and
    walls first, then those reaching least far into the walls; ties: the smallest slide, the full opening, the
    object's own grasp turn first."""
    spec = world.bodies[target].spec
    turns = spec.grasp_turns()
    steps = int(spec.grasp_slide / SLIDE_STEP + 1e-9)
    slides = [0.0, *(sign * SLIDE_STEP * k for k in range(1, steps + 1) for sign in (1.0, -1.0))]
    if spec.grasp_slide and abs(slides[-1]) < spec.grasp_slide - 1e-9:
        slides += [spec.grasp_slide, -spec.grasp_slide]
    container = container_of(world, target)
    ranked: list[tuple[tuple[int, float, float, int, int], Grasp, np.ndarray]] = []
    for slide in slides:
        point = point_at(slide)
        for index, turn in enumerate(turns):
            narrow = min(FINGER_OPEN, _width_across(world, target, turn) / 2 + GRASP_MARGIN)
            for opening in dict.fromkeys((FINGER_OPEN, narrow)):
                hits, depth = collisions(world, target, point, base_yaw + turn, opening, container)
                ranked.append(((hits, round(depth, 3), abs(slide), int(opening < FINGER_OPEN), index),
                               Grasp(slide, base_yaw + turn, opening), point))
    ranked.sort(key=lambda entry: entry[0])
    return [(grasp, point) for _, grasp, point in ranked]

"""Geometric relations read from the simulation: held, inside, on, close; and the scene's class-level facts.

- `inside(item, container)`: the item is not held, its centre lies over the container's inner footprint (5 mm
  slack) and its bottom lies between the inner floor (1 cm below allowed) and the rim.
- `on(a, b)`: inside, when `b` is a container; on the table: bottom within 4 mm of the table top and not inside
  any container; on an item: bottom within 1.5 cm of its top and centre over its bounding box.
- `on_place(item, spot)`: on the table (as above) with its centre within 6 cm of a taught spot, horizontally.
- `close(x)`: the gripper point, or the held object, within 5 cm of x's bounding box (or of a taught spot).
"""

from __future__ import annotations

import math

import numpy as np

from .bodies import to_local
from .world import TABLE_Z, World

CLOSE = 0.05
FOOTPRINT_SLACK = 0.005
ON_TABLE = 0.004
AT_PLACE = 0.06
TABLE = "table"


def _box_distance(point: np.ndarray, low: np.ndarray, high: np.ndarray) -> float:
    return float(np.linalg.norm(point - np.clip(point, low, high)))


def _boxes_distance(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> float:
    gap = np.maximum(0.0, np.maximum(a[0] - b[1], b[0] - a[1]))
    return float(np.linalg.norm(gap))


def inside(world: World, item: str, container: str) -> bool:
    shape = world.bodies[container].spec.container
    if shape is None or item == container or world.held_name() == item:
        return False
    centre = to_local(world.client, world.bodies[container], world.centre(item))
    if shape.footprint == "rect":
        over = abs(centre[0]) <= shape.half_x + FOOTPRINT_SLACK and abs(centre[1]) <= shape.half_y + FOOTPRINT_SLACK
    else:
        over = math.hypot(centre[0], centre[1]) <= shape.half_x + FOOTPRINT_SLACK
    floor_z = float(world.origin(container)[2]) + shape.floor
    bottom = world.bottom(item)
    return over and floor_z - 0.01 <= bottom <= floor_z - shape.floor + shape.rim


def container_of(world: World, item: str) -> str | None:
    """The container the item is inside, if any."""
    return next((c for c, b in world.bodies.items() if b.spec.is_container and inside(world, item, c)), None)


def on(world: World, item: str, support: str) -> bool:
    if item == support or world.held_name() == item or item not in world.bodies:
        return False
    if support == TABLE:
        return world.bottom(item) <= TABLE_Z + ON_TABLE and container_of(world, item) is None
    if support not in world.bodies:
        return False
    if world.bodies[support].spec.is_container:
        return inside(world, item, support)
    low, high = world.aabb(support)
    centre = world.centre(item)
    return (abs(world.bottom(item) - world.top(support)) <= 0.015 and low[0] <= centre[0] <= high[0]
            and low[1] <= centre[1] <= high[1])


def on_place(world: World, item: str, spot: tuple[float, float, float] | np.ndarray) -> bool:
    """Whether the item rests on the table within `AT_PLACE` of a taught spot (horizontally)."""
    if item not in world.bodies or not on(world, item, TABLE):
        return False
    centre = world.centre(item)
    return math.hypot(float(centre[0]) - float(spot[0]), float(centre[1]) - float(spot[1])) <= AT_PLACE


def close(world: World, target: str | np.ndarray) -> bool:
    """Whether the gripper (or what it holds) is within 5 cm of a body or a point."""
    ee, _ = world.arm.ee_pose()
    held = world.held_name()
    held_box = world.aabb(held) if held is not None else None
    if isinstance(target, str):
        if target == held:
            return True
        box = world.aabb(target)
        near = _box_distance(ee, *box) <= CLOSE
        return near or (held_box is not None and _boxes_distance(held_box, box) <= CLOSE)
    point = np.asarray(target, dtype=float)
    near = float(np.linalg.norm(ee - point)) <= CLOSE
    return near or (held_box is not None and _box_distance(point, *held_box) <= CLOSE)


def facts(world: World) -> frozenset[str]:
    """Class-level facts: "duck HELD", "duck INSIDE tray", "apple ON table", "red_cube ON blue_cube"."""
    out: set[str] = set()
    held = world.held_name()
    items = [n for n, b in world.bodies.items() if not b.spec.is_container]
    for item in items:
        if item == held:
            out.add(f"{item} HELD")
            continue
        container = container_of(world, item)
        if container is not None:
            out.add(f"{item} INSIDE {container}")
        elif on(world, item, TABLE):
            out.add(f"{item} ON {TABLE}")
        else:
            out.update(f"{item} ON {other}" for other in items if on(world, item, other))
    return frozenset(out)

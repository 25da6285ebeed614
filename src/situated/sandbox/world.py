"""The tabletop world as a sandbox session sees it: the arm's skills plus skills taught by demonstration, and the
table as a place (`goto('table')` brings what the gripper holds above a free spot of the table)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..envs.base import StepResult
from ..envs.tabletop.catalogue import CATALOGUE
from ..envs.tabletop.scene import reach_problem
from ..program import Call, Condition, Var
from .motions import DemoSkill

if TYPE_CHECKING:
    from ..envs.tabletop import TabletopEnv


TABLE = "table"
CLEARANCE = 0.03
"""Room (m) kept between the footprint of an item put down on the table and every other object's."""
SAFE_REACH = 0.62
"""Farthest spot from the arm's base (m) it puts things down at, well inside its reach."""
AREA = ((0.30, 0.70), (-0.38, 0.38))
LOW = 0.035
"""An object this high or lower is passed over by the hand that puts an item down beside it."""
HAND_REACH = 0.12
"""How far the hand reaches from the gripper point along its fingers' axis, with a margin (m)."""
"""Where on the table the arm puts things down (x, y ranges, m)."""


def free_spot(snapshot: dict, seen: Mapping[str, Sequence[float]] | None = None,
              yaws: Mapping[str, float] | None = None) -> tuple[float, float, float] | None:
    """The free spot nearest the gripper, on a 2 cm grid within `AREA`, where the held item (if any) keeps
    `CLEARANCE` from every other object: where the camera sees them (`seen`: name → position), else where the
    snapshot has them. An object whose heading is known (`yaws`) keeps it from its footprint, a rectangle (a box is
    not the circle around it); the others from the circle around their footprint."""
    held = snapshot.get("held")
    own = _radius(held) if held else 0.03
    where = seen if seen is not None else {n: o["position"] for n, o in snapshot["objects"].items()}
    others = [(n, float(p[0]), float(p[1])) for n, p in where.items() if n != held]
    gx, gy, _ = snapshot["gripper"]["position"]
    best: tuple[float, tuple[float, float, float]] | None = None
    (x0, x1), (y0, y1) = AREA
    for i in range(int((x1 - x0) / 0.02) + 1):
        for j in range(int((y1 - y0) / 0.02) + 1):
            x, y = x0 + 0.02 * i, y0 + 0.02 * j
            if reach_problem(x, y) or math.hypot(x, y) > SAFE_REACH:
                continue
            if all(_distance(n, cx, cy, (yaws or {}).get(n), x, y) >= _gap(n, own) for n, cx, cy in others):
                distance = math.hypot(x - gx, y - gy)
                if best is None or distance < best[0]:
                    best = (distance, (x, y, 0.0))
    return best[1] if best else None


def _gap(name: str, own: float) -> float:
    """The room to keep between a spot and an object: the held item's radius and `CLEARANCE`, and for an object
    taller than `LOW` the hand's half length too (the hand goes down with the item and would hit it)."""
    spec = CATALOGUE.get(name)
    low = spec is not None and spec.height <= LOW
    return own + CLEARANCE if low else max(own + CLEARANCE, HAND_REACH)


def _distance(name: str, cx: float, cy: float, yaw: float | None, x: float, y: float) -> float:
    """How far (x, y) lies from the object's footprint: its rectangle turned by `yaw`, or (yaw unknown, or not a
    catalogue object) the circle around it."""
    spec = CATALOGUE.get(name)
    if yaw is None or spec is None:
        return math.hypot(x - cx, y - cy) - _radius(name)
    c, s = math.cos(yaw), math.sin(yaw)
    u, v = c * (x - cx) + s * (y - cy), -s * (x - cx) + c * (y - cy)
    du, dv = max(0.0, abs(u) - spec.footprint[0] / 2), max(0.0, abs(v) - spec.footprint[1] / 2)
    return math.hypot(du, dv)


def _radius(name: str) -> float:
    spec = CATALOGUE.get(name)
    return spec.radius if spec is not None else 0.05


class SandboxWorld:
    """An `Environment` over a `TabletopEnv`: `step` runs a taught motion itself and passes anything else on."""

    def __init__(self, env: TabletopEnv) -> None:
        self.env = env
        self.motions: dict[str, DemoSkill] = {}

    def reset(self, task: Any = None) -> str:
        return self.env.reset(task)

    def step(self, call: Call) -> StepResult:
        if call.action == "goto" and [str(a) for a in call.args] == [TABLE]:
            return self._goto_table()
        motion = self.motions.get(call.action)
        if motion is None:
            return self.env.step(call)
        if len(call.args) != 1 or isinstance(call.args[0], Var):
            return StepResult(False, f"{call.action} takes 1 argument (a target), got {len(call.args)}")
        return motion.run(self.env, str(call.args[0]))

    def _goto_table(self) -> StepResult:
        """Above the free spot of the table nearest the gripper (at least `CLEARANCE` from every object)."""
        percepts = self.env.percepts()
        spot = free_spot(self.env.snapshot(), {n: p.origin for n, p in percepts.items()},
                         {n: p.yaw for n, p in percepts.items()})
        if spot is None:
            return StepResult(False, "goto: no free spot on the table")
        self.env.locations[TABLE] = spot  # a spot for this one move; 'table' cannot be taught as a name
        try:
            return self.env.goto(TABLE)
        finally:
            self.env.locations.pop(TABLE, None)

    def holds(self, condition: Condition) -> bool:
        return self.env.holds(condition)

    def describe(self, near: str | None = None) -> str:
        return self.env.describe(near)

    def snapshot(self) -> dict:
        return self.env.snapshot()

"""Skills taught by demonstration: a recorded end-effector trajectory, fitted with a DMP, replayed toward a target.

A demonstration (in the simulator: `TabletopEnv.record_demo(waypoints)`, a teleoperated stand-in for the paper's
kinesthetic teaching) ends near some object, the skill's *reference*; the skill keeps the DMP and the offset of
the demonstration's final position from the reference's position. Called on a target (an object or a taught
location), it rolls the DMP out from the arm's current pose to the target's position plus that offset, with the
demonstration's final orientation, and the arm follows the rollout (`TabletopEnv.follow`, which succeeds when
the arm ends within 1 cm of the goal). The library stores the skill's `weights` as a `situated-demo-skill/1`
object: the DMP (`situated-dmp/1`), the reference and the offset.

Quaternions: the simulator's are (x, y, z, w), the DMP's (w, x, y, z); converted here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..envs.base import StepResult
from ..errors import DataError
from .dmp import DmpSkill, fit_dmp

if TYPE_CHECKING:
    from ..envs.tabletop import TabletopEnv

FORMAT = "situated-demo-skill/1"
REFERENCE_RADIUS = 0.25
"""A demonstration must end within this horizontal distance (m) of its reference object."""


def _xyzw_to_wxyz(q: np.ndarray) -> np.ndarray:
    return np.asarray(q, dtype=float)[..., [3, 0, 1, 2]]


def _wxyz_to_xyzw(q: np.ndarray) -> np.ndarray:
    return np.asarray(q, dtype=float)[..., [1, 2, 3, 0]]


def object_position(env: TabletopEnv, name: str) -> tuple[float, float, float] | None:
    """Where a name is: an object's bottom centre (scene name or taught name) or a taught location; None if
    the world has no such name."""
    snap = env.snapshot()
    key = env.resolve(name)
    if key is not None and key in snap["objects"]:
        x, y, z = snap["objects"][key]["position"]
        return (float(x), float(y), float(z))
    spot = snap["locations"].get(name)
    return None if spot is None else (float(spot[0]), float(spot[1]), float(spot[2]))


def nearest_object(env: TabletopEnv, point: Sequence[float]) -> str | None:
    """The scene object whose position is horizontally nearest `point`, within `REFERENCE_RADIUS`."""
    best: tuple[float, str] | None = None
    for name, info in env.snapshot()["objects"].items():
        x, y, _ = info["position"]
        distance = math.hypot(float(point[0]) - x, float(point[1]) - y)
        if distance <= REFERENCE_RADIUS and (best is None or distance < best[0]):
            best = (distance, name)
    return best[1] if best else None


@dataclass(frozen=True)
class DemoSkill:
    """A skill learned from one demonstration; called with a target object or location."""

    name: str
    dmp: DmpSkill
    reference: str
    offset: tuple[float, float, float]
    doc: str = ""

    @property
    def param(self) -> str:
        return "target"

    def to_weights(self) -> dict[str, Any]:
        """The JSON object stored as the skill's weights in the library."""
        return {"format": FORMAT, "dmp": self.dmp.to_dict(), "reference": self.reference,
                "offset": list(self.offset)}

    @classmethod
    def from_weights(cls, name: str, doc: str, weights: Mapping[str, Any], source: str = "skill") -> DemoSkill:
        """Read stored weights back; DataError naming `source` and the field when they are not ours."""
        if not isinstance(weights, Mapping) or weights.get("format") != FORMAT:
            raise DataError(f"{source}: weights: format must be {FORMAT!r}")
        if set(weights) != {"format", "dmp", "reference", "offset"}:
            raise DataError(f"{source}: weights: expected fields format, dmp, reference, offset")
        offset = weights["offset"]
        if (not isinstance(offset, list) or len(offset) != 3 or not all(
                isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in offset)):
            raise DataError(f"{source}: weights.offset: must be a list of 3 finite numbers")
        if not isinstance(weights["reference"], str):
            raise DataError(f"{source}: weights.reference: must be a string")
        dmp = DmpSkill.from_dict(weights["dmp"], source=f"{source}: weights.dmp")
        return cls(name, dmp, weights["reference"], (float(offset[0]), float(offset[1]), float(offset[2])), doc)

    def goal(self, target: Sequence[float]) -> np.ndarray:
        """Where the gripper point ends for a target at `target`."""
        return np.asarray(target, dtype=float) + np.asarray(self.offset)

    def trajectory(self, start: tuple[Sequence[float], Sequence[float]],
                   target: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Times, positions and (x, y, z, w) quaternions from the `start` pose ((x, y, z), (x, y, z, w)) to the
        goal for a target at `target`."""
        start_pos, start_q = np.asarray(start[0], dtype=float), _xyzw_to_wxyz(np.asarray(start[1]))
        times, positions, quats = self.dmp.rollout(start=(start_pos, start_q),
                                                   goal=(self.goal(target), np.array(self.dmp.goal_orientation)))
        return times, positions, _wxyz_to_xyzw(quats)

    def run(self, env: TabletopEnv, target: str) -> StepResult:
        """Perform the skill toward `target` on the simulated arm."""
        where = object_position(env, target)
        if where is None:
            return StepResult(False, f"{self.name}: no object {target!r} here")
        _, positions, quats = self.trajectory(env.ee_pose(), where)
        result = env.follow(positions, quats, dt=self.dmp.dt)
        reason = result.reason.replace("follow:", f"{self.name}:", 1) if result.reason else ""
        return StepResult(result.ok, reason, result.changes)


def learn_from_demo(env: TabletopEnv, name: str, waypoints: Sequence[Sequence[float]], reference: str | None = None,
                    doc: str = "") -> DemoSkill:
    """Record a demonstration through `waypoints` (the arm moves), fit a DMP to it and tie it to `reference`
    (default: the object nearest where the demonstration ends). DataError for bad waypoints, a demonstration
    too short to fit, or no reference."""
    if len(waypoints) < 1:
        raise DataError(f"demo {name}: give at least one waypoint")
    times, positions, quats = env.record_demo(waypoints)
    keep = np.r_[True, np.diff(times) > 0]
    times, positions, quats = times[keep], positions[keep], quats[keep]
    if len(times) < 3:
        raise DataError(f"demo {name}: the demonstration is too short to learn from ({len(times)} samples)")
    end = positions[-1]
    if reference is None:
        reference = nearest_object(env, end)
        if reference is None:
            raise DataError(f"demo {name}: the demonstration ends {REFERENCE_RADIUS * 100:.0f} cm or more from every "
                            "object; name the object it is about")
    where = object_position(env, reference)
    if where is None:
        raise DataError(f"demo {name}: no object {reference!r} here")
    dmp = fit_dmp(times, positions, _xyzw_to_wxyz(quats))
    offset = tuple(float(v) for v in end - np.asarray(where))
    text = doc or f"Move as demonstrated toward a target (shown on the {reference})."
    return DemoSkill(name, dmp, reference, (offset[0], offset[1], offset[2]), text)

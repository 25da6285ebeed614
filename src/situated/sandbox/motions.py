"""Skills taught by demonstration: a recorded end-effector trajectory, fitted with a DMP, replayed toward a target.

A demonstration (in the simulator: `TabletopEnv.record_demo(waypoints)`, a teleoperated stand-in for the paper's
kinesthetic teaching) ends near some object, the skill's *reference*; the skill keeps the DMP and the offset of
the demonstration's final position from the reference's position (an object's top centre, so that a motion ends
as high above a taller object as above the one it was shown on). Called on a target (an object or a taught
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
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..envs.base import StepResult
from ..errors import DataError
from .dmp import DmpSkill, fit_dmp

if TYPE_CHECKING:
    from ..envs.tabletop import TabletopEnv

FORMAT = "situated-demo-skill/2"
OLD_FORMATS = ("situated-demo-skill/1",)
"""Formats read as well: version 1 is version 2 without gripper events."""
EVENTS = ("close", "open")
"""Gripper events of a demonstration: grasp what is under the gripper, let go."""
MAX_EVENTS = 16
REFERENCE_RADIUS = 0.25
"""A demonstration must end within this horizontal distance (m) of its reference object."""


def _xyzw_to_wxyz(q: np.ndarray) -> np.ndarray:
    return np.asarray(q, dtype=float)[..., [3, 0, 1, 2]]


def _wxyz_to_xyzw(q: np.ndarray) -> np.ndarray:
    return np.asarray(q, dtype=float)[..., [1, 2, 3, 0]]


def object_position(env: TabletopEnv, name: str) -> tuple[float, float, float] | None:
    """Where a name is, as the camera sees it: an object's top centre (scene name or taught name; a motion shown
    above one object then clears a taller one) or a taught location; None if the world has no such name or the
    camera does not see the object (the held object is where the hand is)."""
    snap = env.snapshot()
    key = env.resolve(name)
    if key is not None and key in snap["objects"]:
        if key == snap.get("held"):
            x, y, _ = snap["objects"][key]["position"]
            return (float(x), float(y), float(env.world.top(key)))
        seen = env.percepts().get(key)
        if seen is None:
            return None
        return (float(seen.origin[0]), float(seen.origin[1]), float(seen.top))
    spot = snap["locations"].get(name)
    return None if spot is None else (float(spot[0]), float(spot[1]), float(spot[2]))


Event = Literal["close", "open"]
DemoStep = Sequence[float] | str
"""One step of a demonstration: a waypoint (x, y, z) or a gripper event ("close", "open")."""


@dataclass(frozen=True)
class DemoSkill:
    """A skill learned from one demonstration; called with a target object or location. `events` are the gripper
    events with their phase (0 to 1) in the motion, in order."""

    name: str
    dmp: DmpSkill
    reference: str
    offset: tuple[float, float, float]
    doc: str = ""
    events: tuple[tuple[float, Event], ...] = ()

    @property
    def param(self) -> str:
        return "target"

    def to_weights(self) -> dict[str, Any]:
        """The JSON object stored as the skill's weights in the library."""
        return {"format": FORMAT, "dmp": self.dmp.to_dict(), "reference": self.reference,
                "offset": list(self.offset), "events": [[phase, event] for phase, event in self.events]}

    @classmethod
    def from_weights(cls, name: str, doc: str, weights: Mapping[str, Any], source: str = "skill") -> DemoSkill:
        """Read stored weights back; DataError naming `source` and the field when they are not ours."""
        if not isinstance(weights, Mapping) or weights.get("format") not in (FORMAT, *OLD_FORMATS):
            raise DataError(f"{source}: weights: format must be {FORMAT!r}")
        if weights["format"] in OLD_FORMATS:  # version 1: the same without events
            weights = {**weights, "format": FORMAT, "events": []}
        if set(weights) != {"format", "dmp", "reference", "offset", "events"}:
            raise DataError(f"{source}: weights: expected fields format, dmp, reference, offset, events")
        offset = weights["offset"]
        if (not isinstance(offset, list) or len(offset) != 3 or not all(
                isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in offset)):
            raise DataError(f"{source}: weights.offset: must be a list of 3 finite numbers")
        if not isinstance(weights["reference"], str):
            raise DataError(f"{source}: weights.reference: must be a string")
        events = _read_events(weights["events"], f"{source}: weights.events")
        dmp = DmpSkill.from_dict(weights["dmp"], source=f"{source}: weights.dmp")
        return cls(name, dmp, weights["reference"], (float(offset[0]), float(offset[1]), float(offset[2])), doc,
                   events)

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
        """Perform the skill toward `target` on the simulated arm: the rollout, with each gripper event at its
        phase. Stops at the first part that fails (a point out of reach, a grasp that closes on nothing)."""
        where = object_position(env, target)
        if where is None:
            seen = env.resolve(target) is not None
            return StepResult(False, f"I cannot see the {target.replace('_', ' ')}" if seen
                              else f"{self.name}: no object {target!r} here")
        times, positions, quats = self.trajectory(env.ee_pose(), where)
        changes: list[str] = []
        start = 0
        for phase, event in (*self.events, (1.0, None)):
            end = len(times) if event is None else int(np.searchsorted(times, phase * times[-1], side="right"))
            if end > start or event is None:
                part = slice(start, max(end, start + 1))
                result = env.follow(positions[part], quats[part], dt=self.dmp.dt)
                changes += result.changes
                if not result.ok:
                    return StepResult(False, result.reason.replace("follow:", f"{self.name}:", 1), tuple(changes))
                start = end
            if event is not None:
                result = env.grasp() if event == "close" else env.release()
                changes += result.changes
                if not result.ok:
                    reason = result.reason.split(": ", 1)[-1]
                    return StepResult(False, f"{self.name}: {event} the gripper: {reason}", tuple(changes))
        return StepResult(True, "", tuple(changes))


def learn_from_demo(env: TabletopEnv, name: str, steps: Sequence[DemoStep], reference: str | None = None,
                    doc: str = "") -> DemoSkill:
    """Record a demonstration through `steps` (waypoints, and "close" / "open" for the gripper: the arm moves),
    fit a DMP to it and tie it to `reference` (default: the object nearest where the demonstration ends).
    DataError for a bad step, a demonstration too short to fit, or no reference. The reference's position is
    read before the arm moves (a demonstration may carry the object away)."""
    waypoints = [s for s in steps if not isinstance(s, str)]
    if not waypoints:
        raise DataError(f"demo {name}: give at least one waypoint")
    unknown = next((s for s in steps if isinstance(s, str) and s not in EVENTS), None)
    if unknown is not None:
        raise DataError(f"demo {name}: {unknown!r} is no gripper event (close, open)")
    if sum(isinstance(s, str) for s in steps) > MAX_EVENTS:
        raise DataError(f"demo {name}: at most {MAX_EVENTS} gripper events")
    before = {n: object_position(env, n) for n in env.snapshot()["objects"]}
    if reference is not None and object_position(env, reference) is None:
        raise DataError(f"demo {name}: no object {reference!r} here")
    times, positions, quats, marks = _record(env, name, steps)
    keep = np.r_[True, np.diff(times) > 0]
    times, positions, quats = times[keep], positions[keep], quats[keep]
    if len(times) < 3:
        raise DataError(f"demo {name}: the demonstration is too short to learn from ({len(times)} samples)")
    end = positions[-1]
    if reference is None:
        reference = _nearest(before, end)
        if reference is None:
            raise DataError(f"demo {name}: the demonstration ends {REFERENCE_RADIUS * 100:.0f} cm or more from every "
                            "object; name the object it is about")
    where = before.get(env.resolve(reference) or "") or object_position(env, reference)
    assert where is not None
    dmp = fit_dmp(times, positions, _xyzw_to_wxyz(quats))
    offset = tuple(float(v) for v in end - np.asarray(where))
    total = float(times[-1] - times[0])
    events = tuple((round(min(1.0, max(0.0, (t - float(times[0])) / total)), 6), e) for t, e in marks)
    grip = "" if not events else " (" + ", then ".join(
        "grasping" if e == "close" else "letting go" for _, e in events) + " on the way)"
    text = doc or f"Move as demonstrated toward a target{grip} (shown on the {reference})."
    return DemoSkill(name, dmp, reference, (offset[0], offset[1], offset[2]), text, events)


def _record(env: TabletopEnv, name: str, steps: Sequence[DemoStep]) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, list[tuple[float, Event]]]:
    """Move through the steps, recording the waypoint segments one after the other on one clock; the gripper
    events run between segments and are marked at the time the segment before them ended."""
    times: list[np.ndarray] = []
    positions: list[np.ndarray] = []
    quats: list[np.ndarray] = []
    marks: list[tuple[float, Event]] = []
    clock = 0.0
    segment: list[Sequence[float]] = []

    def flush() -> None:
        nonlocal clock, segment
        if segment:
            t, p, q = env.record_demo(segment)
            times.append(t - t[0] + clock)
            positions.append(p)
            quats.append(q)
            clock = float(times[-1][-1]) + 1e-3
            segment = []

    for step in steps:
        if not isinstance(step, str):
            segment.append(step)
            continue
        flush()
        result = env.grasp() if step == "close" else env.release()
        if step == "close" and not result.ok:
            raise DataError(f"demo {name}: close: {result.reason.split(': ', 1)[-1]}")
        marks.append((clock, step))  # type: ignore[arg-type]
    flush()
    if not times:
        raise DataError(f"demo {name}: give at least one waypoint")
    return np.concatenate(times), np.concatenate(positions), np.concatenate(quats), marks


def _nearest(positions: Mapping[str, tuple[float, float, float] | None], point: Sequence[float]) -> str | None:
    """The object whose position (before the demonstration) is horizontally nearest `point`, within
    `REFERENCE_RADIUS`."""
    best: tuple[float, str] | None = None
    for name, where in positions.items():
        if where is None:
            continue
        distance = math.hypot(float(point[0]) - where[0], float(point[1]) - where[1])
        if distance <= REFERENCE_RADIUS and (best is None or distance < best[0]):
            best = (distance, name)
    return best[1] if best else None


def _read_events(value: Any, source: str) -> tuple[tuple[float, Event], ...]:
    """Stored events: a list of [phase, "close" | "open"], phases from 0 to 1 in order; DataError otherwise."""
    if not isinstance(value, list) or len(value) > MAX_EVENTS:
        raise DataError(f"{source}: must be a list of at most {MAX_EVENTS} [phase, event] pairs")
    out: list[tuple[float, Event]] = []
    for k, pair in enumerate(value):
        if (not isinstance(pair, list) or len(pair) != 2 or isinstance(pair[0], bool)
                or not isinstance(pair[0], int | float) or not 0.0 <= pair[0] <= 1.0 or pair[1] not in EVENTS):
            raise DataError(f"{source}[{k}]: must be [phase from 0 to 1, 'close' or 'open']")
        if out and pair[0] < out[-1][0]:
            raise DataError(f"{source}[{k}]: phases must not decrease")
        out.append((float(pair[0]), pair[1]))
    return tuple(out)

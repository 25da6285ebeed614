"""Motions taught by demonstration: Cartesian Dynamic Movement Primitives (Vocal Sandbox's low-level skills).

A kinesthetic demonstration — end-effector positions (metres) and orientations over time — is fitted with
`movement_primitives.dmp.CartesianDMP` (position and orientation handled separately, Ude et al. 2014). The fitted
skill replays the demonstrated shape from any start to any goal pose: `DmpSkill.rollout` integrates it open loop
(kinematically; tracking on an arm is the caller's business).

Conventions: quaternions are **scalar-first (w, x, y, z)**, as in pytransform3d and MuJoCo, and are normalised on
input; demonstration times may start anywhere and are shifted to start at 0. Without "smooth scaling" (which
misses the goal by millimetres) the forcing term is not scaled by the goal offset, so a rollout to a goal 15 cm
away keeps the demonstration's absolute shape (a 15 cm lift stays a 15 cm lift).

`DmpSkill.to_dict` gives the JSON object stored as a skill's weights in the skill library
(format ``situated-dmp/1``); `DmpSkill.from_dict` validates one and raises a one-line `DataError`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import DataError, SituatedError

FORMAT = "situated-dmp/1"
MAX_WEIGHTS_PER_DIM = 200
MAX_SAMPLES = 1_000_000  # rollout steps (execution_time / dt)

Position = tuple[float, float, float]
Quaternion = tuple[float, float, float, float]
Pose = tuple[ArrayLike, ArrayLike]  # (position (3,), quaternion (4,) w-x-y-z)


def _dmp_class() -> Any:
    try:
        from movement_primitives.dmp import CartesianDMP
    except ImportError as err:  # an optional dependency: say how to get it
        raise SituatedError(f"DMP skills need movement_primitives ({err}): pip install 'situated[sandbox]'") from None
    return CartesianDMP


@dataclass(frozen=True)
class DmpSkill:
    """A fitted Cartesian DMP: its forcing-term weights plus the demonstrated start and goal poses.

    `weights` holds 6 × `n_weights_per_dim` numbers: x, y, z then the three rotation axes, each a row of
    `n_weights_per_dim` (as `CartesianDMP.get_weights` orders them). `dt` is the rollout step (seconds).
    """

    execution_time: float
    dt: float
    n_weights_per_dim: int
    weights: tuple[float, ...]
    start_position: Position
    start_orientation: Quaternion
    goal_position: Position
    goal_orientation: Quaternion
    alpha_y: float = 25.0
    beta_y: float = 6.25

    def rollout(self, start: Pose | None = None,
                goal: Pose | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Times (M,), positions (M, 3) and w-x-y-z quaternions (M, 4) from `start` to `goal`.

        Either pose defaults to the demonstrated one. The motion lasts `execution_time` in steps of `dt`.
        """
        start_pos, start_quat = _pose(start, "start") if start is not None else (
            np.array(self.start_position), np.array(self.start_orientation))
        goal_pos, goal_quat = _pose(goal, "goal") if goal is not None else (
            np.array(self.goal_position), np.array(self.goal_orientation))
        dmp = self._dmp()
        dmp.configure(start_y=np.r_[start_pos, start_quat], goal_y=np.r_[goal_pos, goal_quat])
        times, states = dmp.open_loop()
        keep = times <= self.execution_time + 1e-9  # np.arange in open_loop may add a step past the end
        times, states = times[keep], states[keep]
        return times, states[:, :3].copy(), states[:, 3:].copy()

    def _dmp(self) -> Any:
        dmp = _dmp_class()(execution_time=self.execution_time, dt=self.dt, n_weights_per_dim=self.n_weights_per_dim,
                           smooth_scaling=False, alpha_y=self.alpha_y, beta_y=self.beta_y)
        dmp.set_weights(np.array(self.weights, dtype=float))
        return dmp

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serializable dict (format ``situated-dmp/1``) that `from_dict` reads back exactly."""
        return {"format": FORMAT, "execution_time": self.execution_time, "dt": self.dt,
                "n_weights_per_dim": self.n_weights_per_dim, "weights": list(self.weights),
                "start_position": list(self.start_position), "start_orientation": list(self.start_orientation),
                "goal_position": list(self.goal_position), "goal_orientation": list(self.goal_orientation),
                "alpha_y": self.alpha_y, "beta_y": self.beta_y}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "DMP skill") -> DmpSkill:
        """Validate and read a `to_dict` dict; DataError naming `source` and the field otherwise."""

        def fail(field: str, problem: str) -> DataError:
            return DataError(f"{source}: {field}: {problem}")

        if not isinstance(data, Mapping):
            raise DataError(f"{source}: must be an object, not {type(data).__name__}")
        fields = {"format", "execution_time", "dt", "n_weights_per_dim", "weights", "start_position",
                  "start_orientation", "goal_position", "goal_orientation", "alpha_y", "beta_y"}
        missing = sorted(fields - data.keys())
        if missing:
            raise fail(missing[0], "missing")
        unknown = sorted(str(key) for key in data.keys() - fields)
        if unknown:
            raise fail(unknown[0], "unknown field")
        if data["format"] != FORMAT:
            raise fail("format", f"must be {FORMAT!r}")

        def number(field: str, value: object, positive: bool = False) -> float:
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise fail(field, "must be a finite number")
            if positive and value <= 0:
                raise fail(field, "must be positive")
            return float(value)

        def numbers(field: str, value: object, length: int) -> tuple[float, ...]:
            if isinstance(value, str | bytes) or not isinstance(value, Sequence) or len(value) != length:
                raise fail(field, f"must be a list of {length} numbers")
            return tuple(number(f"{field}[{i}]", v) for i, v in enumerate(value))

        def quaternion(field: str, value: object) -> Quaternion:
            w, x, y, z = numbers(field, value, 4)
            if abs(math.sqrt(w * w + x * x + y * y + z * z) - 1.0) > 1e-6:
                raise fail(field, "must be a unit quaternion (w, x, y, z)")
            return (w, x, y, z)

        execution_time = number("execution_time", data["execution_time"], positive=True)
        dt = number("dt", data["dt"], positive=True)
        if dt > execution_time or execution_time / dt > MAX_SAMPLES:
            raise fail("dt", f"must be at most execution_time and at least execution_time / {MAX_SAMPLES}")
        n = data["n_weights_per_dim"]
        if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= MAX_WEIGHTS_PER_DIM:
            raise fail("n_weights_per_dim", f"must be an integer from 2 to {MAX_WEIGHTS_PER_DIM}")
        sx, sy, sz = numbers("start_position", data["start_position"], 3)
        gx, gy, gz = numbers("goal_position", data["goal_position"], 3)
        return cls(execution_time=execution_time, dt=dt, n_weights_per_dim=n,
                   weights=numbers("weights", data["weights"], 6 * n),
                   start_position=(sx, sy, sz),
                   start_orientation=quaternion("start_orientation", data["start_orientation"]),
                   goal_position=(gx, gy, gz),
                   goal_orientation=quaternion("goal_orientation", data["goal_orientation"]),
                   alpha_y=number("alpha_y", data["alpha_y"], positive=True),
                   beta_y=number("beta_y", data["beta_y"], positive=True))


def fit_dmp(times: ArrayLike, positions: ArrayLike, quaternions: ArrayLike, n_weights_per_dim: int = 20) -> DmpSkill:
    """Fit a Cartesian DMP to a demonstration: times (N,) strictly increasing, positions (N, 3) in metres,
    quaternions (N, 4) w-x-y-z (normalised here; signs made continuous). DataError for a malformed demonstration."""
    t = _array(times, "times", (-1,))
    n = len(t)
    p = _array(positions, "positions", (n, 3))
    q = _array(quaternions, "quaternions", (n, 4))
    if n < 3:
        raise DataError(f"demonstration: times: needs at least 3 samples, got {n}")
    if not np.all(np.diff(t) > 0):
        raise DataError("demonstration: times: must increase strictly")
    if isinstance(n_weights_per_dim, bool) or not isinstance(n_weights_per_dim, int) or not (
            2 <= n_weights_per_dim <= MAX_WEIGHTS_PER_DIM):
        raise DataError(f"demonstration: n_weights_per_dim: must be an integer from 2 to {MAX_WEIGHTS_PER_DIM}")
    q = _unit_quaternions(q, "quaternions")
    for i in range(1, n):  # q and -q are one rotation: keep the trajectory on one side
        if np.dot(q[i - 1], q[i]) < 0.0:
            q[i] = -q[i]
    t = t - t[0]
    execution_time = float(t[-1])
    steps = max(1, round(execution_time / float(np.median(np.diff(t)))))
    if steps > MAX_SAMPLES:
        raise DataError(f"demonstration: times: more than {MAX_SAMPLES} steps")
    dmp = _dmp_class()(execution_time=execution_time, dt=execution_time / steps, n_weights_per_dim=n_weights_per_dim,
                       smooth_scaling=False)
    dmp.imitate(t, np.hstack((p, q)))
    weights = dmp.get_weights()
    if not np.all(np.isfinite(weights)):
        raise DataError("demonstration: the fit gave non-finite weights (repeated or degenerate samples?)")
    return DmpSkill(execution_time=execution_time, dt=execution_time / steps, n_weights_per_dim=n_weights_per_dim,
                    weights=tuple(float(w) for w in weights),
                    start_position=_tuple3(p[0]), start_orientation=_tuple4(q[0]),
                    goal_position=_tuple3(p[-1]), goal_orientation=_tuple4(q[-1]),
                    alpha_y=float(dmp.alpha_y[0]), beta_y=float(dmp.beta_y[0]))


def _array(value: ArrayLike, field: str, shape: tuple[int, ...], where: str = "demonstration") -> NDArray[np.float64]:
    """`value` as floats of `shape` (-1: any length), all finite; DataError naming `where` and `field` otherwise."""
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"{where}: {field}: must be numbers") from None
    if array.ndim != len(shape) or any(want not in (-1, got) for want, got in zip(shape, array.shape, strict=True)):
        expected = "(" + ", ".join("N" if d == -1 else str(d) for d in shape) + ")"
        raise DataError(f"{where}: {field}: shape {array.shape}, expected {expected}")
    if not np.all(np.isfinite(array)):
        raise DataError(f"{where}: {field}: must be finite")
    return array


def _unit_quaternions(q: NDArray[np.float64], field: str, where: str = "demonstration") -> NDArray[np.float64]:
    norms = np.linalg.norm(q, axis=-1, keepdims=True)
    if np.any(norms < 1e-6):
        raise DataError(f"{where}: {field}: a quaternion of length 0")
    return q / norms


def _pose(pose: Pose, field: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    try:
        position, quaternion = pose
    except (TypeError, ValueError):
        raise DataError(f"rollout: {field}: must be (position, quaternion)") from None
    p = _array(position, f"{field} position", (3,), "rollout")
    q = _array(quaternion, f"{field} quaternion", (4,), "rollout")
    return p, _unit_quaternions(q, f"{field} quaternion", "rollout")


def _tuple3(a: NDArray[np.float64]) -> Position:
    return (float(a[0]), float(a[1]), float(a[2]))


def _tuple4(a: NDArray[np.float64]) -> Quaternion:
    return (float(a[0]), float(a[1]), float(a[2]), float(a[3]))

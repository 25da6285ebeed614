"""The Panda's kinematics in numpy: forward kinematics from its Denavit–Hartenberg parameters, the geometric
Jacobian, and a damped-least-squares IK refinement within joint limits (pulled toward a rest pose in the null
space). Pure functions of joint angles: they never touch a simulation."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

# Modified Denavit–Hartenberg parameters (a, d, alpha) of joints 1–7, as in pybullet_data's panda.urdf.
_DH = ((0.0, 0.333, 0.0), (0.0, 0.0, -math.pi / 2), (0.0, 0.316, math.pi / 2), (0.0825, 0.0, math.pi / 2),
       (-0.0825, 0.384, -math.pi / 2), (0.0, 0.0, math.pi / 2), (0.088, 0.0, math.pi / 2))


def _dh(a: float, d: float, alpha: float, theta: float) -> np.ndarray:
    ca, sa, ct, st = math.cos(alpha), math.sin(alpha), math.cos(theta), math.sin(theta)
    return np.array([[ct, -st, 0.0, a], [st * ca, ct * ca, -sa, -d * sa], [st * sa, ct * sa, ca, d * ca],
                     [0.0, 0.0, 0.0, 1.0]])


# flange (+0.107 m), hand turned −45°, grasp target between the fingertips (+0.105 m)
_FLANGE_TO_EE = _dh(0.0, 0.107, 0.0, 0.0) @ _dh(0.0, 0.0, 0.0, -math.pi / 4) @ _dh(0.0, 0.105, 0.0, 0.0)


def _frames(q: Sequence[float]) -> tuple[list[np.ndarray], np.ndarray]:
    joints: list[np.ndarray] = []
    t = np.eye(4)
    for (a, d, alpha), theta in zip(_DH, q, strict=True):
        t = t @ _dh(a, d, alpha, float(theta))
        joints.append(t)
    return joints, t @ _FLANGE_TO_EE


def forward(q: Sequence[float]) -> np.ndarray:
    """4×4 pose of the end effector (panda_grasptarget) at arm joint angles `q`, robot base at the origin."""
    return _frames(q)[1]


def jacobian(q: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The end-effector pose and the 6×7 geometric Jacobian (linear rows first) at `q`."""
    joints, ee = _frames(q)
    z = np.array([t[:3, 2] for t in joints])
    r = ee[:3, 3] - np.array([t[:3, 3] for t in joints])
    linear = np.stack([z[:, 1] * r[:, 2] - z[:, 2] * r[:, 1], z[:, 2] * r[:, 0] - z[:, 0] * r[:, 2],
                       z[:, 0] * r[:, 1] - z[:, 1] * r[:, 0]])
    return ee, np.vstack([linear, z.T])


def rotation_error(current: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Axis × angle (approximately, for small errors) turning `current` into `target` (3×3 matrices)."""
    a, b = current, target
    return 0.5 * np.array([(a[1] * b[2] - a[2] * b[1]).sum(), (a[2] * b[0] - a[0] * b[2]).sum(),
                           (a[0] * b[1] - a[1] * b[0]).sum()])


def refine(q0: Sequence[float], position: np.ndarray, rotation: np.ndarray, lower: Sequence[float],
           upper: Sequence[float], rest: Sequence[float], iterations: int = 60,
           damping: float = 0.02) -> tuple[np.ndarray, float, float]:
    """Damped-least-squares IK from `q0`: (angles within limits, position error m, angle error rad)."""
    q = np.clip(np.array(q0, dtype=float), lower, upper)
    lo, hi, rest_q = np.array(lower), np.array(upper), np.array(rest)
    target_p = np.asarray(position, dtype=float)
    for _ in range(iterations):
        ee, j = jacobian(q)
        e = np.concatenate([target_p - ee[:3, 3], rotation_error(ee[:3, :3], rotation)])
        if np.linalg.norm(e[:3]) < 3e-4 and np.linalg.norm(e[3:]) < 3e-3:
            break
        jjt = j @ j.T + damping**2 * np.eye(6)
        step = j.T @ np.linalg.solve(jjt, e)
        pinv_j = j.T @ np.linalg.solve(jjt, j)
        step += (np.eye(7) - pinv_j) @ (0.1 * (rest_q - q))
        q = np.clip(q + step, lo, hi)
    ee = forward(q)
    error = float(np.linalg.norm(ee[:3, 3] - target_p))
    cos = (np.trace(ee[:3, :3].T @ rotation) - 1.0) / 2.0
    return q, error, math.acos(max(-1.0, min(1.0, float(cos))))

"""A fixed pinhole camera: OpenGL matrices for pybullet, intrinsics/extrinsics, and lifting pixels with depth.

Pixels are (u, v) = (column, row), origin at the top-left corner. pybullet's depth buffer holds non-linear values
in [0, 1]; `metric_depth` turns them into distances along the optical axis, and `lift` turns a pixel and its metric
depth into a world point with the intrinsics (fx, fy, cx, cy) and the camera-to-world transform.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Camera:
    """Where the camera is, where it looks, its vertical field of view (degrees), image size and clip planes."""

    eye: tuple[float, float, float] = (0.95, 0.0, 1.05)
    target: tuple[float, float, float] = (0.5, 0.0, 0.0)
    up: tuple[float, float, float] = (-1.0, 0.0, 0.0)
    fov: float = 48.0
    width: int = 320
    height: int = 240
    near: float = 0.1
    far: float = 3.0
    _basis: np.ndarray = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        eye, target = np.array(self.eye, dtype=float), np.array(self.target, dtype=float)
        forward = target - eye
        forward /= np.linalg.norm(forward)
        right = np.cross(forward, np.array(self.up, dtype=float))
        right /= np.linalg.norm(right)
        down = np.cross(forward, right)
        # columns: the camera's x (image right), y (image down) and z (optical axis) axes in the world
        object.__setattr__(self, "_basis", np.stack([right, down, forward], axis=1))

    # -------------------------------------------------------------- intrinsics and extrinsics
    @property
    def fy(self) -> float:
        return 0.5 * self.height / math.tan(math.radians(self.fov) / 2)

    @property
    def fx(self) -> float:
        return self.fy     # square pixels

    @property
    def intrinsics(self) -> np.ndarray:
        """The 3×3 matrix K = [[fx, 0, cx], [0, fy, cy], [0, 0, 1]] (pixel centres at half-integers)."""
        return np.array([[self.fx, 0.0, self.width / 2], [0.0, self.fy, self.height / 2], [0.0, 0.0, 1.0]])

    @property
    def extrinsics(self) -> np.ndarray:
        """The 4×4 camera-to-world transform (camera axes: x right, y down, z forward)."""
        t = np.eye(4)
        t[:3, :3] = self._basis
        t[:3, 3] = self.eye
        return t

    # -------------------------------------------------------------- OpenGL matrices (column-major lists)
    def view_matrix(self) -> list[float]:
        forward = self._basis[:, 2]
        up = -self._basis[:, 1]
        right = self._basis[:, 0]
        eye = np.array(self.eye)
        m = np.eye(4)
        m[0, :3], m[1, :3], m[2, :3] = right, up, -forward
        m[:3, 3] = -m[:3, :3] @ eye
        return m.T.reshape(-1).tolist()

    def projection_matrix(self) -> list[float]:
        aspect = self.width / self.height
        f = 1.0 / math.tan(math.radians(self.fov) / 2)
        n, fa = self.near, self.far
        m = np.array([[f / aspect, 0, 0, 0], [0, f, 0, 0],
                      [0, 0, (fa + n) / (n - fa), 2 * fa * n / (n - fa)], [0, 0, -1, 0]])
        return m.T.reshape(-1).tolist()

    # -------------------------------------------------------------- depth and lifting
    def metric_depth(self, buffer: np.ndarray) -> np.ndarray:
        """Depth along the optical axis (metres) from pybullet's non-linear depth buffer."""
        n, f = self.near, self.far
        return f * n / (f - (f - n) * np.asarray(buffer, dtype=float))

    def lift(self, u: np.ndarray | float, v: np.ndarray | float, depth: np.ndarray | float) -> np.ndarray:
        """World points (…, 3) of pixels (u, v) at metric depths `depth` (pixel centres at u + 0.5, v + 0.5)."""
        u, v, d = np.asarray(u, dtype=float), np.asarray(v, dtype=float), np.asarray(depth, dtype=float)
        x = (u + 0.5 - self.width / 2) / self.fx * d
        y = (v + 0.5 - self.height / 2) / self.fy * d
        cam = np.stack([x, y, d], axis=-1)
        return cam @ self._basis.T + np.array(self.eye)

    def project(self, point: tuple[float, float, float] | np.ndarray) -> tuple[float, float]:
        """The (u, v) pixel coordinates where a world point appears (may lie outside the image)."""
        cam = self._basis.T @ (np.asarray(point, dtype=float) - np.array(self.eye))
        return (cam[0] / cam[2] * self.fx + self.width / 2 - 0.5, cam[1] / cam[2] * self.fy + self.height / 2 - 0.5)

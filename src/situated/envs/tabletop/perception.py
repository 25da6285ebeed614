"""Perception from one fixed camera: which objects are visible (segmentation) and where (lifted depth).

Every pixel is lifted to a world point with its depth; `noise` (a standard deviation in metres, drawn from a
seeded generator) is added to each lifted point, as a depth camera's error would be. Segmentation is exact.

An object is detected when at least `min_pixels` pixels of the segmentation image show it. Its position is
estimated from its lifted pixels alone: x and y from the middle of their extent (2nd–98th percentile), z halfway
between its top (98th percentile) and the surface it stands on (the median height of the pixels bordering it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .bullet import pybullet
from .camera import Camera
from .png import save_png


@dataclass(frozen=True)
class Detection:
    """A visible object: its name, estimated centre (m), pixel count and bounding box (u0, v0, u1, v1), exclusive."""

    name: str
    position: tuple[float, float, float]
    pixels: int
    box: tuple[int, int, int, int]


@dataclass(frozen=True, eq=False)
class Observation:
    """One rendered view: RGB (H, W, 3) uint8, metric depth (H, W), segmentation (body id, −1 background) and
    the lifted points (H, W, 3), noise included."""

    camera: Camera
    rgb: np.ndarray
    depth: np.ndarray
    segmentation: np.ndarray
    labels: Mapping[int, str]
    detections: tuple[Detection, ...]
    points: np.ndarray

    @property
    def names(self) -> tuple[str, ...]:
        """Names of the visible objects, in the order of their labels."""
        return tuple(d.name for d in self.detections)

    def find(self, name: str) -> Detection | None:
        return next((d for d in self.detections if d.name == name), None)

    def _check(self, u: int, v: int) -> None:
        if not (0 <= u < self.camera.width and 0 <= v < self.camera.height):
            raise ValueError(f"pixel ({u}, {v}) is outside the {self.camera.width}×{self.camera.height} image")

    def pixel_to_point(self, u: int, v: int) -> tuple[float, float, float]:
        """The world point seen at pixel (u, v) (column, row), lifted with its depth."""
        self._check(u, v)
        x, y, z = self.points[v, u]
        return float(x), float(y), float(z)

    def object_at_pixel(self, u: int, v: int) -> str | None:
        """The object seen at pixel (u, v), or None (table, robot, background)."""
        self._check(u, v)
        return self.labels.get(int(self.segmentation[v, u]))

    def save_png(self, path: str | Path) -> Path:
        return save_png(path, self.rgb)


def render(client: Any, camera: Camera) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """RGB, metric depth and segmentation (body ids) from pybullet's TinyRenderer."""
    _, _, rgba, depth, seg = client.getCameraImage(camera.width, camera.height, camera.view_matrix(),
                                                   camera.projection_matrix(), renderer=pybullet.ER_TINY_RENDERER,
                                                   shadow=0)
    shape = (camera.height, camera.width)
    rgb = np.asarray(rgba, dtype=np.uint8).reshape(*shape, 4)[:, :, :3].copy()
    depth_m = camera.metric_depth(np.asarray(depth, dtype=np.float64).reshape(shape))
    segmentation = np.asarray(seg, dtype=np.int64).reshape(shape)
    return rgb, depth_m, segmentation


def dilate(mask: np.ndarray, steps: int) -> np.ndarray:
    out = mask.copy()
    for _ in range(steps):
        grown = out.copy()
        grown[1:, :] |= out[:-1, :]
        grown[:-1, :] |= out[1:, :]
        grown[:, 1:] |= out[:, :-1]
        grown[:, :-1] |= out[:, 1:]
        out = grown
    return out


def perceive(client: Any, camera: Camera, labels: Mapping[int, str], min_pixels: int = 8, noise: float = 0.0,
             rng: np.random.Generator | None = None) -> Observation:
    """Render the scene and detect every labelled body with at least `min_pixels` visible pixels; `noise` (m) is
    the standard deviation of the error added to each lifted point (drawn from `rng`)."""
    rgb, depth, segmentation = render(client, camera)
    rows, cols = np.indices(segmentation.shape)
    points = camera.lift(cols, rows, depth)
    if noise > 0:
        if rng is None:
            raise ValueError("perception noise needs a seeded generator (rng)")
        points = points + rng.normal(0.0, noise, points.shape)
    detections: list[Detection] = []
    for uid, name in labels.items():
        mask = segmentation == uid
        count = int(mask.sum())
        if count < min_pixels:
            continue
        vs, us = np.nonzero(mask)
        v0, v1, u0, u1 = vs.min(), vs.max() + 1, us.min(), us.max() + 1
        pad = 3
        window = (slice(max(0, v0 - pad), v1 + pad), slice(max(0, u0 - pad), u1 + pad))
        local = mask[window]
        ring = dilate(local, 2) & ~local
        pts = points[window][local]
        low = np.percentile(pts, 2, axis=0)
        high = np.percentile(pts, 98, axis=0)
        border = points[window][ring]
        support = float(np.median(border[:, 2])) if len(border) else float(low[2])
        support = min(support, float(high[2]))
        centre = ((low[0] + high[0]) / 2, (low[1] + high[1]) / 2, (high[2] + support) / 2)
        detections.append(Detection(name, (float(centre[0]), float(centre[1]), float(centre[2])), count,
                                    (int(u0), int(v0), int(u1), int(v1))))
    return Observation(camera, rgb, depth, segmentation, dict(labels), tuple(detections), points)

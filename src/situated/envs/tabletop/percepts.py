"""Object poses estimated from one camera view: where each segmented object stands, how it is turned, how tall.

For each object the segmentation shows, its pixels are lifted to 3-D (with the view's `perception_noise`) and
smoothed: each point becomes the mean of the object's points in the 5×5 pixels around it (as depth cameras' point
clouds are filtered), which divides independent noise by up to 5. Then:

- its footprint's centre and heading: the smallest rectangle (2nd–98th percentile extents) around the points'
  x, y over headings in 2° steps; the body's long axis is put along the rectangle's long side (the catalogue knows
  each object's footprint), and for an object grasped off-centre (the mug) the side where most points lie;
- its top: the 98th percentile of the points' heights;
- its bottom: the surface around it (a low quantile of the heights of the pixels bordering it: table or container
  floor), or its top less its catalogue height when that is higher (an item standing on another).

What the camera does not show is not estimated: an object with fewer than `MIN_PIXELS` pixels is not seen.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .catalogue import ObjectSpec
from .perception import Observation, dilate

MIN_PIXELS = 8
SMOOTHING = 5              # pixels: the side of the window each point is averaged over (within its object)
ANGLES = np.radians(np.arange(0.0, 90.0, 2.0))
SUPPORT_QUANTILE = 20


@dataclass(frozen=True)
class Percept:
    """What the camera saw of one object: its footprint centre on its bottom (x, y, bottom z), heading (rad),
    top (m), visible pixels, and whether the robot's arm bordered it in the image (a partial view)."""

    name: str
    origin: tuple[float, float, float]
    yaw: float
    top: float
    pixels: int
    by_arm: bool = False


def _rectangle(xy: np.ndarray) -> tuple[np.ndarray, float, float, float]:
    """Centre (x, y), heading and the two extents of the smallest percentile rectangle around 2-D points."""
    c, s = np.cos(ANGLES), np.sin(ANGLES)
    a = xy[:, 0][None, :] * c[:, None] + xy[:, 1][None, :] * s[:, None]
    b = -xy[:, 0][None, :] * s[:, None] + xy[:, 1][None, :] * c[:, None]
    a_lo, a_hi = np.percentile(a, [2, 98], axis=1)
    b_lo, b_hi = np.percentile(b, [2, 98], axis=1)
    k = int(np.argmin((a_hi - a_lo) * (b_hi - b_lo)))
    ma, mb = (a_lo[k] + a_hi[k]) / 2, (b_lo[k] + b_hi[k]) / 2
    centre = np.array([ma * c[k] - mb * s[k], ma * s[k] + mb * c[k]])
    return centre, float(ANGLES[k]), float(a_hi[k] - a_lo[k]), float(b_hi[k] - b_lo[k])


def _heading(spec: ObjectSpec, xy: np.ndarray, centre: np.ndarray, angle: float, along: float,
             across: float) -> float:
    """The body's heading from the rectangle's: its long axis along the long side; off-centre grasps decide
    which way round."""
    long_x = spec.footprint[0] >= spec.footprint[1]
    if abs(spec.footprint[0] - spec.footprint[1]) > 0.01 and (along >= across) != long_x:
        angle += math.pi / 2
    offset = np.array(spec.grasp_offset)
    if offset.any():
        c, s = math.cos(angle), math.sin(angle)
        local = (xy - centre) @ np.array([[c, -s], [s, c]])
        if float(local.mean(axis=0) @ offset) < 0:
            angle += math.pi
    return math.remainder(angle, 2 * math.pi)


def estimate(name: str, spec: ObjectSpec, points: np.ndarray, border: np.ndarray, by_arm: bool) -> Percept:
    """One object's percept from its lifted points (N, 3) and the lifted points bordering it (M, 3)."""
    centre, angle, along, across = _rectangle(points[:, :2])
    top = float(np.percentile(points[:, 2], 98))
    support = float(np.percentile(border[:, 2], SUPPORT_QUANTILE)) if len(border) else float(points[:, 2].min())
    bottom = min(max(support, top - spec.height), top)
    yaw = _heading(spec, points[:, :2], centre, angle, along, across)
    return Percept(name, (float(centre[0]), float(centre[1]), bottom), yaw, top, len(points), by_arm)


def _box_sum(values: np.ndarray, k: int) -> np.ndarray:
    """Sums of `values` (H, W, ...) over the k×k window around each pixel (zeros beyond the edges)."""
    r = k // 2
    padded = np.pad(values, [(r + 1, r), (r + 1, r)] + [(0, 0)] * (values.ndim - 2))
    c = padded.cumsum(0).cumsum(1)
    return c[k:, k:] - c[:-k, k:] - c[k:, :-k] + c[:-k, :-k]


def smooth(points: np.ndarray, mask: np.ndarray, k: int = SMOOTHING) -> np.ndarray:
    """The mean of the masked points (H, W, 3) in the k×k window around each masked pixel: (N, 3), mask order."""
    sums = _box_sum(points * mask[..., None], k)
    counts = _box_sum(mask.astype(float), k)
    return (sums[mask] / counts[mask][:, None])


def estimate_all(observation: Observation, specs: Mapping[str, ObjectSpec], robot: int) -> dict[str, Percept]:
    """A percept for every labelled object with at least `MIN_PIXELS` pixels in the view."""
    out: dict[str, Percept] = {}
    segmentation, points = observation.segmentation, observation.points
    for uid, name in observation.labels.items():
        mask = segmentation == uid
        if int(mask.sum()) < MIN_PIXELS:
            continue
        vs, us = np.nonzero(mask)
        window = (slice(max(0, vs.min() - 3), vs.max() + 4), slice(max(0, us.min() - 3), us.max() + 4))
        local = mask[window]
        ring = dilate(local, 2) & ~local
        seg = segmentation[window]
        by_arm = bool((seg[ring] == robot).any())
        support = ring & (seg != robot)
        border = smooth(points[window], support) if support.any() else np.zeros((0, 3))
        out[name] = estimate(name, specs[name], smooth(points[window], local), border, by_arm)
    return out


def covered_by(observation: Observation, percept: Percept, uid: int, radius: float = 0.04) -> bool:
    """Whether body `uid` (the arm) shows in the image where the percept's object was (within `radius`)."""
    camera = observation.camera
    x, y, z = percept.origin
    centre = np.array([x, y, (z + percept.top) / 2])
    u, v = camera.project(centre)
    depth = float((camera.extrinsics[:3, :3].T @ (centre - np.array(camera.eye)))[2])
    r = max(1, round(radius * camera.fy / max(depth, 1e-6)))
    u0, v0 = round(u), round(v)
    window = observation.segmentation[max(0, v0 - r):max(0, v0 + r + 1), max(0, u0 - r):max(0, u0 + r + 1)]
    return bool((window == uid).any())

"""Where in a container to drop the next item: footprints as rows of discs, spots on a grid in the container's frame.

An item's footprint (a rectangle, turned) is covered by discs of its half width along its long axis, so a banana
is long and thin, not a 15 cm disc: it fits beside an apple in a bowl, and a second tall item fits beside the first
in a box. The first item goes off the centre, halfway to the farthest spot it may take (on the side of the arm's
base), leaving room for the next; each later one goes where it keeps a gap to what is inside (the widest, up to
1.5 cm), as near the centre as that allows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .catalogue import ContainerShape

STEP = 0.005             # grid step of the candidate spots (m)
WALL_MARGIN = 0.01       # the held item's discs this far from the inner walls: the camera's container and the
                         # grip's item are each off by a few mm, together up to about 8 mm
FINGER_MARGIN = 0.025    # the closed fingers reach this far beyond a held item's extent along their axis
REGRASP_MARGIN = 0.044   # ... and this far when they open to grasp it again (grasp_planning: GRASP_MARGIN + a
                         # finger's outer face): an item that only one heading holds (a banana) is not dropped
                         # against a wall the fingers could not get past to take it out
FIRST = 0.5              # the first item this far (a fraction) from the centre toward the farthest spot on x
CLEAR = 0.015            # a gap this wide to what is inside is enough: nearer the centre is better than wider
SHALLOW_RIM = 0.03       # a container whose rim is lower than this (a plate) is shallow
SHALLOW_KEEP = 0.03      # into a shallow container, the held item's centre at least this far inside its rim


@dataclass(frozen=True)
class Discs:
    """A footprint as discs: centres (n, 2) in the container's frame, relative to the item's centre, one radius."""

    centres: np.ndarray
    radius: float

    def extent(self, axis: int) -> float:
        """How far the footprint reaches from its centre along the container's x (0) or y (1) axis."""
        return float(np.max(np.abs(self.centres[:, axis]))) + self.radius


def discs(footprint: tuple[float, float], yaw: float) -> Discs:
    """A footprint (full x, y extents in the item's frame) turned by `yaw` in the container's frame: discs of its
    half width, at most half a radius apart, along its long axis."""
    hx, hy = footprint[0] / 2, footprint[1] / 2
    if hx < hy:
        hx, hy, yaw = hy, hx, yaw + math.pi / 2
    length = hx - hy
    count = max(1, math.ceil(2 * length / (hy / 2)) + 1) if length > 1e-6 else 1
    along = np.linspace(-length, length, count)
    axis = np.array([math.cos(yaw), math.sin(yaw)])
    return Discs(along[:, None] * axis[None, :], hy)


@dataclass(frozen=True)
class Content:
    """An item already in the container: its discs placed (centres in the container's frame) and its top (world z)."""

    centres: np.ndarray
    radius: float
    top: float


def _allowed(shape: ContainerShape, held: Discs, spots: np.ndarray, over_rim: bool = False,
             margin: float = FINGER_MARGIN) -> np.ndarray:
    """Which spots keep the held item (`WALL_MARGIN` away) and the fingers around it (they close along the
    container's y) within the inner walls; `over_rim`: only its centre `SHALLOW_KEEP` inside."""
    x, y = spots[:, 0], spots[:, 1]
    if over_rim:
        if shape.footprint == "circle":
            return np.hypot(x, y) <= shape.half_x - SHALLOW_KEEP
        return (np.abs(x) <= shape.half_x - SHALLOW_KEEP) & (np.abs(y) <= shape.half_y - SHALLOW_KEEP)
    points = spots[:, None, :] + held.centres[None, :, :]
    finger = held.extent(1) + margin
    if shape.footprint == "circle":
        body = np.all(np.hypot(points[..., 0], points[..., 1]) <= shape.half_x - WALL_MARGIN - held.radius, axis=1)
        return body & (np.hypot(x, np.abs(y) + finger) <= shape.half_x)
    body = np.all((np.abs(points[..., 0]) <= shape.half_x - WALL_MARGIN - held.radius)
                  & (np.abs(points[..., 1]) <= shape.half_y - WALL_MARGIN - held.radius), axis=1)
    return body & (np.abs(y) + finger <= shape.half_y)


def _grid(shape: ContainerShape) -> np.ndarray:
    nx, ny = round(shape.half_x / STEP), round(shape.half_y / STEP)
    xs, ys = np.linspace(-nx * STEP, nx * STEP, 2 * nx + 1), np.linspace(-ny * STEP, ny * STEP, 2 * ny + 1)
    return np.stack(np.meshgrid(xs, ys, indexing="ij"), axis=-1).reshape(-1, 2)


def gaps(held: Discs, spots: np.ndarray, content: Content) -> np.ndarray:
    """The clearance between the held item dropped at each spot and one item inside (negative: they overlap)."""
    points = spots[:, None, None, :] + held.centres[None, :, None, :] - content.centres[None, None, :, :]
    return np.min(np.linalg.norm(points, axis=-1), axis=(1, 2)) - held.radius - content.radius


def free_spot(shape: ContainerShape, held: Discs, contents: list[Content],
              nearer: np.ndarray | None = None, margin: float = FINGER_MARGIN) -> tuple[np.ndarray, float]:
    """Where to drop the held item (container-frame x, y) and the highest top of the contents it would land on
    (-inf: none). Empty: halfway from the centre to the farthest allowed spot, on the side of `nearer` (a direction
    in the container's frame, the arm's base); else the allowed spot with the widest gap to the contents
    (`_widest`). Into a shallow container (a plate) the item and the fingers may reach over the rim when no spot
    within it is clear.
    Where no spot is allowed (an item longer than the container), the centre. `margin`: how far the fingers reach
    beyond the item along their axis (`REGRASP_MARGIN` for an item that only one heading holds)."""
    grid = _grid(shape)
    spots = grid[_allowed(shape, held, grid, margin=margin)]
    shallow = shape.rim < SHALLOW_RIM
    if not contents:
        spot = _first(spots, nearer) if len(spots) else np.zeros(2)
    else:
        spot, widest = _widest(held, spots, contents)
        if shallow and widest < 0:
            spot, _ = _widest(held, grid[_allowed(shape, held, grid, over_rim=True)], contents)
    below = max((c.top for c in contents if gaps(held, spot[None, :], c)[0] < 0), default=-math.inf)
    return spot, below


def _first(spots: np.ndarray, nearer: np.ndarray | None) -> np.ndarray:
    """`FIRST` of the way from the centre to the farthest allowed spot along the container's x axis (across the
    fingers, which close along y), on the side of `nearer`."""
    axis = spots[np.abs(spots[:, 1]) == np.min(np.abs(spots[:, 1]))]
    reach = float(np.max(np.abs(axis[:, 0])))
    side = -1.0 if nearer is not None and float(nearer[0]) < 0 else 1.0
    return axis[int(np.argmin(np.abs(axis[:, 0] - side * reach * FIRST)))]


def _widest(held: Discs, spots: np.ndarray, contents: list[Content]) -> tuple[np.ndarray, float]:
    """The spot with the widest gap to the contents, up to `CLEAR`, and of those the nearest the centre (the best
    supported, away from the walls); and its gap (-inf when no spot is given)."""
    if len(spots) == 0:
        return np.zeros(2), -math.inf
    gap = np.min(np.stack([gaps(held, spots, c) for c in contents]), axis=0)
    score = np.minimum(gap, CLEAR)
    ties = np.flatnonzero(score >= float(np.max(score)) - 1e-9)
    best = int(ties[np.argmin(np.linalg.norm(spots[ties], axis=1))])
    return spots[best], float(gap[best])

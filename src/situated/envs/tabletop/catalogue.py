"""The objects a tabletop scene may contain: name, kind, shape, size and colour.

Sizes are in metres. Every body's frame has its origin at the centre of its footprint, on its bottom face (URDF
meshes are measured when loaded and shifted accordingly), so a placement `(x, y, yaw)` puts the object standing on
the table at `(x, y)`. Items fit the Panda's 8 cm gripper across their `grasp_width` axis (the body's local y).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Literal

Kind = Literal["fruit", "bottle", "can", "cup", "block", "toy", "sweet", "container"]
RGBA = tuple[float, float, float, float]


@dataclass(frozen=True)
class Part:
    """One collision-and-visual primitive of a compound body, in the body frame (origin on the bottom face)."""

    shape: Literal["box", "sphere", "cylinder"]
    size: tuple[float, ...]                       # box: full (x, y, z); sphere: (radius,); cylinder: (radius, height)
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    yaw: float = 0.0                              # rotation about the body's z axis
    roll: float = 0.0                             # rotation about the body's x axis (e.g. a wheel lying sideways)
    rgba: RGBA | None = None                      # None: the object's colour


@dataclass(frozen=True)
class ContainerShape:
    """The open inside of a container: footprint (rectangle or circle), floor height and rim height (body frame)."""

    footprint: Literal["rect", "circle"]
    half_x: float                                  # rect: inner half length; circle: inner radius
    half_y: float                                  # rect: inner half width; circle: same as half_x
    floor: float                                   # height of the inner floor's top face
    rim: float                                     # height of the wall tops


@dataclass(frozen=True)
class ObjectSpec:
    """A catalogue entry: what the object is and how to build it in the simulator."""

    name: str
    kind: Kind
    parts: tuple[Part, ...] = ()                  # primitives (empty when `urdf` is given)
    urdf: str = ""                                # a pybullet_data model, scaled by `scale`
    scale: float = 1.0
    rgba: RGBA = (0.7, 0.7, 0.7, 1.0)
    mass: float = 0.1                             # kg; 0 = static (containers stay put)
    footprint: tuple[float, float] = (0.05, 0.05)  # full x/y extent on the table, for layout and perception
    height: float = 0.05
    grasp_height: float | None = None             # height above the bottom where the fingers close (None: auto)
    grasp_offset: tuple[float, float] = (0.0, 0.0)  # grasp point in the body frame (x, y), e.g. the mug's cup
    grasp_yaw: float = 0.0                        # finger axis = the body's local y rotated by this angle
    grasp_slide: float = 0.0                      # a grasp may close this far along the body's local x from the
                                                  # grasp offset (a long item, off the end something leans on)
    container: ContainerShape | None = None
    alias_of: str = ""                            # `cube` is built exactly like `red_cube`

    @property
    def is_container(self) -> bool:
        return self.container is not None

    @property
    def radius(self) -> float:
        """Radius of the circle around the footprint (for collision-free layouts)."""
        return 0.5 * (self.footprint[0] ** 2 + self.footprint[1] ** 2) ** 0.5

    def grasp_turns(self) -> tuple[float, ...]:
        """Turns of the grasp about the vertical that also hold the object: any for round ones (every 30°), a
        quarter turn for those narrow both ways, none for long ones."""
        round_ = bool(self.parts) and all(p.shape in ("sphere", "cylinder") and p.position[:2] == (0.0, 0.0)
                                          and p.roll == 0.0 for p in self.parts)
        if round_:
            return tuple(k * math.pi / 6 for k in range(6))
        if max(self.footprint) < 0.07:
            return (0.0, math.pi / 2)
        return (0.0,)

    def grasp_z(self) -> float:
        """Height above the bottom where a top-down grasp closes: 2.5 cm below the top (at least 1.3 cm up), and
        never more than 3 cm below it, where the palm would press on the object."""
        z = self.grasp_height if self.grasp_height is not None else self.height - min(0.5 * self.height, 0.025)
        return max(0.013, z, self.height - 0.03)


def _walls(shape: ContainerShape, thickness: float, sides: int, rgba: RGBA | None = None) -> tuple[Part, ...]:
    """A floor plate and walls around `shape`: four walls for a rectangle, `sides` walls for a round one."""
    floor_t = shape.floor
    wall_h = shape.rim - floor_t
    if shape.footprint == "rect":
        hx, hy, t = shape.half_x, shape.half_y, thickness
        floor = Part("box", (2 * (hx + t), 2 * (hy + t), floor_t), (0.0, 0.0, floor_t / 2), rgba=rgba)
        z = floor_t + wall_h / 2
        return (floor,
                Part("box", (t, 2 * (hy + t), wall_h), (hx + t / 2, 0.0, z), rgba=rgba),
                Part("box", (t, 2 * (hy + t), wall_h), (-hx - t / 2, 0.0, z), rgba=rgba),
                Part("box", (2 * hx, t, wall_h), (0.0, hy + t / 2, z), rgba=rgba),
                Part("box", (2 * hx, t, wall_h), (0.0, -hy - t / 2, z), rgba=rgba))
    apothem = shape.half_x
    side = 2 * (apothem + thickness) * math.tan(math.pi / sides)
    parts = [Part("cylinder", (apothem + thickness, floor_t), (0.0, 0.0, floor_t / 2), rgba=rgba)]
    for k in range(sides):
        a = 2 * math.pi * k / sides
        d = apothem + thickness / 2
        parts.append(Part("box", (thickness, side, wall_h), (d * math.cos(a), d * math.sin(a), floor_t + wall_h / 2),
                          yaw=a, rgba=rgba))
    return tuple(parts)


def _box(size: tuple[float, float, float]) -> Part:
    return Part("box", size, (0.0, 0.0, size[2] / 2))


def _cylinder(radius: float, height: float, z0: float = 0.0) -> Part:
    return Part("cylinder", (radius, height), (0.0, 0.0, z0 + height / 2))


def _sphere(radius: float, z0: float = 0.0) -> Part:
    return Part("sphere", (radius,), (0.0, 0.0, z0 + radius))


_BOWL = ContainerShape("circle", 0.10, 0.10, 0.01, 0.055)
_PLATE = ContainerShape("circle", 0.095, 0.095, 0.008, 0.022)
_BOX = ContainerShape("rect", 0.12, 0.10, 0.01, 0.06)
_TRAY = ContainerShape("rect", 0.095, 0.095, 0.008, 0.057)     # pybullet_data's traybox at scale 0.4 (sloped walls)
_GIFT_BAG = ContainerShape("rect", 0.10, 0.065, 0.01, 0.07)

_WHEEL = (0.35, 0.35, 0.35, 1.0)

_ENTRIES: tuple[ObjectSpec, ...] = (
    # fruit
    ObjectSpec("apple", "fruit", (_sphere(0.032),), rgba=(0.80, 0.08, 0.08, 1.0), mass=0.15,
               footprint=(0.064, 0.064), height=0.064, grasp_height=0.034),
    ObjectSpec("banana", "fruit", (_box((0.15, 0.036, 0.032)),), rgba=(0.95, 0.85, 0.15, 1.0), mass=0.12,
               footprint=(0.15, 0.036), height=0.032, grasp_slide=0.05),
    ObjectSpec("pear", "fruit", (_cylinder(0.03, 0.05), _sphere(0.024, 0.042)), rgba=(0.65, 0.80, 0.20, 1.0),
               mass=0.15, footprint=(0.06, 0.06), height=0.09, grasp_height=0.065),
    ObjectSpec("strawberry", "fruit", (_cylinder(0.018, 0.03), _sphere(0.016, 0.014)), rgba=(0.90, 0.05, 0.20, 1.0),
               mass=0.03, footprint=(0.036, 0.036), height=0.046, grasp_height=0.02),
    # drinks and cans
    ObjectSpec("bottle", "bottle", (_cylinder(0.03, 0.13), _cylinder(0.013, 0.05, 0.13)),
               rgba=(0.20, 0.60, 0.35, 1.0), mass=0.2, footprint=(0.06, 0.06), height=0.18, grasp_height=0.155),
    ObjectSpec("soup_can", "can", (_cylinder(0.033, 0.10),), rgba=(0.85, 0.20, 0.15, 1.0), mass=0.25,
               footprint=(0.066, 0.066), height=0.10, grasp_height=0.07),
    ObjectSpec("mug", "cup", urdf="objects/mug.urdf", scale=0.7, rgba=(0.25, 0.45, 0.85, 1.0), mass=0.2,
               footprint=(0.058, 0.086), height=0.07, grasp_height=0.05, grasp_offset=(0.0, -0.014),
               grasp_yaw=1.5708),
    # blocks (pybullet_data's 5 cm cube)
    ObjectSpec("red_cube", "block", urdf="cube_small.urdf", rgba=(0.85, 0.10, 0.10, 1.0), mass=0.1,
               footprint=(0.05, 0.05), height=0.05),
    ObjectSpec("blue_cube", "block", urdf="cube_small.urdf", rgba=(0.10, 0.25, 0.85, 1.0), mass=0.1,
               footprint=(0.05, 0.05), height=0.05),
    ObjectSpec("green_cube", "block", urdf="cube_small.urdf", rgba=(0.10, 0.70, 0.20, 1.0), mass=0.1,
               footprint=(0.05, 0.05), height=0.05),
    # toys and sweets
    ObjectSpec("ball", "toy", (_sphere(0.03),), rgba=(0.95, 0.50, 0.05, 1.0), mass=0.06,
               footprint=(0.06, 0.06), height=0.06, grasp_height=0.032),
    ObjectSpec("duck", "toy", urdf="duck_vhacd.urdf", scale=0.7, rgba=(1.0, 0.85, 0.2, 1.0), mass=0.08,
               footprint=(0.058, 0.054), height=0.041),
    ObjectSpec("candy", "sweet", (_box((0.045, 0.026, 0.02)),), rgba=(0.95, 0.40, 0.70, 1.0), mass=0.02,
               footprint=(0.045, 0.026), height=0.02),
    ObjectSpec("toy_car", "toy", (Part("box", (0.09, 0.045, 0.022), (0.0, 0.0, 0.022)),
                                  Part("box", (0.045, 0.04, 0.018), (-0.008, 0.0, 0.042)),
                                  *(Part("cylinder", (0.011, 0.008), (sx * 0.028, sy * 0.0225, 0.011), roll=1.5708,
                                         rgba=_WHEEL) for sx in (-1, 1) for sy in (-1, 1))),
               rgba=(0.15, 0.35, 0.90, 1.0), mass=0.08, footprint=(0.09, 0.053), height=0.051, grasp_height=0.025,
               grasp_slide=0.02),
    # open-top containers (static)
    ObjectSpec("bowl", "container", _walls(_BOWL, 0.008, 8), rgba=(0.95, 0.95, 0.90, 1.0), mass=0.0,
               footprint=(0.234, 0.234), height=_BOWL.rim, container=_BOWL),
    ObjectSpec("plate", "container", _walls(_PLATE, 0.008, 8), rgba=(0.98, 0.98, 0.98, 1.0), mass=0.0,
               footprint=(0.222, 0.222), height=_PLATE.rim, container=_PLATE),
    ObjectSpec("box", "container", _walls(_BOX, 0.01, 4), rgba=(0.70, 0.50, 0.30, 1.0), mass=0.0,
               footprint=(0.26, 0.22), height=_BOX.rim, container=_BOX),
    ObjectSpec("tray", "container", urdf="tray/traybox.urdf", scale=0.4, rgba=(0.85, 0.85, 0.85, 1.0), mass=0.0,
               footprint=(0.242, 0.242), height=_TRAY.rim, container=_TRAY),
    ObjectSpec("gift_bag", "container", _walls(_GIFT_BAG, 0.006, 4), rgba=(0.75, 0.10, 0.45, 1.0), mass=0.0,
               footprint=(0.212, 0.142), height=_GIFT_BAG.rim, container=_GIFT_BAG),
)

_BY_NAME = {spec.name: spec for spec in _ENTRIES}
# The Vocal Sandbox scene's plain `cube`: built like the red cube, a separate object with its own name.
_BY_NAME["cube"] = replace(_BY_NAME["red_cube"], name="cube", alias_of="red_cube")
CATALOGUE: Mapping[str, ObjectSpec] = MappingProxyType(_BY_NAME)

ITEMS: tuple[str, ...] = tuple(n for n, s in CATALOGUE.items() if not s.is_container and not s.alias_of)
CONTAINERS: tuple[str, ...] = tuple(n for n, s in CATALOGUE.items() if s.is_container)


def spec(name: str) -> ObjectSpec:
    """The catalogue entry called `name` (KeyError if there is none)."""
    return CATALOGUE[name]

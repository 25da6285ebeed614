"""Tabletop scenes: which catalogue objects stand where, from a seeded layout or a versioned JSON file.

File format (`situated-tabletop-scene/1`)::

    {"format": "situated-tabletop-scene/1",
     "objects": [{"name": "apple", "x": 0.5, "y": 0.1, "yaw": 0.0}, {"name": "bowl"}]}

`x`, `y` (metres, robot base at the origin, x pointing away from it) and `yaw` (radians) are optional; objects
without a position are placed by a seeded, collision-free layout around the fixed ones, within the arm's reach.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ... import files
from ...errors import DataError
from .catalogue import CATALOGUE

FORMAT = "situated-tabletop-scene/1"
MAX_FILE_BYTES = 1_000_000
MAX_OBJECTS = 24

# Where objects may stand: distance of the footprint centre from the robot base (metres), the bearing from the
# robot's x axis (radians) and the table's edges (the robot sits on the table's near edge; the table spans
# x ∈ [-0.25, 1.25], y ∈ [-0.5, 0.5]).
REACH_MIN = 0.32
REACH_MAX = 0.74
MAX_BEARING = math.radians(58)
TABLE_X = (-0.25, 1.25)
TABLE_Y = (-0.46, 0.46)
CLEARANCE = 0.03          # free space between the circles around two footprints

BUILTIN_SCENES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    # Vocal Sandbox's gift-bag packing scene.
    "gift_bag": ("candy", "ball", "toy_car", "cube", "duck", "gift_bag", "tray"),
    # ProgPrompt-style tabletop scenes (one container; sorting into containers by kind).
    "fruit_bowl": ("banana", "apple", "strawberry", "bowl"),
    "sorting": ("apple", "banana", "pear", "bottle", "soup_can", "plate", "box"),
})


@dataclass(frozen=True)
class Placement:
    """One object of a scene: catalogue name, footprint centre (x, y) on the table and heading."""

    name: str
    x: float
    y: float
    yaw: float = 0.0


@dataclass(frozen=True)
class Scene:
    """A placed scene; `source` names where it came from (file path or built-in name) for messages."""

    placements: tuple[Placement, ...]
    source: str = "<scene>"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.placements)

    def to_dict(self) -> dict[str, Any]:
        """The scene in the file format, every position filled in."""
        return {"format": FORMAT, "objects": [{"name": p.name, "x": round(p.x, 4), "y": round(p.y, 4),
                                               "yaw": round(p.yaw, 4)} for p in self.placements]}

    def save(self, path: str | Path) -> Path:
        """Write the scene file (replacing `path` in one step); returns its path."""
        target = Path(path)
        files.write_text_atomic(target, json.dumps(self.to_dict(), indent=1) + "\n")
        return target


def reach_problem(x: float, y: float) -> str:
    """Why an object cannot stand at (x, y) for the arm to reach it ('' when it can)."""
    r = math.hypot(x, y)
    if r < REACH_MIN:
        return f"is too close to the robot base ({r:.2f} m, needs at least {REACH_MIN} m)"
    if r > REACH_MAX:
        return f"is out of the arm's reach ({r:.2f} m from the base, at most {REACH_MAX} m)"
    if abs(math.atan2(y, x)) > MAX_BEARING:
        return f"is too far to the side ({math.degrees(math.atan2(y, x)):.0f}°, at most ±58°)"
    return ""


def _table_problem(name: str, x: float, y: float) -> str:
    radius = CATALOGUE[name].radius
    if not (TABLE_X[0] + radius <= x <= TABLE_X[1] - radius and TABLE_Y[0] + radius <= y <= TABLE_Y[1] - radius):
        return "does not fit on the table there"
    return ""


def _overlap(name: str, x: float, y: float, placed: Sequence[Placement]) -> str:
    for other in placed:
        gap = math.hypot(x - other.x, y - other.y) - CATALOGUE[name].radius - CATALOGUE[other.name].radius
        if gap < CLEARANCE:
            return other.name
    return ""


def layout(names: Sequence[str], seed: int = 0, *, fixed: Mapping[int, Placement] | None = None,
           source: str = "<scene>") -> Scene:
    """A collision-free placement of `names` within reach; `fixed` maps list positions to given placements.

    Deterministic: the same names, fixed placements and seed give the same scene. Containers are placed before
    items (largest first). Raises DataError naming `source` when a name is unknown or repeated, or an object
    cannot be placed.
    """
    fixed = dict(fixed or {})
    _check_names(names, source)
    if len(names) > MAX_OBJECTS:
        raise DataError(f"{source}: objects: {len(names)} objects, at most {MAX_OBJECTS} fit on the table")
    rng = random.Random(seed)
    placed: dict[int, Placement] = {}
    for k, p in fixed.items():
        where = f"{source}: objects[{k}]"
        problem = reach_problem(p.x, p.y) or _table_problem(p.name, p.x, p.y)
        if problem:
            raise DataError(f"{where}.x: '{p.name}' at ({p.x:.2f}, {p.y:.2f}) {problem}")
        other = _overlap(p.name, p.x, p.y, list(placed.values()))
        if other:
            raise DataError(f"{where}: '{p.name}' at ({p.x:.2f}, {p.y:.2f}) overlaps '{other}'")
        placed[k] = p
    free = sorted((k for k in range(len(names)) if k not in fixed),
                  key=lambda k: (not CATALOGUE[names[k]].is_container, -CATALOGUE[names[k]].radius, k))
    for k in free:
        placed[k] = _sample(names[k], rng, list(placed.values()), source, len(names))
    return Scene(tuple(placed[k] for k in range(len(names))), source)


def _sample(name: str, rng: random.Random, placed: list[Placement], source: str, count: int) -> Placement:
    for _ in range(2000):
        r = rng.uniform(REACH_MIN, REACH_MAX)
        bearing = rng.uniform(-MAX_BEARING, MAX_BEARING)
        yaw = rng.uniform(-math.pi / 2, math.pi / 2) if CATALOGUE[name].is_container else rng.uniform(-math.pi,
                                                                                                      math.pi)
        x, y = r * math.cos(bearing), r * math.sin(bearing)
        if _table_problem(name, x, y) or _overlap(name, x, y, placed):
            continue
        return Placement(name, x, y, yaw)
    raise DataError(f"{source}: objects: cannot place '{name}': no free spot within the arm's reach "
                    f"({count} objects are too many or too large)")


def _check_names(names: Sequence[str], source: str) -> None:
    seen: set[str] = set()
    for k, name in enumerate(names):
        if name not in CATALOGUE:
            raise DataError(f"{source}: objects[{k}].name: unknown object {name!r} (known: {', '.join(CATALOGUE)})")
        if name in seen:
            raise DataError(f"{source}: objects[{k}].name: {name!r} appears twice")
        seen.add(name)


def builtin_scene(name: str, seed: int = 0) -> Scene:
    """A built-in scene (see BUILTIN_SCENES) laid out with `seed`."""
    if name not in BUILTIN_SCENES:
        raise DataError(f"unknown built-in scene {name!r} (known: {', '.join(BUILTIN_SCENES)})")
    return layout(BUILTIN_SCENES[name], seed, source=name)


def scene_from_dict(data: Any, source: str = "<scene>", seed: int = 0) -> Scene:
    """Validate scene data (the file format) and lay it out; DataError naming `source` and the field."""
    if not isinstance(data, dict):
        raise DataError(f"{source}: a scene is a JSON object with 'format' and 'objects'")
    unknown = sorted(set(data) - {"format", "objects", "description"})
    if unknown:
        raise DataError(f"{source}: {unknown[0]}: unknown field (expected format, objects, description)")
    if data.get("format") != FORMAT:
        raise DataError(f"{source}: format: expected {FORMAT!r}, got {data.get('format')!r}")
    objects = data.get("objects")
    if not isinstance(objects, list) or not objects:
        raise DataError(f"{source}: objects: expected a non-empty list of objects")
    names: list[str] = []
    fixed: dict[int, Placement] = {}
    for k, entry in enumerate(objects):
        where = f"{source}: objects[{k}]"
        if not isinstance(entry, dict):
            raise DataError(f"{where}: expected an object like {{\"name\": \"apple\"}}")
        extra = sorted(set(entry) - {"name", "x", "y", "yaw"})
        if extra:
            raise DataError(f"{where}.{extra[0]}: unknown field (expected name, x, y, yaw)")
        name = entry.get("name")
        if not isinstance(name, str):
            raise DataError(f"{where}.name: expected a string, got {name!r}")
        names.append(name)
        numbers = {key: _number(entry[key], f"{where}.{key}") for key in ("x", "y", "yaw") if key in entry}
        if ("x" in numbers) != ("y" in numbers):
            raise DataError(f"{where}.{'y' if 'x' in numbers else 'x'}: give both x and y, or neither")
        if "x" in numbers:
            fixed[k] = Placement(name, numbers["x"], numbers["y"], numbers.get("yaw", 0.0))
    _check_names(names, source)
    return layout(names, seed, fixed=fixed, source=source)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise DataError(f"{where}: expected a number, got {value!r}")
    return float(value)


def load_scene(path: str | Path, seed: int = 0) -> Scene:
    """Read a scene file (UTF-8 JSON, at most 1 MB); DataError naming the file and field when it is malformed."""
    data = files.read_json(path, what="scene file", limit=MAX_FILE_BYTES)
    return scene_from_dict(data, str(path), seed)


def resolve_scene(scene: Scene | Sequence[str] | str | Path, seed: int = 0) -> Scene:
    """A Scene from a Scene, a list of catalogue names, a built-in scene's name or a scene file's path."""
    if isinstance(scene, Scene):
        return scene
    if isinstance(scene, str) and scene in BUILTIN_SCENES:
        return builtin_scene(scene, seed)
    if isinstance(scene, str) and not scene.endswith(".json") and not Path(scene).exists():
        raise DataError(f"{scene}: neither a built-in scene ({', '.join(BUILTIN_SCENES)}) nor a scene file")
    if isinstance(scene, str | Path):
        return load_scene(scene, seed)
    return layout(list(scene), seed)

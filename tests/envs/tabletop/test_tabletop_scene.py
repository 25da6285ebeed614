"""Scenes: seeded collision-free layouts within reach, the versioned scene file, and its errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from situated.envs.tabletop.catalogue import CATALOGUE, CONTAINERS, ITEMS
from situated.envs.tabletop.scene import (
    BUILTIN_SCENES,
    CLEARANCE,
    FORMAT,
    REACH_MAX,
    REACH_MIN,
    builtin_scene,
    layout,
    load_scene,
    reach_problem,
    resolve_scene,
    scene_from_dict,
)
from situated.errors import DataError


def test_catalogue_names_kinds_and_sizes() -> None:
    assert set(ITEMS) == {"apple", "banana", "pear", "strawberry", "bottle", "soup_can", "mug", "red_cube",
                          "blue_cube", "green_cube", "ball", "duck", "candy", "toy_car"}
    assert set(CONTAINERS) == {"bowl", "plate", "box", "tray", "gift_bag"}
    assert CATALOGUE["cube"].alias_of == "red_cube" and CATALOGUE["cube"].kind == "block"
    kinds = {CATALOGUE[n].kind for n in ITEMS}
    assert {"fruit", "bottle", "can", "block", "toy"} <= kinds
    for name in ITEMS:   # every item fits the 8 cm gripper across its grasp axis
        spec = CATALOGUE[name]
        across = spec.footprint[0] if abs(spec.grasp_yaw) > 1 else spec.footprint[1]
        assert across < 0.075, name


def _assert_valid(scene) -> None:
    for p in scene.placements:
        assert REACH_MIN <= math.hypot(p.x, p.y) <= REACH_MAX, p
        assert reach_problem(p.x, p.y) == ""
    for i, a in enumerate(scene.placements):
        for b in scene.placements[i + 1:]:
            gap = math.hypot(a.x - b.x, a.y - b.y) - CATALOGUE[a.name].radius - CATALOGUE[b.name].radius
            assert gap >= CLEARANCE - 1e-9, (a.name, b.name)


def test_layout_is_deterministic_collision_free_and_within_reach() -> None:
    names = ["bowl", "box", *ITEMS]
    first, again, other = layout(names, seed=7), layout(names, seed=7), layout(names, seed=8)
    assert first == again
    assert first != other
    assert first.names == tuple(names)      # the given order is kept
    for scene in (first, other):
        _assert_valid(scene)


@pytest.mark.parametrize("name", sorted(BUILTIN_SCENES))
def test_builtin_scenes(name: str) -> None:
    scene = builtin_scene(name, seed=3)
    assert scene.names == BUILTIN_SCENES[name]
    _assert_valid(scene)
    assert set(BUILTIN_SCENES["gift_bag"]) == {"candy", "ball", "toy_car", "cube", "duck", "gift_bag", "tray"}


def test_file_round_trip_and_partial_positions(tmp_path: Path) -> None:
    scene = layout(["apple", "bowl", "duck"], seed=1)
    path = scene.save(tmp_path / "scene.json")
    again = load_scene(path)
    assert [(p.name, round(p.x, 4), round(p.y, 4)) for p in again.placements] == \
        [(p.name, round(p.x, 4), round(p.y, 4)) for p in scene.placements]
    # positions are optional: the fixed one stays, the others are laid out around it by the seed
    data = {"format": FORMAT, "objects": [{"name": "apple", "x": 0.5, "y": 0.0, "yaw": 0.3}, {"name": "bowl"},
                                          {"name": "duck"}]}
    mixed = scene_from_dict(data, "mixed.json", seed=4)
    assert mixed.placements[0].x == 0.5 and mixed.placements[0].yaw == 0.3
    assert mixed == scene_from_dict(data, "mixed.json", seed=4)
    _assert_valid(mixed)


def _objects(*entries: dict) -> dict:
    return {"format": FORMAT, "objects": list(entries)}


@pytest.mark.parametrize(("data", "fragment"), [
    (_objects({"name": "apple"}, {"name": "bowl"}, {"name": "duck"}, {"name": "apel"}),
     "scene.json: objects[3].name: unknown object 'apel' (known: apple, banana"),
    (_objects({"name": "apple"}, {"name": "apple"}), "scene.json: objects[1].name: 'apple' appears twice"),
    (_objects({"name": "apple", "x": "0.5", "y": 0.1}), "scene.json: objects[0].x: expected a number, got '0.5'"),
    (_objects({"name": "apple", "x": True, "y": 0.1}), "scene.json: objects[0].x: expected a number"),
    (_objects({"name": "apple", "x": 0.5}), "scene.json: objects[0].y: give both x and y"),
    (_objects({"name": "apple", "x": 1.1, "y": 0.0}), "scene.json: objects[0].x: 'apple' at (1.10, 0.00) is out of"),
    (_objects({"name": "apple", "x": 0.1, "y": 0.0}), "objects[0].x: 'apple' at (0.10, 0.00) is too close"),
    (_objects({"name": "apple", "x": 0.5, "y": 0.0}, {"name": "ball", "x": 0.52, "y": 0.02}),
     "scene.json: objects[1]: 'ball' at (0.52, 0.02) overlaps 'apple'"),
    (_objects({"name": "apple", "colour": "red"}), "scene.json: objects[0].colour: unknown field"),
    (_objects("apple"), "scene.json: objects[0]: expected an object"),
    ({"format": "situated-tabletop-scene/2", "objects": [{"name": "apple"}]}, "scene.json: format: expected"),
    ({"objects": [{"name": "apple"}]}, "scene.json: format: expected 'situated-tabletop-scene/1', got None"),
    ({"format": FORMAT, "objects": []}, "scene.json: objects: expected a non-empty list"),
    ({"format": FORMAT, "objects": [{"name": n} for n in ["bowl", "plate", "box", "tray", "gift_bag", *ITEMS]]},
     "scene.json: objects: cannot place"),
    ([1, 2], "scene.json: a scene is a JSON object"),
])
def test_scene_file_errors_name_the_field(tmp_path: Path, data: object, fragment: str) -> None:
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataError) as caught:
        load_scene(path)
    message = str(caught.value)
    assert fragment in message
    assert "\n" not in message


def test_scene_file_unreadable_or_not_json(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"missing\.json: cannot read scene file: No such file"):
        load_scene(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": ', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.json: line 1, column 12: invalid JSON"):
        load_scene(bad)
    nan = tmp_path / "nan.json"
    nan.write_text('{"format": "situated-tabletop-scene/1", "objects": [{"name": "apple", "x": NaN, "y": 0}]}')
    with pytest.raises(DataError, match=r"nan\.json: line 1, column 76: NaN is not a JSON number"):
        load_scene(nan)
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{}")
    with pytest.raises(DataError, match=r"binary\.json: line 1, column 1: not UTF-8"):
        load_scene(binary)


def test_unknown_builtin_scene() -> None:
    with pytest.raises(DataError, match="unknown built-in scene 'kitchen'"):
        builtin_scene("kitchen")
    with pytest.raises(DataError, match=r"^kitchen: neither a built-in scene \(gift_bag, fruit_bowl, sorting\)"):
        resolve_scene("kitchen")
    assert resolve_scene(["apple", "bowl"], seed=2) == layout(["apple", "bowl"], seed=2)

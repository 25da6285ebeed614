"""TabletopEnv as an Environment: the protocol, descriptions, snapshots, vocabulary and affordances."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from situated.envs.base import Environment
from situated.envs.tabletop import FORMAT, SKILLS, TabletopEnv
from situated.errors import DataError
from situated.program import Call, Condition, Var


@pytest.fixture(scope="module")
def env() -> Iterator[TabletopEnv]:
    environment = TabletopEnv("gift_bag", seed=0)
    yield environment
    environment.close()


def test_is_an_environment_with_the_skill_set(env: TabletopEnv) -> None:
    assert isinstance(env, Environment)
    assert SKILLS == {"go_home": 0, "goto": 1, "grasp": 0, "release": 0, "pickup": 1, "grab_and_putin": 2}


def test_describe_in_words(env: TabletopEnv) -> None:
    assert env.reset() == ("You see: ball (on table), candy (on table), cube (on table), duck (on table), "
                           "gift_bag (container), toy_car (on table), tray (container). The gripper holds nothing.")
    assert env.step(Call("grab_and_putin", ("ball", "tray"))).ok
    assert env.describe(near="tray") == "You see: tray (container); inside tray: ball."
    assert env.describe(near="ball") == "You see: ball (inside tray)."
    assert env.describe(near="apel") == "You see no apel on the table."
    assert env.step(Call("pickup", ("duck",))).ok
    assert env.describe().endswith("toy_car (on table), tray (container). The gripper holds duck.")
    assert env.describe(near="duck") == "You see: duck (held)."


def test_snapshot_is_json_and_tells_what_is_where(env: TabletopEnv) -> None:
    env.reset()
    assert env.step(Call("grab_and_putin", ("candy", "gift_bag"))).ok
    assert env.step(Call("pickup", ("cube",))).ok
    snapshot = json.loads(json.dumps(env.snapshot()))
    assert snapshot["held"] == "cube"
    assert snapshot["inside"] == {"candy": "gift_bag"}
    assert snapshot["on"] == {"ball": "table", "duck": "table", "toy_car": "table"}
    assert set(snapshot["objects"]) == {"candy", "ball", "toy_car", "cube", "duck", "gift_bag", "tray"}
    assert snapshot["objects"]["tray"]["kind"] == "container" and snapshot["objects"]["duck"]["kind"] == "toy"
    assert snapshot["objects"]["candy"]["visible"] is True      # in the gift bag, seen over its 7 cm walls
    x, y, _ = snapshot["objects"]["duck"]["position"]
    assert 0.3 < (x * x + y * y) ** 0.5 < 0.75
    assert snapshot["time"] > 5.0


def test_vocabulary_and_affordances(env: TabletopEnv) -> None:
    env.reset()
    properties = env.object_properties()
    assert properties["duck"] == frozenset({"GRABBABLE"})
    assert properties["gift_bag"] == frozenset({"CONTAINER"})
    assert set(env.object_names()) == set(properties)
    assert env.kinds()["candy"] == "sweet" and env.kinds()["cube"] == "block"
    facts = env.conditions()
    assert facts == {"ball ON table", "candy ON table", "cube ON table", "duck ON table", "toy_car ON table"}


def test_conditions_with_unknown_names_or_unbound_variables_are_false(env: TabletopEnv) -> None:
    env.reset()
    assert not env.holds(Condition("inside", ("apel", "tray")))
    assert env.holds(Condition("inside", ("apel", "tray"), negated=True))
    assert not env.holds(Condition("close", (Var("item"),)))
    assert not env.holds(Condition("state", ("duck", "opened")))
    assert env.step(Call("pickup", (Var("item"),))).reason == "pickup: loop variable 'item' is not bound"


def test_from_file_and_seed(tmp_path: Path) -> None:
    path = tmp_path / "scene.json"
    path.write_text(json.dumps({"format": FORMAT, "objects": [{"name": "banana", "x": 0.45, "y": -0.1, "yaw": 0.5},
                                                              {"name": "bowl"}]}))
    env = TabletopEnv.from_file(path, seed=2)
    try:
        assert env.scene.source == str(path) and env.scene.names == ("banana", "bowl")
        x, y, _ = env.snapshot()["objects"]["banana"]["position"]
        assert abs(x - 0.45) < 0.005 and abs(y + 0.1) < 0.005
        assert env.step(Call("grab_and_putin", ("banana", "bowl"))).ok
    finally:
        env.close()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": FORMAT, "objects": [{"name": "bananna"}]}))
    with pytest.raises(DataError, match=r"bad\.json: objects\[0\]\.name: unknown object 'bananna'"):
        TabletopEnv.from_file(bad)
    with pytest.raises(ValueError, match="slip_probability"):
        TabletopEnv(["apple"], slip_probability=1.5)

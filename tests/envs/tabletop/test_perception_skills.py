"""The skills aim with the camera: objects moved behind the planner's back, hidden objects, noisy depth."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from situated.envs.tabletop import CONTAINERS, TabletopEnv
from situated.program import Call, Condition


@pytest.fixture(scope="module")
def env() -> Iterator[TabletopEnv]:
    environment = TabletopEnv("gift_bag", seed=0)
    yield environment
    environment.close()


@pytest.fixture
def fresh(env: TabletopEnv) -> TabletopEnv:
    env.reset()
    return env


def _move(env: TabletopEnv, name: str, x: float, y: float, z: float = 0.03) -> None:
    """Move an object in the simulator only: nobody tells the planner or the skills."""
    env.world.client.resetBasePositionAndOrientation(env.world.bodies[name].uid, [x, y, z], [0, 0, 0, 1])
    env.world.settle(1.0)


def test_an_object_moved_in_the_simulator_is_reached_through_the_camera(fresh: TabletopEnv) -> None:
    before = fresh.percepts()["duck"].origin
    _move(fresh, "duck", 0.45, -0.05)
    seen = fresh.percepts()["duck"]
    truth = fresh.world.origin("duck")
    assert np.hypot(*(np.array(seen.origin[:2]) - np.array(before[:2]))) > 0.1     # it really moved
    assert np.hypot(*(np.array(seen.origin[:2]) - truth[:2])) < 0.01               # and the camera saw where to
    result = fresh.step(Call("pickup", ("duck",)))
    assert result.ok, result.reason
    assert fresh.holds(Condition("holds", ("duck",)))
    assert fresh.step(Call("goto", ("tray",))).ok and fresh.step(Call("release")).ok
    assert fresh.holds(Condition("inside", ("duck", "tray")))


def test_perceived_poses_match_the_scene_within_a_centimetre(fresh: TabletopEnv) -> None:
    for name, percept in fresh.percepts().items():
        assert np.hypot(*(np.array(percept.origin[:2]) - fresh.world.origin(name)[:2])) < 0.01, name
        assert abs(percept.top - fresh.world.top(name)) < 0.01, name


def test_an_object_the_camera_cannot_see_is_a_clear_failure(fresh: TabletopEnv) -> None:
    _move(fresh, "duck", 0.5, 0.0, -0.3)                         # under the table: out of the camera's view
    assert "duck" not in fresh.percepts()
    assert fresh.step(Call("pickup", ("duck",))).reason == "pickup: I cannot see the duck"
    assert fresh.step(Call("goto", ("duck",))).reason == "goto: I cannot see the duck"
    assert fresh.step(Call("grab_and_putin", ("duck", "tray"))).reason == "grab_and_putin: I cannot see the duck"
    fresh.reset()
    # inside the 7 cm deep gift bag the candy is seen over the walls and can be taken out again (in the 16 cm bag
    # it was hidden, and the hand could not reach below the rim: every item put in stayed there)
    assert fresh.step(Call("grab_and_putin", ("candy", "gift_bag"))).ok
    assert "candy" in fresh.percepts()
    assert fresh.step(Call("pickup", ("candy",))).ok
    assert fresh.holds(Condition("holds", ("candy",)))


@pytest.mark.parametrize("container", CONTAINERS)
def test_a_second_item_goes_in_beside_the_first(container: str) -> None:
    # the evaluation's 'put the mug and the soup can in the box' with distractors, its 0.5B plan (apple, then can):
    # the can's spot away from the apple lay against the wall, where the camera's few mm put it on the rim
    env = TabletopEnv(["mug", "soup_can", container, "apple", "ball"], seed=0)
    try:
        for item in ("apple", "soup_can"):
            result = env.step(Call("grab_and_putin", (item, container)))
            assert result.ok, (item, result.reason)
        assert env.holds(Condition("inside", ("apple", container)))
        assert env.holds(Condition("inside", ("soup_can", container)))
    finally:
        env.close()


def test_the_arm_hiding_an_object_keeps_its_last_percept(fresh: TabletopEnv) -> None:
    seen = fresh.percepts()["cube"]
    assert fresh.step(Call("goto", ("cube",))).ok                 # the hand now hovers between camera and cube
    assert fresh.percepts()["cube"].origin == seen.origin         # where it was last seen whole
    assert fresh.step(Call("grasp")).ok and fresh.holds(Condition("holds", ("cube",)))


@pytest.mark.parametrize("noise", [0.01, 0.02])
def test_grasps_hold_under_perception_noise(noise: float) -> None:
    # the documented level (TabletopEnv's docstring, docs/sandbox.md "Perception"): every grasp of the scene holds
    for seed in (1, 2):
        env = TabletopEnv("gift_bag", seed=seed, perception_noise=noise)
        try:
            for item in ("candy", "duck", "toy_car"):
                env.reset()
                result = env.step(Call("pickup", (item,)))
                assert result.ok and env.world.held_name() == item, (seed, item, result.reason)
        finally:
            env.close()


def test_noise_is_seeded_and_moves_the_percepts() -> None:
    runs = []
    for _ in range(2):
        env = TabletopEnv("gift_bag", seed=3, perception_noise=0.01)
        try:
            runs.append(env.percepts()["ball"].origin)
            clean = TabletopEnv("gift_bag", seed=3)
            try:
                runs.append(clean.percepts()["ball"].origin)
            finally:
                clean.close()
        finally:
            env.close()
    assert runs[0] == runs[2] and runs[1] == runs[3]              # the same seed, the same draws
    assert runs[0] != runs[1]                                      # noise changes what the camera reports
    with pytest.raises(ValueError, match="perception_noise"):
        TabletopEnv("gift_bag", perception_noise=-0.01)

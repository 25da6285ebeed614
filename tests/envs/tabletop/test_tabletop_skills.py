"""Skills with real motion: every item into every kind of container, failures with reasons, Cartesian tracking."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest

from situated.envs.tabletop import CONTAINERS, ITEMS, TabletopEnv
from situated.envs.tabletop.bodies import to_world
from situated.program import Call, Condition


@pytest.fixture(scope="module")
def env() -> Iterator[TabletopEnv]:
    environment = TabletopEnv("gift_bag", seed=0)
    yield environment
    environment.close()


@pytest.fixture
def fresh(env: TabletopEnv) -> TabletopEnv:
    env.reset()
    env.slip_probability = 0.0
    return env


@pytest.mark.parametrize("container", CONTAINERS)
def test_grab_and_putin_puts_every_item_in_every_kind_of_container(container: str) -> None:
    # every item once, spread over the five containers (the other 56 pairs: test_grab_and_putin_all_pairs, slow)
    items = [item for k, item in enumerate(ITEMS) if k % len(CONTAINERS) == CONTAINERS.index(container)]
    env = TabletopEnv([container, *ITEMS], seed=0)     # a crowded table: the neighbours must not get in the way
    try:
        for item in items:
            env.reset()
            result = env.step(Call("grab_and_putin", (item, container)))
            assert result.ok, (item, container, result.reason)
            assert f"+ {item} INSIDE {container}" in result.changes
            assert env.holds(Condition("inside", (item, container)))
            assert f"{item} INSIDE {container}" in env.conditions()
            assert env.world.held_name() is None
    finally:
        env.close()


@pytest.mark.slow
@pytest.mark.parametrize("container", CONTAINERS)
def test_grab_and_putin_all_pairs(container: str) -> None:
    # the 56 pairs the test above leaves out, on another layout
    env = TabletopEnv([container, *ITEMS], seed=5)
    try:
        failed = []
        for item in [item for k, item in enumerate(ITEMS) if k % len(CONTAINERS) != CONTAINERS.index(container)]:
            env.reset()
            result = env.step(Call("grab_and_putin", (item, container)))
            if not result.ok:
                failed.append((item, result.reason))
        assert not failed
    finally:
        env.close()


def test_vocal_sandbox_skills_pack_the_gift_bag(fresh: TabletopEnv) -> None:
    for call in (Call("goto", ("duck",)), Call("grasp"), Call("goto", ("gift_bag",)), Call("release"),
                 Call("pickup", ("CANDY",)), Call("goto", ("Gift Bag",)), Call("release"), Call("go_home")):
        result = fresh.step(call)
        assert result.ok, (call, result.reason)
    assert fresh.holds(Condition("inside", ("duck", "gift_bag")))
    assert fresh.holds(Condition("inside", ("candy", "gift_bag")))
    home, _ = fresh.ee_pose()
    assert np.allclose(home, (0.307, 0.0, 0.485), atol=0.005)


def test_conditions_follow_the_geometry(fresh: TabletopEnv) -> None:
    held, inside, close = (Condition("holds", ("duck",)), Condition("inside", ("duck", "tray")),
                           Condition("close", ("duck",)))
    assert not fresh.holds(held) and not fresh.holds(inside) and not fresh.holds(close)
    assert fresh.holds(Condition("on", ("duck", "table")))
    assert fresh.holds(Condition("holds", ("duck",), negated=True))
    assert fresh.step(Call("goto", ("duck",))).ok
    assert fresh.holds(close) and not fresh.holds(Condition("close", ("tray",)))
    result = fresh.step(Call("grasp"))
    assert result.ok and "+ duck HELD" in result.changes
    assert fresh.holds(held) and fresh.holds(Condition("inside", ("duck", "hands")))
    assert not fresh.holds(Condition("on", ("duck", "table")))
    assert fresh.holds(Condition("state", ("gripper", "closed")))
    assert "duck HELD" in fresh.conditions()
    assert fresh.step(Call("goto", ("tray",))).ok
    assert fresh.holds(Condition("close", ("tray",)))
    result = fresh.step(Call("release"))
    assert result.changes == ("+ duck INSIDE tray", "- duck HELD")
    assert fresh.holds(inside) and fresh.holds(Condition("on", ("duck", "tray")))
    assert not fresh.holds(Condition("inside", ("duck", "tray"), negated=True))
    assert not fresh.holds(Condition("inside", ("duck", "gift_bag")))
    assert not fresh.holds(held)
    assert fresh.holds(Condition("state", ("gripper", "opened")))
    assert "duck INSIDE tray" in fresh.conditions() and "duck ON table" not in fresh.conditions()


def test_slipping_grasp_fails_with_a_reason(fresh: TabletopEnv) -> None:
    fresh.slip_probability = 1.0
    result = fresh.step(Call("pickup", ("duck",)))
    assert not result.ok
    assert result.reason == "pickup: the duck slipped out of the gripper"
    assert not fresh.holds(Condition("holds", ("duck",)))
    assert fresh.holds(Condition("on", ("duck", "table")))
    result = fresh.step(Call("grab_and_putin", ("ball", "tray")))
    assert result.reason == "grab_and_putin: the ball slipped out of the gripper"


def test_slips_are_seeded() -> None:
    outcomes = []
    for _ in range(2):
        env = TabletopEnv(["ball", "candy", "duck", "tray"], seed=11, slip_probability=0.5)
        try:
            outcomes.append([env.step(Call("grab_and_putin", (item, "tray"))).reason
                             for item in ("ball", "candy", "duck")])
        finally:
            env.close()
    assert outcomes[0] == outcomes[1]
    assert any(outcomes[0]) and not all(outcomes[0])    # seed 11 gives both outcomes (a check on the draw)


def test_grasping_nothing_and_unreachable_poses_fail_with_reasons(fresh: TabletopEnv) -> None:
    assert fresh.step(Call("grasp")).reason == "grasp: the gripper closed on nothing"
    assert fresh.add_location("far_corner", (1.15, 0.0, 0.05)).ok
    assert fresh.step(Call("goto", ("far_corner",))).reason == "goto: 'far_corner' is out of reach"
    assert fresh.move_ee((1.2, 0.0, 0.3)).reason == "move_ee: (1.20, 0.00, 0.30) is out of reach"
    # an object pushed beyond the arm's reach (the camera still sees it there)
    fresh.world.client.resetBasePositionAndOrientation(fresh.world.bodies["candy"].uid, [0.9, 0.3, 0.01],
                                                       [0, 0, 0, 1])
    fresh.world.step(1)
    assert fresh.step(Call("pickup", ("candy",))).reason == "pickup: 'candy' is out of reach"
    # nothing moved while refusing
    assert np.allclose(fresh.ee_pose()[0], (0.307, 0.0, 0.485), atol=0.005)


def test_blocked_moves_say_what_blocks_them(fresh: TabletopEnv) -> None:
    result = fresh.move_ee((0.22, 0.06, -0.03))   # below the table top, where nothing else stands
    assert result.reason.startswith("move_ee: stopped ") and result.reason.endswith("(blocked by the table)")
    world = fresh.world
    wall = to_world(world.client, world.bodies["gift_bag"], (0.0, 0.068, 0.03))   # in its long wall, 3 cm up
    result = fresh.move_ee(tuple(float(v) for v in wall))
    assert result.reason.startswith("move_ee: stopped ") and result.reason.endswith("(blocked by 'gift_bag')")


def test_an_item_put_in_the_gift_bag_can_be_taken_out_again(fresh: TabletopEnv) -> None:
    # in the 16 cm deep bag the hand could not reach below the rim: every item put in stayed there
    assert fresh.step(Call("grab_and_putin", ("toy_car", "gift_bag"))).ok
    assert fresh.step(Call("pickup", ("toy_car",))).ok
    assert fresh.step(Call("goto", ("tray",))).ok and fresh.step(Call("release")).ok
    assert fresh.holds(Condition("inside", ("toy_car", "tray")))
    assert not fresh.holds(Condition("inside", ("toy_car", "gift_bag")))


def test_step_rejects_unknown_actions_arity_and_names(fresh: TabletopEnv) -> None:
    assert fresh.step(Call("fly", ("duck",))).reason.startswith("unknown action 'fly' (known: go_home, goto")
    assert fresh.step(Call("grab_and_putin", ("duck",))).reason == "grab_and_putin takes 2 argument(s), got 1"
    assert fresh.step(Call("go_home", ("duck",))).reason == "go_home takes 0 argument(s), got 1"
    assert fresh.step(Call("pickup", ("apel",))).reason.startswith("pickup: no object 'apel' here (known: ball")
    assert fresh.step(Call("grab_and_putin", ("duck", "candy"))).reason == \
        "grab_and_putin: 'candy' is not a container"
    assert fresh.step(Call("pickup", ("tray",))).reason == "pickup: 'tray' is a container and cannot be picked up"


def test_reset_restores_the_initial_scene_exactly(env: TabletopEnv) -> None:
    env.reset()
    before = env.snapshot()
    assert env.step(Call("grab_and_putin", ("toy_car", "tray"))).ok
    assert env.snapshot() != before
    assert env.reset().startswith("You see:")
    assert env.snapshot() == before
    assert env.sim_time == 0.0


def test_same_seed_same_positions_and_outcomes() -> None:
    snapshots = []
    for _ in range(2):
        env = TabletopEnv("gift_bag", seed=4)
        try:
            env.step(Call("grab_and_putin", ("toy_car", "gift_bag")))
            env.step(Call("pickup", ("ball",)))
            snapshots.append(env.snapshot())
        finally:
            env.close()
    assert snapshots[0] == snapshots[1]


def test_follow_tracks_a_cartesian_trajectory(fresh: TabletopEnv) -> None:
    _, orientation = fresh.ee_pose()
    t = np.linspace(0.0, 1.0, 120)
    path = np.stack([0.45 + 0.12 * np.cos(math.pi * t), 0.12 * np.sin(math.pi * t), 0.30 - 0.1 * t], axis=1)
    assert fresh.move_ee(path[0]).ok
    result = fresh.follow(path, np.tile(orientation, (len(path), 1)))
    assert result.ok, result.reason
    assert np.linalg.norm(np.array(fresh.ee_pose()[0]) - path[-1]) < 0.01
    outside = np.array([[0.5, 0.0, 0.3], [1.3, 0.0, 0.3]])
    assert fresh.follow(outside).reason == "follow: point 1 (1.30, 0.00, 0.30) is out of reach"


def test_record_demo_then_replay_it(fresh: TabletopEnv) -> None:
    waypoints = [(0.45, -0.1, 0.35), (0.55, 0.0, 0.25), (0.45, 0.15, 0.3)]
    times, positions, quaternions = fresh.record_demo(waypoints, rate_hz=20.0)
    assert len(times) == len(positions) == len(quaternions) > 20
    assert np.allclose(np.diff(times), 0.05, atol=1e-9)           # a fixed rate
    assert np.linalg.norm(positions[-1] - waypoints[-1]) < 0.01
    # the demonstration passes near each waypoint
    for waypoint in waypoints:
        assert np.min(np.linalg.norm(positions - np.array(waypoint), axis=1)) < 0.01
    assert fresh.go_home().ok
    result = fresh.follow(positions, quaternions, dt=0.05)
    assert result.ok and np.linalg.norm(np.array(fresh.ee_pose()[0]) - positions[-1]) < 0.01


def test_taught_names_and_spots(fresh: TabletopEnv) -> None:
    # the user clicks on the duck in the camera image
    pixels = np.argwhere(fresh.observe().segmentation == fresh.world.bodies["duck"].uid)
    v, u = pixels[np.argmin(np.linalg.norm(pixels - pixels.mean(axis=0), axis=1))]
    result = fresh.name_object("Rubber Duck", (int(u), int(v)))
    assert result.ok and result.changes == ("+ rubber_duck NAMES duck",)
    assert "rubber_duck" in fresh.object_names()
    assert fresh.object_properties()["rubber_duck"] == frozenset({"GRABBABLE"})
    assert fresh.step(Call("pickup", ("rubber_duck",))).ok
    assert fresh.holds(Condition("holds", ("rubber_duck",)))
    cube = fresh.world.centre("cube")
    assert fresh.name_object("block", tuple(cube + np.array([0.0, 0.0, 0.03]))).ok
    assert fresh.resolve("block") == "cube"
    spot = (0.45, -0.3, 0.0)
    assert fresh.add_location("drop_zone", spot).ok
    assert fresh.object_properties()["drop_zone"] == frozenset({"LOCATION"})
    assert fresh.step(Call("goto", ("drop_zone",))).ok
    assert fresh.holds(Condition("close", ("drop_zone",)))
    assert fresh.step(Call("release")).ok
    assert np.linalg.norm(fresh.world.centre("duck")[:2] - np.array(spot[:2])) < 0.03
    # bad names are refused, with the reason
    assert fresh.name_object("duck", (0, 0)).reason == "name_object: 'duck' already names something else"
    assert fresh.name_object("rubber_duck", (0, 0)).reason.endswith("is already taught (forget it first)")
    assert fresh.name_object("x y!", (0, 0)).reason.startswith("name_object: 'x_y!' is not a usable name")
    assert fresh.name_object("nothing_here", (0.5, 0.0, 0.6)).reason.startswith("name_object: no object within")
    assert fresh.forget("rubber_duck") and fresh.forget("block") and fresh.forget("drop_zone")
    assert fresh.resolve("rubber_duck") is None


def _fill(env, container: str, items: tuple[str, ...]) -> None:
    from situated.sandbox.world import SandboxWorld
    world = SandboxWorld(env)
    for item in items:
        for call in (Call("pickup", (item,)), Call("goto", (container,)), Call("release")):
            result = world.step(call)
            assert result.ok, (call, result.reason)


def _fill_and_empty(scene: str, seed: int, container: str, into: tuple[str, ...], out: tuple[str, ...]) -> None:
    """Put `into` in the container one by one, then take `out` back onto the table: every step works."""
    from situated.sandbox.world import SandboxWorld
    env = TabletopEnv(scene, seed=seed)
    env.slip_probability = 0.0
    try:
        _fill(env, container, into)
        world = SandboxWorld(env)
        for item in out:
            for call in (Call("pickup", (item,)), Call("goto", ("table",)), Call("release")):
                result = world.step(call)
                assert result.ok, (item, call, result.reason)
            assert env.holds(Condition("on", (item, "table")))
    finally:
        env.close()


def test_items_come_back_out_of_a_crowded_bowl_onto_the_table() -> None:
    # pickup grasps the item it was asked for, not whatever lies highest near it, and closes above the bowl's rim;
    # last in, first out
    _fill_and_empty("fruit_bowl", 0, "bowl", ("banana", "apple", "strawberry"), ("strawberry", "apple", "banana"))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_items_come_back_out_of_the_box_the_banana_too(seed: int) -> None:
    # the box is shallow enough for the fingers to reach a banana on its floor with the hand above the rim, and
    # nothing is dropped where the open fingers could not get past a wall to grasp it again
    _fill_and_empty("sorting", seed, "box", ("apple", "banana", "pear"), ("banana", "apple", "pear"))


@pytest.mark.parametrize("item", ["strawberry", "apple", "candy"])
def test_an_item_against_the_bowls_wall_is_picked_up(item: str) -> None:
    # a finger of the fully open hand would land on the wall: the grasp turns along the wall and opens only as
    # wide as the item needs
    env = TabletopEnv(["bowl", item], seed=0)
    env.slip_probability = 0.0
    try:
        c = env.world.client
        shape = env.world.bodies["bowl"].spec.container
        origin = env.world.origin("bowl")
        radius = max(env.world.bodies[item].spec.footprint) / 2
        against = (shape.half_x - radius - 0.004) / math.sqrt(2)      # on the diagonal, 4 mm off the wall
        c.resetBasePositionAndOrientation(env.world.bodies[item].uid,
                                          [origin[0] - against, origin[1] + against, origin[2] + shape.floor + 0.002],
                                          [0, 0, 0, 1])
        env.world.settle(1.0)
        assert env.holds(Condition("inside", (item, "bowl")))
        result = env.step(Call("pickup", (item,)))
        assert result.ok, result.reason
        assert env.holds(Condition("holds", (item,)))
    finally:
        env.close()


def test_a_buried_item_says_what_lies_on_it() -> None:
    env = TabletopEnv("sorting", seed=0)
    env.slip_probability = 0.0
    try:
        for call in (Call("pickup", ("apple",)), Call("goto", ("banana",)), Call("release")):  # the apple onto it
            assert env.step(call).ok
        result = env.step(Call("pickup", ("banana",)))
        assert not result.ok
        assert "short of 'banana'" in result.reason and "'apple'" in result.reason, result.reason
    finally:
        env.close()


@pytest.mark.parametrize("first, second", [("pear", "bottle"), ("banana", "apple"), ("bottle", "apple")])
def test_a_second_item_put_on_the_plate_lands_beside_the_first_not_on_it(first: str, second: str) -> None:
    # the plate's rim is low: the item and the fingers may reach over it, so there is room beside the first item;
    # the first goes off the centre, and a banana is long and thin, not a disc as wide as it is long
    env = TabletopEnv("sorting", seed=0)
    env.slip_probability = 0.0
    try:
        _fill(env, "plate", (first, second))
        assert env.holds(Condition("on", (first, "plate"))) and env.holds(Condition("on", (second, "plate")))
    finally:
        env.close()


def test_a_tall_item_goes_into_the_box_beside_another() -> None:
    # the first item no longer takes the middle of the box, so the bottle has room beside the soup can (it had
    # stopped on the can's rim, 6.2 cm short, in a held-out session)
    env = TabletopEnv("sorting", seed=0)
    env.slip_probability = 0.0
    try:
        _fill(env, "box", ("soup_can", "bottle"))
        assert env.holds(Condition("inside", ("soup_can", "box"))) and env.holds(Condition("inside", ("bottle", "box")))
    finally:
        env.close()

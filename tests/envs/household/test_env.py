"""HouseholdEnv on a small hand-built kitchen: action preconditions and effects, derived states, grounding,
failure reasons, holds() for every condition kind."""

from __future__ import annotations

import json

import pytest

from fakes import kitchen, node
from situated.envs.base import Environment
from situated.envs.household import HouseholdEnv, InstanceCall, SceneGraph, class_conditions
from situated.errors import DataError
from situated.program import Call, Condition, Var


def call(action: str, *args: str) -> Call:
    return Call(action, tuple(args))


@pytest.fixture()
def env() -> HouseholdEnv:
    return HouseholdEnv(kitchen(), seed=0)


def test_implements_environment_protocol(env: HouseholdEnv) -> None:
    assert isinstance(env, Environment)
    assert "salmon" in env.object_names() and "kitchen" in env.object_names()
    assert env.object_names() == sorted(env.object_names())


def test_grab_requires_being_close_and_says_so(env: HouseholdEnv) -> None:
    before = env.snapshot()
    result = env.step(call("grab", "salmon"))
    assert not result.ok
    assert result.reason == "grab salmon: the character is not close to salmon (id 30)"
    assert env.snapshot() == before        # a failed step changes nothing


def test_find_then_grab_moves_salmon_to_the_hand(env: HouseholdEnv) -> None:
    found = env.step(call("find", "salmon"))
    assert found.ok and "+ character CLOSE salmon" in found.changes
    grabbed = env.step(call("grab", "salmon"))
    assert grabbed.ok
    assert "+ character HOLDS_RH salmon" in grabbed.changes
    assert "- salmon ON kitchencounter" in grabbed.changes
    assert env.holds(Condition("holds", ("salmon",)))
    assert not env.holds(Condition("on", ("salmon", "kitchencounter")))


def test_putin_needs_an_open_container_and_microwaving_heats_food(env: HouseholdEnv) -> None:
    for c in (call("find", "salmon"), call("grab", "salmon"), call("find", "microwave")):
        assert env.step(c).ok
    closed = env.step(call("putin", "salmon", "microwave"))
    assert not closed.ok and "microwave (id 22) is not open" in closed.reason
    assert env.step(call("open", "microwave")).ok
    again = env.step(call("open", "microwave"))
    assert not again.ok and again.reason == "open microwave: microwave (id 22) is already open"
    put = env.step(call("putin", "salmon", "microwave"))
    assert put.ok and "+ salmon INSIDE microwave" in put.changes
    assert env.holds(Condition("inside", ("salmon", "microwave")))
    assert env.step(call("close", "microwave")).ok
    on = env.step(call("switchon", "microwave"))
    assert on.ok and "+ microwave ON" in on.changes and "+ salmon HEATED" in on.changes
    assert env.step(call("switchoff", "microwave")).ok
    assert "salmon HEATED" in env.conditions()       # heated stays heated
    assert env.holds(Condition("state", ("microwave", "switchoff")))


def test_a_grab_inside_a_closed_container_names_the_container_to_open(env: HouseholdEnv) -> None:
    for c in (call("find", "salmon"), call("grab", "salmon"), call("find", "microwave"), call("open", "microwave"),
              call("putin", "salmon", "microwave"), call("close", "microwave")):
        assert env.step(c).ok
    shut = env.step(call("grab", "salmon"))
    assert not shut.ok
    assert shut.reason == "grab salmon: salmon (id 30) is inside microwave (id 22), which is closed (open it first)"
    assert env.step(call("open", "microwave")).ok and env.step(call("grab", "salmon")).ok


def test_derived_states_can_be_switched_off() -> None:
    env = HouseholdEnv(kitchen(), derived_states=False)
    for c in (call("find", "microwave"), call("open", "microwave"), call("find", "salmon"), call("grab", "salmon"),
              call("find", "microwave"), call("putin", "salmon", "microwave"), call("close", "microwave"),
              call("switchon", "microwave")):
        assert env.step(c).ok, c
    assert "salmon HEATED" not in env.conditions()


def test_frying_pan_on_a_stove_heats_food_and_phone_on_is_used(env: HouseholdEnv) -> None:
    assert env.step(call("find", "stove")).ok
    result = env.step(call("switchon", "stove"))
    assert result.ok and "+ egg HEATED" in result.changes
    assert env.step(call("find", "cellphone")).ok
    assert "+ cellphone USED" in env.step(call("switchon", "cellphone")).changes


def test_sink_with_running_faucet_washes(env: HouseholdEnv) -> None:
    for c in (call("find", "plate"), call("grab", "plate"), call("find", "sink"), call("putin", "plate", "sink")):
        assert env.step(c).ok, c
    assert "plate WASHED" not in env.conditions()
    assert env.step(call("find", "faucet")).ok
    assert "+ plate WASHED" in env.step(call("switchon", "faucet")).changes


def test_open_needs_a_free_hand_and_switch_needs_a_switch(env: HouseholdEnv) -> None:
    for c in (call("find", "salmon"), call("grab", "salmon"), call("find", "plate"), call("grab", "plate"),
              call("find", "fridge")):
        assert env.step(c).ok, c
    full = env.step(call("open", "fridge"))
    assert not full.ok and "no free hand" in full.reason
    assert not env.step(call("open", "microwave")).ok    # not close any more either
    assert "has no switch" in env.step(call("switchon", "kitchencounter")).reason


def test_walk_to_another_room_and_sit(env: HouseholdEnv) -> None:
    assert env.step(call("walk", "livingroom")).ok
    assert env.holds(Condition("inside", ("character", "livingroom")))
    assert not env.step(call("sit", "sofa")).ok                # not close yet
    assert env.step(call("walk", "sofa")).ok
    sat = env.step(call("sit", "sofa"))
    assert sat.ok and "+ character SITTING" in sat.changes and "+ character ON sofa" in sat.changes
    assert env.holds(Condition("state", ("character", "sitting")))
    walk = env.step(call("walk", "kitchen"))
    assert not walk.ok and "sitting" in walk.reason
    assert env.step(call("standup")).ok
    assert env.step(call("walk", "kitchen")).ok


def test_watch_needs_facing_the_tv(env: HouseholdEnv) -> None:
    assert env.step(call("walk", "tv")).ok
    assert "not facing" in env.step(call("watch", "tv")).reason
    assert env.step(call("turnto", "tv")).ok
    assert env.step(call("watch", "tv")).ok


def test_unknown_action_object_and_arity_fail_readably(env: HouseholdEnv) -> None:
    assert env.step(call("fly", "salmon")).reason == "unknown action 'fly'"
    unknown = env.step(call("grab", "unicorn"))
    assert not unknown.ok and "unknown object 'unicorn' in this scene" in unknown.reason
    assert not env.step(call("putin", "salmon")).ok
    assert not env.step(Call("grab", (Var("item"),))).ok
    assert "no object with id 999" in env.step(InstanceCall("grab", ("salmon",), ids=(999,))).reason


def test_every_virtualhome_action_name_is_accepted() -> None:
    from situated.actions import VIRTUALHOME_SPACE
    env = HouseholdEnv(kitchen())
    for action in VIRTUALHOME_SPACE:
        result = env.step(Call(action.name, tuple("salmon" for _ in action.params)))
        assert not result.reason.startswith("unknown action"), action.name


def test_reset_restores_graph_and_grounding_memory(env: HouseholdEnv) -> None:
    initial = env.snapshot()
    env.step(call("walk", "livingroom"))
    env.step(call("walk", "plate"))
    assert env.snapshot() != initial
    text = env.reset()
    assert env.snapshot() == initial
    assert text.startswith("You see:")


def test_grounding_prefers_the_characters_room_then_remembers(env: HouseholdEnv) -> None:
    assert env.step(call("find", "plate")).ok          # only plate 31 is in the kitchen, where the character is
    assert env.holds(Condition("close", ("plate",)))
    assert env.graph.has_edge(env.character, "CLOSE", 31)
    env.step(call("walk", "livingroom"))
    grabbed = env.step(call("grab", "plate"))           # memory still points at plate 31, now far away
    assert not grabbed.ok and "(id 31)" in grabbed.reason


def test_grounding_is_deterministic_under_a_seed() -> None:
    def choices(seed: int) -> list[int]:
        graph = kitchen()
        graph["edges"] = [e for e in graph["edges"] if e["from_id"] != 10] + \
            [{"from_id": 10, "relation_type": "INSIDE", "to_id": 3}]
        graph["nodes"].append(node(3, "hallway", "Rooms"))
        env = HouseholdEnv(graph, seed=seed)
        env.step(call("walk", "plate"))
        return sorted(env.graph.targets(env.character, "CLOSE") & {31, 32})
    assert choices(0) == choices(0)
    assert all(len(choices(s)) == 1 for s in range(6))
    assert {choices(s)[0] for s in range(12)} == {31, 32}   # the seed decides between the two rooms' plates


def test_holds_every_condition_kind_and_negation(env: HouseholdEnv) -> None:
    assert not env.holds(Condition("close", ("fridge",)))
    assert env.holds(Condition("close", ("fridge",), negated=True))
    assert env.holds(Condition("state", ("fridge", "closed")))
    assert not env.holds(Condition("state", ("fridge", "opened")))
    assert env.holds(Condition("state", ("fridge", "switchon")))
    assert env.holds(Condition("on", ("salmon", "kitchencounter")))
    assert not env.holds(Condition("inside", ("salmon", "fridge")))
    assert env.holds(Condition("inside", ("salmon", "fridge"), negated=True))
    assert not env.holds(Condition("holds", ("salmon",)))
    assert not env.holds(Condition("close", ("unicorn",)))


def test_describe_in_words(env: HouseholdEnv) -> None:
    env.step(call("find", "fridge"))
    text = env.describe()
    assert text.startswith("You see: ") and "fridge (closed, on)" in text and "kitchen" in text
    assert "salmon" in env.describe("kitchencounter")
    assert "unicorn" in env.describe("unicorn")


def test_conditions_are_class_level(env: HouseholdEnv) -> None:
    facts = class_conditions(env.graph)
    assert {"salmon ON kitchencounter", "fridge CLOSED", "plate INSIDE livingroom"} <= facts
    assert class_conditions(env.snapshot()) == facts
    env.step(call("find", "fridge"))
    assert "character CLOSE fridge" in env.conditions()
    positionless = class_conditions(env.graph, positions=False)
    assert "character CLOSE fridge" not in positionless and "fridge CLOSED" in positionless


def test_graph_round_trip_and_bad_files(tmp_path) -> None:
    graph = SceneGraph.from_dict(kitchen())
    path = tmp_path / "scene.json"
    graph.save(path)
    assert SceneGraph.load(path).to_dict() == graph.to_dict()
    assert HouseholdEnv.from_file(path).snapshot() == graph.to_dict()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"nodes": []}))
    with pytest.raises(DataError, match=r"bad\.json.*edges"):
        HouseholdEnv.from_file(bad)
    bad.write_text("{nope")
    with pytest.raises(DataError, match=r"bad\.json"):
        HouseholdEnv.from_file(bad)
    broken = kitchen()
    broken["edges"].append({"from_id": 10, "relation_type": "CLOSE", "to_id": 12345})
    with pytest.raises(DataError, match=r"edges\[\d+\].*12345"):
        HouseholdEnv(broken)


def test_copy_is_independent() -> None:
    graph = SceneGraph.from_dict(kitchen())
    other = graph.copy()
    other.add_edge(30, "INSIDE", 21)
    other.add_state(21, "OPEN")
    assert not graph.has_edge(30, "INSIDE", 21) and "OPEN" not in graph.states(21)


def test_the_call_check_and_the_simulator_know_the_same_actions() -> None:
    from situated.envs.household.env import HOUSEHOLD_SPACE
    from situated.envs.household.semantics import ACTIONS
    assert {a.name: a.arity for a in HOUSEHOLD_SPACE} == {name: arity for name, (arity, _) in ACTIONS.items()}

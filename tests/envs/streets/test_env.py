"""VELMA's transition rules, the environment, the oracle and the verbalizer on small hand-built street graphs.

Headings are compass degrees: 0 north, 90 east, 180 south, 270 west.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from situated.envs.base import Environment
from situated.envs.streets.env import NavInstance, StreetEnv
from situated.envs.streets.graph import Node, StreetGraph
from situated.envs.streets.oracle import gold_action, gold_actions
from situated.envs.streets.transitions import State, correct_action, next_state
from situated.envs.streets.verbalizer import ordinal, verbalize
from situated.envs.streets.visibility import FileVisibility, NoVisibility
from situated.errors import DataError, SituatedError
from situated.program import Call, Condition


def make_graph(edges: dict[str, dict[int, str]], yaw: dict[str, int] | None = None) -> StreetGraph:
    names = sorted(set(edges) | {end for out in edges.values() for end in out.values()})
    nodes = {n: Node(n, (yaw or {}).get(n, 0), 40.0 + i * 1e-4, -74.0, "unseen") for i, n in enumerate(names)}
    return StreetGraph(nodes, edges)


def arrive(graph: StreetGraph, start: str, heading: int) -> tuple[State, str]:
    """Move forward once from `start` along `heading`; returns the arrival state and the previous panorama."""
    state = next_state(graph, State(start, heading), None, "forward")
    return state, start


# S --0--> B, B is a crossing with streets in all four directions.
FOUR_WAY = make_graph(
    {
        "S": {0: "B"},
        "B": {180: "S", 270: "W", 0: "N", 90: "E"},
        "W": {90: "B"},
        "N": {180: "B"},
        "E": {270: "B"},
    }
)


def test_forward_keeps_heading_and_moves_along_the_edge() -> None:
    state, _ = arrive(FOUR_WAY, "S", 0)
    assert state == State("B", 0)


def test_four_way_left_right_forward_on_arrival() -> None:
    state, prev = arrive(FOUR_WAY, "S", 0)
    assert next_state(FOUR_WAY, state, prev, "left") == State("B", 270)
    assert next_state(FOUR_WAY, state, prev, "right") == State("B", 90)
    assert next_state(FOUR_WAY, state, prev, "forward") == State("N", 0)


def test_left_then_forward_takes_the_left_street() -> None:
    state, prev = arrive(FOUR_WAY, "S", 0)
    turned = next_state(FOUR_WAY, state, prev, "left")
    assert turned.panoid == "B"  # rotation only
    assert next_state(FOUR_WAY, turned, "B", "forward") == State("W", 270)


def test_second_left_after_rotating_counts_the_street_behind() -> None:
    state, prev = arrive(FOUR_WAY, "S", 0)
    west = next_state(FOUR_WAY, state, prev, "left")
    # no longer "just arrived": left is the nearest street counter-clockwise, the way back south
    assert next_state(FOUR_WAY, west, "B", "left") == State("B", 180)


def test_skewed_four_way_picks_middle_street_as_forward() -> None:
    graph = make_graph({"S": {10: "B"}, "B": {190: "S", 300: "W", 20: "N", 95: "E"}})
    state, prev = arrive(graph, "S", 10)
    assert state == State("B", 10)  # heading kept although no street leaves B at 10
    assert next_state(graph, state, prev, "forward") == State("N", 20)
    assert next_state(graph, state, prev, "left") == State("B", 300)
    assert next_state(graph, state, prev, "right") == State("B", 95)


def test_t_junction_left_and_right_are_the_outermost_streets() -> None:
    graph = make_graph({"S": {0: "B"}, "B": {180: "S", 270: "W", 90: "E"}})
    state, prev = arrive(graph, "S", 0)
    assert next_state(graph, state, prev, "left") == State("B", 270)
    assert next_state(graph, state, prev, "right") == State("B", 90)


def test_three_way_with_straight_street_left_means_the_leftmost_street() -> None:
    # Streets ahead (0) and to the right (90): at a 3-way junction left/right are the outermost of the two.
    graph = make_graph({"S": {0: "B"}, "B": {180: "S", 0: "N", 90: "E"}})
    state, prev = arrive(graph, "S", 0)
    assert next_state(graph, state, prev, "forward") == State("N", 0)
    assert next_state(graph, state, prev, "left") == State("B", 0)
    assert next_state(graph, state, prev, "right") == State("B", 90)


def test_five_way_even_count_takes_middle_street_nearer_the_heading() -> None:
    graph = make_graph({"S": {0: "B"}, "B": {180: "S", 300: "P", 350: "Q", 30: "R", 90: "T"}})
    state, prev = arrive(graph, "S", 0)
    # remaining streets sorted left to right: 300, 350, 30, 90; middle pair 350 / 30, 350 is nearer to 0
    assert next_state(graph, state, prev, "forward") == State("Q", 350)
    assert next_state(graph, state, prev, "left") == State("B", 300)
    assert next_state(graph, state, prev, "right") == State("B", 30)


def test_plain_street_snaps_heading_to_the_nearest_edge_when_moving_on() -> None:
    graph = make_graph({"A": {0: "B"}, "B": {180: "A", 15: "C"}, "C": {195: "B"}})
    state, prev = arrive(graph, "A", 0)
    assert state == State("B", 0)
    assert next_state(graph, state, prev, "forward") == State("C", 15)


def test_turn_around_snaps_to_the_nearest_edge_without_moving() -> None:
    graph = make_graph({"A": {0: "B"}, "B": {170: "A", 15: "C"}, "C": {195: "B"}})
    state, prev = arrive(graph, "A", 0)
    assert next_state(graph, state, prev, "turn_around") == State("B", 170)


def test_stop_changes_nothing() -> None:
    state, prev = arrive(FOUR_WAY, "S", 0)
    assert next_state(FOUR_WAY, state, prev, "stop") == state


DEAD_END = make_graph({"A": {0: "B"}, "B": {180: "A", 0: "D"}, "D": {180: "B"}})


def test_dead_end_turns_anything_but_stop_and_turn_around_into_stop() -> None:
    for word in ("forward", "left", "right", "fly"):
        assert correct_action(DEAD_END, "D", word) == "stop"
    assert correct_action(DEAD_END, "D", "turn_around") == "turn_around"
    assert correct_action(DEAD_END, "D", "stop") == "stop"


def test_dead_end_start_allows_forward_as_the_only_way_out() -> None:
    assert correct_action(DEAD_END, "A", "forward", at_start=True) == "forward"
    assert correct_action(DEAD_END, "A", "forward", at_start=False) == "stop"


def test_plain_street_turns_become_forward_and_unknown_words_forward() -> None:
    assert correct_action(DEAD_END, "B", "left") == "forward"
    assert correct_action(DEAD_END, "B", "right") == "forward"
    assert correct_action(FOUR_WAY, "B", "jump") == "forward"
    assert correct_action(FOUR_WAY, "B", "Turn Left") == "left"
    assert correct_action(FOUR_WAY, "B", "turnaround") == "turn_around"


def instance(route: list[str], heading: float, dataset: str = "touchdown", **kw: object) -> NavInstance:
    return NavInstance("t1", dataset, tuple(route), heading, "go", **kw)  # type: ignore[arg-type]


def test_env_touchdown_start_heading_snaps_and_turn_around_then_forward() -> None:
    env = StreetEnv(FOUR_WAY)
    env.reset(instance(["B", "S"], 200))
    obs = env.observation
    assert (obs.panoid, obs.heading, obs.step) == ("B", 180, 0)
    env.step(Call("turn_around"))
    assert env.state == State("B", 0)


def test_env_map2seq_first_step_is_a_forced_forward() -> None:
    env = StreetEnv(FOUR_WAY)
    text = env.reset(instance(["S", "B", "N"], 0, dataset="map2seq"))
    obs = env.observation
    assert obs.step == 1 and obs.panoid == "B" and text == obs.text
    assert env.trajectory.actions == ("forward",)
    assert obs.intersection == 4
    assert obs.text == "There is a 4-way intersection."


def test_env_reports_intersection_only_on_arrival() -> None:
    env = StreetEnv(FOUR_WAY)
    env.reset(instance(["S", "B"], 0))
    result = env.step(Call("forward"))
    arrived = env.observation
    assert arrived.intersection == 4 and result.observation == arrived.text == "There is a 4-way intersection."
    env.step(Call("left"))
    rotated = env.observation
    assert rotated.intersection is None and "intersection" not in rotated.text


def test_env_touchdown_first_observation_states_traffic_flow_from_panorama_yaw() -> None:
    graph = make_graph({"A": {0: "B"}, "B": {180: "A", 0: "C"}, "C": {180: "B"}}, yaw={"B": 10})
    env = StreetEnv(graph)
    assert env.reset(instance(["B", "C"], 0)) == "You are facing with the flow of traffic."
    env.reset(instance(["B", "A"], 180))
    assert env.observation.traffic == "against"
    env.step(Call("turn_around"))
    assert env.observation.traffic is None


def test_env_step_limit_ends_an_episode_that_never_stops() -> None:
    env = StreetEnv(FOUR_WAY, max_steps=55)
    env.reset(instance(["S", "B"], 0))
    env.step(Call("forward"))
    taken = 1
    result = None
    while not env.done:
        result = env.step(Call("left"))
        taken += 1
    assert result is not None and result.done and "step limit of 55 reached" in result.reason
    assert env.trajectory.actions[-1] == "left"
    # asked while at most 55 actions were taken (the released loop): 56 actions in all
    assert taken == 56 == len(env.trajectory.actions)
    with pytest.raises(SituatedError):
        env.step(Call("forward"))


def test_env_stop_terminates() -> None:
    env = StreetEnv(FOUR_WAY)
    env.reset(instance(["S", "B"], 0))
    result = env.step(Call("stop"))
    assert result.done and result.executed == "stop" and env.done and env.trajectory.pano_path == ("S",)


def test_env_implements_the_environment_protocol_step_by_step() -> None:
    env = StreetEnv(ROUTE_GRAPH)
    assert isinstance(env, Environment)
    env.reset(instance(["S", "B", "N"], 0))
    moved = env.step(Call("forward"))
    assert moved.ok and moved.changes == ("at B facing 0",) and not moved.done and moved.executed == "forward"
    assert env.holds(Condition("close", ("N",))) and not env.holds(Condition("close", ("X",)))
    env.step(Call("forward"))  # on to N, on a plain street
    left = env.step(Call("left"))
    assert left.ok and left.executed == "forward" and "left became forward here" in left.reason
    assert not env.step(Call("stop", ("N",))).ok  # actions take no objects
    assert env.describe() == env.observation.text
    assert env.snapshot()["path"][:3] == ["S", "B", "N"]


def test_env_rejects_routes_outside_the_graph() -> None:
    with pytest.raises(DataError, match="not in the graph"):
        StreetEnv(FOUR_WAY).reset(instance(["S", "ZZ"], 0))


# S -> B (4-way) -> E (3-way) -> F; N -> X is a dead-end street north of B.
ROUTE_GRAPH = make_graph(
    {
        "S": {0: "B"},
        "B": {180: "S", 270: "W", 0: "N", 90: "E"},
        "W": {90: "B"},
        "N": {180: "B", 90: "X"},
        "X": {270: "N"},
        "E": {270: "B", 0: "Y", 90: "F"},
        "Y": {180: "E"},
        "F": {270: "E"},
    }
)


def test_gold_actions_reproduce_the_route() -> None:
    route = ["S", "B", "E", "F"]
    actions = gold_actions(ROUTE_GRAPH, instance(route, 0))
    assert actions[-1] == "stop" and "right" in actions
    env = StreetEnv(ROUTE_GRAPH)
    env.reset(instance(route, 0))
    for action in actions:
        env.step(Call(action))
    assert list(env.trajectory.pano_path) == route


def test_gold_action_off_route_heads_back_along_the_shortest_path() -> None:
    # the agent went straight on at B instead of right; from N the way to F leads back through B
    states = [State("S", 0), State("B", 0), State("N", 0)]
    assert gold_action(ROUTE_GRAPH, ["S", "B", "E", "F"], states, ["S", "B", "N"]) == "turn_around"
    states.append(State("N", 180))
    assert gold_action(ROUTE_GRAPH, ["S", "B", "E", "F"], states, ["S", "B", "N"]) == "forward"


def test_verbalize_lists_landmarks_left_to_right() -> None:
    text = verbalize(3, {"right": ("a bank",), "left": ("Starbucks", "a park")})
    assert (
        text
        == "There is a 3-way intersection. Starbucks and a park are on your left. A bank is on your right."
    )
    assert verbalize(None, {}) == ""


def test_file_visibility_answers_for_panorama_heading_and_landmark(tmp_path: Path) -> None:
    file = tmp_path / "vis.json"
    table = {"B": {"0": {"Starbucks": "slightly_left", "a bank": "ahead"}}}
    file.write_text(json.dumps({"format": "situated-visibility/1", "panoramas": table}))
    source = FileVisibility.load(file)
    assert source.visible("B", 0, ["a bank", "Starbucks", "a zoo"]) == {
        "ahead": ("a bank",),
        "slightly_left": ("Starbucks",),
    }
    assert source.visible("B", 90, ["a bank"]) == {}
    env = StreetEnv(FOUR_WAY, visibility=source)
    text = env.reset(instance(["S", "B"], 0, dataset="map2seq", landmarks=("Starbucks",)))
    assert text == "There is a 4-way intersection. Starbucks is slightly left."
    assert NoVisibility().visible("B", 0, ["Starbucks"]) == {}


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{", "invalid JSON"),
        ('{"format": "other", "panoramas": {}}', "format"),
        (
            '{"format": "situated-visibility/1", "panoramas": {"B": {"north": {}}}}',
            "heading must be an integer",
        ),
        (
            '{"format": "situated-visibility/1", "panoramas": {"B": {"0": {"x": "behind"}}}}',
            "bucket 'behind'",
        ),
    ],
)
def test_file_visibility_rejects_malformed_files(tmp_path: Path, content: str, problem: str) -> None:
    file = tmp_path / "vis.json"
    file.write_text(content)
    with pytest.raises(DataError, match=problem):
        FileVisibility.load(file)


# S -> B (4-way) -> N (3-way) -> M (3-way); west of B: W (3-way) -> X. Spurs make the 3-ways.
COUNTING = make_graph(
    {
        "S": {0: "B"},
        "B": {180: "S", 270: "W", 0: "N", 90: "E"},
        "E": {270: "B"},
        "N": {180: "B", 0: "M", 90: "N1"},
        "N1": {270: "N"},
        "M": {180: "N", 90: "M1", 0: "M2"},
        "M1": {270: "M"},
        "M2": {180: "M"},
        "W": {90: "B", 270: "X", 0: "W1"},
        "W1": {180: "W"},
        "X": {90: "W"},
    }
)


def test_intersections_are_counted_since_the_start_and_since_the_last_turn() -> None:
    env = StreetEnv(COUNTING, count_intersections=True)
    env.reset(instance(["S", "B", "N", "M"], 0))
    env.step(Call("forward"))
    assert env.observation.text == "There is a 4-way intersection. It is the 1st intersection since the start."
    env.step(Call("forward"))
    env.step(Call("forward"))
    assert env.observation.text == "There is a 3-way intersection. It is the 3rd intersection since the start."
    env.reset(instance(["S", "B", "W", "X"], 0))
    env.step(Call("forward"))
    env.step(Call("left"))
    assert env.observation.text == ""  # turned in place: no new intersection
    env.step(Call("forward"))
    assert env.observation.text == "There is a 3-way intersection. It is the 1st intersection since your last turn."


def test_a_turn_the_street_does_not_allow_is_no_turn_for_the_count() -> None:
    graph = make_graph({"A": {0: "P"}, "P": {180: "A", 0: "B"}, "B": {180: "P", 90: "E", 270: "W"},
                        "E": {270: "B"}, "W": {90: "B"}})
    env = StreetEnv(graph, count_intersections=True)
    env.reset(instance(["P", "B"], 0))
    env.step(Call("left"))  # on a plain street: corrected to forward
    assert env.trajectory.actions == ("forward",)
    assert env.observation.text.endswith("It is the 1st intersection since the start.")
    plain = StreetEnv(graph)
    plain.reset(instance(["P", "B"], 0))
    plain.step(Call("forward"))
    assert plain.observation.text == "There is a 3-way intersection."  # counting is off by default


def test_an_intersection_at_the_start_is_not_counted() -> None:
    env = StreetEnv(COUNTING, count_intersections=True)
    start = env.reset(instance(["B", "N"], 0))
    assert start == "You are facing with the flow of traffic. There is a 4-way intersection."
    env.step(Call("forward"))
    assert env.observation.text.endswith("It is the 1st intersection since the start.")


def test_ordinals() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st", "111th", "112th"
    ]
    assert verbalize(4, {}, count=2, turned=True) == (
        "There is a 4-way intersection. It is the 2nd intersection since your last turn."
    )
    assert verbalize(None, {}, count=2) == ""

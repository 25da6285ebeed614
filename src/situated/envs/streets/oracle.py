"""Gold actions: an oracle that follows the gold route, or the shortest path to its target when off it."""

from __future__ import annotations

from collections.abc import Sequence

from ...errors import DataError
from .env import NavInstance, start_state
from .graph import StreetGraph
from .transitions import State, closest_heading, correct_action, next_state, relative_angle


def _next_target(
    graph: StreetGraph, route: Sequence[str], state: State, pano_path: Sequence[str]
) -> str | None:
    """The panorama the agent should move to next, or None when it should stop."""
    here = state.panoid
    if here in route:
        positions = [i for i, p in enumerate(route) if p == here]
        # a route that visits a panorama twice: pick the visit matching how often the agent has been here
        index = positions[min(len(positions), pano_path.count(here)) - 1]
        return None if index == len(route) - 1 else route[index + 1]
    path = graph.shortest_path(here, route[-1])
    if path is None:
        raise DataError(f"no path from {here} back to the target {route[-1]}")
    return None if len(path) <= 1 else path[1]


def gold_action(
    graph: StreetGraph, route: Sequence[str], states: Sequence[State], pano_path: Sequence[str]
) -> str:
    """The action that brings the agent along `route` from the last of `states` (VELMA's oracle)."""
    state = states[-1]
    prev = states[-2].panoid if len(states) > 1 else None
    target = _next_target(graph, route, state, pano_path)
    if target is None:
        return "stop"
    wanted = graph.heading_to(state.panoid, target)
    if wanted is None:
        raise DataError(f"route step {state.panoid} -> {target} is not an edge of the graph")

    def outcome(action: str) -> State:
        executed = correct_action(graph, state.panoid, action, len(pano_path) == 1)
        return next_state(graph, state, prev, executed)

    forward = outcome("forward")
    # At a 3-way junction both forward and left/right may reach the same street; forward only if it
    # does not hide a turn of 45° or more.
    if forward.panoid == target and (
        graph.degree(state.panoid) != 3 or abs(relative_angle(forward.heading, wanted)) < 45
    ):
        return "forward"
    if outcome("turn_around").heading == wanted:
        return "turn_around"
    left, right = outcome("left"), outcome("right")
    if left.panoid == state.panoid and left.heading == wanted:
        return "left"
    if right.panoid == state.panoid and right.heading == wanted:
        return "right"
    return "left" if closest_heading(wanted, [left.heading, right.heading]) == left.heading else "right"


def gold_actions(graph: StreetGraph, instance: NavInstance, max_actions: int | None = None) -> list[str]:
    """The full gold action sequence for an instance (Map2seq: starting with its forced forward)."""
    limit = max_actions if max_actions is not None else 4 * len(instance.route) + 20
    states = [start_state(graph, instance)]
    pano_path = [states[0].panoid]
    actions: list[str] = []
    while not actions or actions[-1] != "stop":
        if len(actions) >= limit:
            raise DataError(
                f"instance {instance.id}: the oracle found no way along the route in {limit} actions"
            )
        state, prev = states[-1], (states[-2].panoid if len(states) > 1 else None)
        if not actions and instance.forced_first_forward:
            action, executed = "forward", "forward"  # the environment's forced move, never corrected
        else:
            action = gold_action(graph, instance.route, states, pano_path)
            executed = correct_action(graph, state.panoid, action, len(pano_path) == 1)
        new = next_state(graph, state, prev, executed)
        actions.append(action)
        states.append(new)
        if new.panoid != state.panoid:
            pano_path.append(new.panoid)
    return actions

"""VELMA's transition rules on a street graph: pure functions of (state, previous panorama, action).

The rules (PROTOCOLS.md §2, pinned down by the released VELMA code):

- forward with a heading that is an out-edge heading moves along that edge and keeps the heading.
- forward on a plain street (2 out-edges) otherwise takes the out-edge nearest to the heading and
  the new heading is that edge's heading.
- On arrival at an intersection (> 2 out-edges, the previous state was another panorama) the edge back to the
  previous panorama is dropped and the others are sorted by signed angle to the heading (counter-clockwise
  first). "forward" is the middle one (even count: of the two middle ones, the one nearer the heading). At a
  3-way junction left/right are the outermost two; otherwise left/right are the edges nearest to forward
  counter-clockwise / clockwise. left/right only rotate; forward then moves along the chosen edge.
- At an intersection the agent did not just arrive at (it rotated, or it starts there), forward is the current
  heading and left/right are the nearest out-edges counter-clockwise / clockwise of it.
- turn_around: the out-edge nearest to heading − 180°, without moving.
- stop: nothing changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ...actions import STREET_SPACE
from .graph import StreetGraph

ACTIONS: tuple[str, ...] = STREET_SPACE.names
ALIASES = {
    "turnaround": "turn_around",
    "turn around": "turn_around",
    "turn-around": "turn_around",
    "turn_left": "left",
    "turn left": "left",
    "turn_right": "right",
    "turn right": "right",
    "go forward": "forward",
}


@dataclass(frozen=True)
class State:
    """Where the agent is and which way it faces (integer compass degrees)."""

    panoid: str
    heading: int


def angle_between(heading: float, other: float) -> float:
    """Unsigned angle in degrees between two headings, in [0, 180]."""
    return 180 - abs(abs(heading - other) % 360 - 180)


def relative_angle(heading: float, other: float) -> float:
    """Signed angle from `heading` to `other` in (-180, 180]; negative is counter-clockwise (to the left)."""
    angle = (other - heading) % 360
    return angle - 360 if angle > 180 else angle


def closest_heading(heading: float, headings: Iterable[int]) -> int:
    """The heading nearest to `heading`; ties go to the first one given."""
    return min(headings, key=lambda h: angle_between(heading, h))


def normalize_action(word: str) -> str:
    """Lower-case an action word and map common spellings ("turn left") to the action names."""
    key = " ".join(word.strip().lower().split())
    return ALIASES.get(key, key)


def correct_action(graph: StreetGraph, panoid: str, word: str, at_start: bool = False) -> str:
    """The action actually executed for `word` at `panoid`.

    At a dead end (≤ 1 out-edge) anything but stop/turn_around becomes stop, except at the start of an
    episode before any move (a route may begin at a dead end; forward is the only way out); on a plain street
    left/right become forward; an unknown word becomes forward (in that order, as in the released code).
    """
    action = normalize_action(word)
    degree = graph.degree(panoid)
    if degree <= 1 and action not in ("stop", "turn_around") and not (at_start and degree == 1):
        return "stop"
    if degree == 2 and action in ("left", "right"):
        return "forward"
    return action if action in ACTIONS else "forward"


def _intersection_heading(graph: StreetGraph, state: State, prev_panoid: str | None, action: str) -> int:
    out = graph.out_edges(state.panoid)
    headings = list(out)
    forward = state.heading
    if prev_panoid is not None and prev_panoid != state.panoid:
        back = graph.heading_to(state.panoid, prev_panoid)
        if back is not None:
            headings.remove(back)
        ordered = sorted(headings, key=lambda h: relative_angle(state.heading, h))
        middle = len(ordered) // 2
        if len(ordered) % 2 == 0:
            forward = closest_heading(state.heading, ordered[middle - 1 : middle + 1])
        else:
            forward = ordered[middle]
        if len(out) == 3 and action in ("left", "right"):
            return ordered[0] if action == "left" else ordered[-1]
    elif forward not in out:
        # Unreachable with VELMA's own start headings (always an out-edge); snap instead of failing.
        forward = closest_heading(forward, headings)
    if action == "forward":
        return forward
    others = [h for h in headings if h != forward] or [forward]
    if action == "left":
        return min(others, key=lambda h: (forward - h) % 360)
    return min(others, key=lambda h: (h - forward) % 360)


def next_state(graph: StreetGraph, state: State, prev_panoid: str | None, action: str) -> State:
    """Apply one (already corrected) action; `prev_panoid` is the panorama of the state before `state`."""
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r}; expected one of {', '.join(ACTIONS)}")
    out = graph.out_edges(state.panoid)
    if action == "stop" or not out:
        return state
    if action == "forward" and state.heading in out:
        return State(out[state.heading], state.heading)
    if action == "turn_around":
        return State(state.panoid, closest_heading((state.heading - 180) % 360, out))
    if len(out) == 1:
        return state
    if len(out) == 2:
        heading = closest_heading(state.heading, out)
    else:
        heading = _intersection_heading(graph, state, prev_panoid, action)
    if action == "forward":
        return State(out[heading], heading)
    return State(state.panoid, heading)

"""Turns what the agent perceives at one step into short English sentences for a language model."""

from __future__ import annotations

from collections.abc import Mapping

from .graph import StreetGraph
from .transitions import angle_between
from .visibility import BUCKETS

_BUCKET_WORDS = {
    "left": "on your left",
    "slightly_left": "slightly left",
    "ahead": "ahead",
    "slightly_right": "slightly right",
    "right": "on your right",
}


def traffic_flow(graph: StreetGraph, panoid: str, heading: int) -> str:
    """ "with" when the agent faces within 90° of the panorama's yaw, else "against".

    The yaw of a Street View panorama is the heading of the capture vehicle, which drove with the traffic;
    facing the same way as the vehicle is taken as facing with the flow of traffic.
    """
    return "with" if angle_between(graph.nodes[panoid].yaw, heading) < 90 else "against"


def _join(names: tuple[str, ...]) -> str:
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def verbalize(
    intersection: int | None,
    landmarks: Mapping[str, tuple[str, ...]],
    traffic: str | None = None,
    *,
    count: int | None = None,
    turned: bool = False,
) -> str:
    """One line: traffic flow (Touchdown, step 0), the intersection (with `count`, which one it is since the
    last turn or the start), then visible landmarks left to right."""
    sentences: list[str] = []
    if traffic is not None:
        sentences.append(f"You are facing {traffic} the flow of traffic.")
    if intersection is not None:
        sentences.append(f"There is a {intersection}-way intersection.")
        if count is not None:
            since = "since your last turn" if turned else "since the start"
            sentences.append(f"It is the {ordinal(count)} intersection {since}.")
    for bucket in BUCKETS:
        names = landmarks.get(bucket, ())
        if names:
            text = _join(names)
            verb = "is" if len(names) == 1 else "are"
            sentences.append(f"{text[0].upper()}{text[1:]} {verb} {_BUCKET_WORDS[bucket]}.")
    return " ".join(sentences)

"""A route read from the words of the directions alone, with no model: the baseline a language model's reading
has to beat.

The route has the route agent's shape (`velma_route.Leg`) and is walked by its walker:

- the turns are the ones the directions name, in order (`direction_words.turn_words`);
- each turn's intersection count comes from the lights and intersections the directions mention before it:
  those passed ("go through two lights", "past the 1st light") add up, and the turn is taken at the next one,
  or at the ordinal named for it ("at the 3rd light") when that is further (`direction_words.turn_counts`);
- the stop line is a fixed rule per stop cue of the directions ("halfway", "end of the block", ...; else
  "stop 2 steps after the turn"), each rule the one that completes most training-area routes with that cue
  when walked after their gold turns (`STOP_RULES`, from `benchmarks/velma_route_ceiling.py`).

All patterns and rules were written on the training-area routes of map2seq_seen's dev file (the route agent's
example pool) and checked on those of its test file; never on unseen dev or test data. Only English
Map2seq-style directions are read; a landmark ("turn right at Starbucks") counts as the next intersection.
"""

from __future__ import annotations

import re

from ..envs.streets.env import NavInstance
from .direction_words import turn_counts, turn_words
from .velma_route import Leg, RouteAgent, render_route

STOP_CUES = (
    ("halfway", r"half ?way|1/2|middle of the block|mid-?block|mid ?way"),
    ("three quarters", r"3/4|three.quarters"),
    ("in the intersection", r"stop (?:in|at|inside|within) (?:the )?(?:center |middle )?(?:of )?"
                            r"(?:the |this |that )?(?:next )?(?:intersection|light|corner|crosswalk)|"
                            r"(?:intersection|light|corner),? (?:and )?stop\b"),
    ("steps after turning", r"(?:after|once) (?:you )?(?:turn|turning)|step.{0,20}after turning|a few steps|"
                            r"couple (?:of )?steps|one step|1 step|take a step|two steps"),
    ("too far", r"too far"),
    ("end of the block", r"end of the block|near the end|before the (?:next )?(?:light|intersection|corner)"),
)
"""Stop cues in the directions, first match wins (written on the dev file's training-area routes)."""
STOP_RULES = {
    "halfway": Leg("stop", 0, 6),
    "three quarters": Leg("stop", 2, 6),
    "in the intersection": Leg("stop", 0, 2),
    "steps after turning": Leg("stop", 0, 2),
    "too far": Leg("stop", 0, 7),
    "end of the block": Leg("stop", 0, 8),
    "none": Leg("stop", 0, 2),
}
"""The stop line per stop cue: the rule (0-2 intersections, 0-12 steps) that completes most training-area routes
of map2seq_seen's dev file with that cue after their gold turns (`benchmarks/velma_route_ceiling.py` prints them
and checks that these are still its choices)."""


def stop_cue(directions: str) -> str:
    """The class of the first `STOP_CUES` pattern the directions match, else "none"."""
    text = directions.lower()
    return next((name for name, pattern in STOP_CUES if re.search(pattern, text)), "none")


def read_route(directions: str) -> tuple[Leg, ...]:
    """The whole route the words give: each named turn at its counted intersection, then the cue's stop line."""
    legs = [Leg(turn, count) for turn, count in zip(turn_words(directions), turn_counts(directions), strict=True)]
    return (*legs, STOP_RULES[stop_cue(directions)])


class WordsAgent(RouteAgent):
    """NavAgent: walks `read_route(directions)` with the route agent's walker; no model, no examples."""

    def __init__(self) -> None:
        super().__init__(None, (), shots=0)  # type: ignore[arg-type]  # never called: reset reads the words

    def reset(self, instance: NavInstance) -> None:
        legs = read_route(instance.instruction)
        self.route_text = render_route(legs)
        self.start(legs, instance)

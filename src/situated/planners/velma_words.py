"""A route read from the words of the directions alone, with no model: the baseline a language model's reading
has to beat.

The route has the route agent's shape (`velma_route.Leg`) and is walked by its walker:

- the turns are the ones the directions name, in order (`velma_route.turn_words`);
- each turn's intersection count comes from the lights and intersections the directions mention before it:
  those passed ("go through two lights", "past the 1st light") add up, and the turn is taken at the next one,
  or at the ordinal named for it ("at the 3rd light") when that is further (`turn_counts`);
- the stop line is a fixed rule per stop cue of the directions ("halfway", "end of the block", ...; else
  "stop 2 steps after the turn"), each rule the one that completes most training-area routes with that cue
  when walked after their gold turns (`STOP_RULES`, from `benchmarks/velma_route_ceiling.py`).

All patterns and rules were written on the training-area routes of map2seq_seen's dev file (the route agent's
example pool) and checked once on those of its test file; never on unseen dev or test data. Only English
Map2seq-style directions are read; a landmark ("turn right at Starbucks") counts as the next intersection.
"""

from __future__ import annotations

import re

from ..envs.streets.env import NavInstance
from .velma_route import _TURN_WORDS, Leg, RouteAgent, render_route

_NUMBERS = {
    "next": 1, "first": 1, "1st": 1, "one": 1, "a": 1, "an": 1, "second": 2, "2nd": 2, "two": 2, "couple": 2,
    "few": 2, "third": 3, "3rd": 3, "three": 3, "fourth": 4, "4th": 4, "four": 4, "fifth": 5, "5th": 5, "five": 5,
    "1": 1, "2": 2, "3": 3, "4": 4, "5": 5,
}
_ORDINALS = frozenset({"second", "2nd", "third", "3rd", "fourth", "4th", "fifth", "5th"})
_SINGLE = frozenset({"next", "first", "1st", "the", "this", "that", "a", "an", ""})
_MENTION = re.compile(
    r"(?:\b(next|first|1st|second|2nd|third|3rd|fourth|4th|fifth|5th|one|two|three|four|five|[1-5]|"
    r"a couple of|a couple|a few|a|an|the|this|that)\s+)?(?:more\s+)?(?:sets?\s+of\s+)?"
    r"(?:(?:traffic|stop|double|big|large|small|major|main|busy|4-way|four-way|3-way|t|t-)\s*)*"
    r"(lights?|intersections?|blocks?|corners?|cross ?streets?|stop ?lights?|signals?|stoplights?|crosswalks?|"
    r"t-intersections?)\b", re.IGNORECASE)
"""A light or intersection mentioned, with its quantity or ordinal ("the 2nd light", "two more lights")."""
_PASSED = re.compile(r"\b(?:pass\w*|past|through|cross\w*|go by|beyond|after)\b[^.,;]{0,25}$", re.IGNORECASE)
"""Words just before a mention that say it is passed, not turned at."""

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


def _clause_end(text: str, start: int) -> int:
    """Where the clause that runs on at `start` ends: the next '.', ',' or ';' (else the end of the text)."""
    ends = [j for j in (text.find(ch, start) for ch in ".,;") if j >= 0]
    return min(ends, default=len(text))


def _count(segment: str) -> int:
    """The intersection a turn described by `segment` is taken at: one after the mentions passed, or the
    ordinal named for the turn when that is further."""
    passed, at = 0, 1
    for mention in _MENTION.finditer(segment):
        word, unit = (mention[1] or "").lower(), mention[2].lower()
        number = _NUMBERS.get(word.removesuffix(" of").removeprefix("a "), 0)
        plural = unit.endswith("s") and not unit.endswith("ss")
        if _PASSED.search(segment[: mention.start()][-40:]):
            passed += (0 if plural else 1) if word in _SINGLE else number
        elif "block" in unit:
            at = number if word not in _SINGLE else at
        elif word in _ORDINALS:
            at = number
    return max(passed + 1, at)


def turn_counts(directions: str) -> tuple[int, ...]:
    """For each turn `turn_words` finds, the intersection (counted since the previous turn) it is taken at; the
    text read for a turn runs from the end of the previous turn's clause to the end of its own."""
    counts, start = [], 0
    for match in _TURN_WORDS.finditer(directions):
        end = _clause_end(directions, match.end())
        counts.append(_count(directions[start:end]))
        start = end
    return tuple(counts)


def read_route(directions: str) -> tuple[Leg, ...]:
    """The whole route the words give: each named turn at its counted intersection, then the cue's stop line."""
    turns = [(a or b).lower() for a, b in _TURN_WORDS.findall(directions)]
    legs = [Leg(turn, count) for turn, count in zip(turns, turn_counts(directions), strict=True)]
    return (*legs, STOP_RULES[stop_cue(directions)])


class WordsAgent(RouteAgent):
    """NavAgent: walks `read_route(directions)` with the route agent's walker; no model, no examples."""

    def __init__(self) -> None:
        super().__init__(None, (), shots=0)  # type: ignore[arg-type]  # never called: reset reads the words

    def reset(self, instance: NavInstance) -> None:
        legs = read_route(instance.instruction)
        self.route_text = render_route(legs)
        self.start(legs, instance)

"""What the words of walking directions say about the route, read by patterns (no model): the turns they name and
the intersection each is taken at. Written on the training-area routes of map2seq_seen's dev file (see
`velma_words`)."""

from __future__ import annotations

import re

_TURN_WORDS = re.compile(
    r"\b(?:turn|make|take|hang|go|bear|veer|head)\s+(?:a\s+|another\s+|your\s+(?:first\s+|second\s+|next\s+)?)?"
    r"(left|right)\b|\b(left|right)\s+(?:turn|at|onto|on to|again)\b", re.IGNORECASE)
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


def turn_words(directions: str) -> tuple[str, ...]:
    """The turns the directions name, in order: "turn left", "take a right", "make your first left", "right
    onto ...", "left at ...". Landmarks "on your left" are not turns. On the 594 training-area routes of
    map2seq_seen's dev file (the route agent's example pool) the words equal the gold route's left/right
    sequence in 472 (79.5 %)."""
    return tuple((a or b).lower() for a, b in _TURN_WORDS.findall(directions))


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



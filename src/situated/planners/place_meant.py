"""The side question asked when a request names two places and the plan uses one of them: which place do the
person's words mean, in the end?

Measured on a held-out session (now development data): "go to the plate, no, sorry, the box", a lesson's step,
was planned `goto('plate')`, so `recycle` was learnt with the plate and every later use missed the box. Where a
request names two places (containers, the table), the calls visit one and neither the calls nor the goal use the
other, and no item the plan is about stands there (a place things come from: "take the cube off the tray and put
it in the box"), the model reads the words once more with only the two places to choose from. The worked examples
use places of their own, not the scenes'.
"""

from __future__ import annotations

from .one_of_two import OneOfTwo

PLACE_PROMPT = """\
A person told a robot arm where to go or where to put something, and named two places. People correct \
themselves ("the shelf, no, the drawer") or name a place only to say where another is. Say which of the two \
places the person wants the arm to go to, or the item to end in, in the end. Answer with JSON.
"""
PLACE_EXAMPLES = (
    ("go to the shelf, no wait, the drawer", ("drawer", "shelf"), "drawer"),
    ("put the cup in the sink, not the bin", ("bin", "sink"), "sink"),
    ("take it to the bin. sorry, I mean the crate", ("bin", "crate"), "crate"),
    ("put the mug on the shelf, the one above the crate", ("crate", "shelf"), "shelf"),
    ("move over to the crate, or actually the basket is better", ("basket", "crate"), "basket"),
    ("set it in the bin, the drawer is full", ("bin", "drawer"), "bin"),
)
"""Worked examples: (the person's words, the two places in alphabetical order, answer)."""

PLACE = OneOfTwo(PLACE_PROMPT, PLACE_EXAMPLES, "place", "Places")
"""The place question; `PLACE.messages(utterance, pair)`, `PLACE.schema(pair)`."""

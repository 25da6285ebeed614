"""The side question asked when a request names two items and the plan acts on one of them: which item do the
person's words mean, in the end?

Measured on a held-out session (now development data): "Start by picking up the banana — no wait, sorry, the
bottle", a lesson's first step, was planned `pickup('banana')`, so `recycle` was shown on the banana. Where a
request names two items, the calls act on one and neither the calls nor the goal use the other (nor is it held),
the model reads the words once more with only the two items to choose from. The worked examples use items of
their own, not the scenes'.
"""

from __future__ import annotations

from .one_of_two import OneOfTwo

ITEM_PROMPT = """\
A person told a robot arm which item to pick up or move, and named two items. People correct themselves ("the \
cup, no wait, the mug"), or name an item only to say which one not to take or where another is. Say which of \
the two items the person wants the arm to act on, in the end. Answer with JSON.
"""
ITEM_EXAMPLES = (
    ("pick up the cup, no wait, the mug", ("cup", "mug"), "mug"),
    ("grab the spoon, not the fork", ("fork", "spoon"), "spoon"),
    ("take the pen. sorry, I meant the pencil", ("pen", "pencil"), "pencil"),
    ("put the lemon in the bin, the orange stays where it is", ("lemon", "orange"), "lemon"),
    ("start by taking the sock, no, the shoe", ("shoe", "sock"), "shoe"),
    ("move the knife over, leave the plate alone", ("knife", "plate"), "knife"),
)
"""Worked examples: (the person's words, the two items in alphabetical order, answer)."""

ITEM = OneOfTwo(ITEM_PROMPT, ITEM_EXAMPLES, "item", "Items")
"""The item question; `ITEM.messages(utterance, pair)`, `ITEM.schema(pair)`."""

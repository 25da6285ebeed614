"""The side question asked when a request names two items and the plan acts on one of them: which item do the
person's words mean, in the end?

Measured on a held-out session (now development data): "Start by picking up the banana — no wait, sorry, the
bottle", a lesson's first step, was planned `pickup('banana')`, so `recycle` was shown on the banana. Where a
request names two items, the calls act on one and neither the calls nor the goal use the other (nor is it held),
the model reads the words once more with only the two items to choose from. The worked examples use items of
their own, not the scenes'.
"""

from __future__ import annotations

import json

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


def item_schema(items: tuple[str, str]) -> dict:
    """The answer's schema: one of the two `items` (as said: plan names, `_` read as a space)."""
    return {"type": "object", "properties": {"item": {"enum": list(items)}}, "required": ["item"],
            "additionalProperties": False}


def item_messages(utterance: str, items: tuple[str, str]) -> list[dict]:
    """The question's messages for the person's `utterance` and the two `items` it names."""
    out = [{"role": "system", "content": ITEM_PROMPT}]
    for text, pair, answer in (*ITEM_EXAMPLES, (utterance, items, "")):
        out.append({"role": "user", "content": f"The person says: {text}\nItems: {' or '.join(pair)}"})
        if answer:
            out.append({"role": "assistant", "content": json.dumps({"item": answer})})
    return out

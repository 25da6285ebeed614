"""The side question asked of a lesson's step planned to carry the held item somewhere and let it go: do the
person's words tell the robot to let go of it there, or only to move it there, still holding it?

Measured on held-out sessions (now development data): "Then you take it over to the bowl" and "swing over to the
plate", steps of lessons with the item in hand, were planned `goto(...)`, `release()`; the item dropped a step
early, the next step ("let it drop") had nothing to let go, and the lessons were learnt wrong. A lesson's steps
are literal, so only there is the model asked; the worked examples use places of their own, not the scenes'.
"""

from __future__ import annotations

import json

LET_GO_PROMPT = """\
A robot arm holds an item and is being shown a task one step at a time. Say what the person's step tells the \
arm to do with the item: "release" if it tells the arm to let go of it, open its hand, drop it, put it or set \
it down somewhere; "hold" if it only tells the arm to move, carry or bring it somewhere, still holding it. \
Answer with JSON.
"""
LET_GO_EXAMPLES = (
    ("now put it in the crate", "release"),
    ("carry it over to the shelf", "hold"),
    ("move above the bin", "hold"),
    ("drop it into the drawer", "release"),
    ("then you bring it to the basket", "hold"),
    ("set it down on the shelf", "release"),
    ("next go over to the sink with it", "hold"),
    ("leave it in the basket", "release"),
    ("then you open the gripper", "release"),
    ("head back to the start with it", "hold"),
)
"""Worked examples: (the person's step, answer)."""

LET_GO_SCHEMA = {"type": "object", "properties": {"is": {"enum": ["release", "hold"]}}, "required": ["is"],
                 "additionalProperties": False}
"""The side question's answer."""
HOLD = "hold"
"""The answer that keeps the item in the gripper."""


def let_go_messages(utterance: str) -> list[dict]:
    """The side question's messages for the person's step `utterance`."""
    out = [{"role": "system", "content": LET_GO_PROMPT}]
    for text, answer in (*LET_GO_EXAMPLES, (utterance, "")):
        out.append({"role": "user", "content": f"The step: {text}"})
        if answer:
            out.append({"role": "assistant", "content": json.dumps({"is": answer})})
    return out

"""The side question asked when a plan calls a taught behaviour the request does not name, and the goal the model
stated for the request is not what that behaviour does: which of the two readings does the person ask for?

Measured on a development session: after `gift` (put the item in the gift bag) was taught, "give me the cube" was
planned gift('cube') with the stated goal 'cube' in 'hands'; the goal was taken for the model's guess and the
cube went into the bag. The misheard-verb question (`verb_slip`) read "give" as `gift` misspelt, so it cannot
tell these apart. This question shows the model both outcomes on a copy of the table and lets it read the words.
The worked examples use verbs and objects of their own, not the scenes'.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

TAUGHT = "taught"
STATED = "stated"

READING_PROMPT = """\
A person asked a robot arm for something. The robot knows behaviours the person taught it. Its planner read the \
request two ways: as a taught behaviour, which would leave the table one way, or as the result it stated, which \
leaves it another way. Say which one the person's words ask for: "taught" if they ask for that behaviour (by \
its name, a slip of it, or words that mean doing it again), "stated" if they ask for the stated result. Answer \
with JSON.
"""
READING_EXAMPLES = (
    ("shelve the book", "shelve", "put the item on the shelf", "BOOK on SHELF", "BOOK in GRIPPER", TAUGHT),
    ("hand me the mug", "bin", "put the item in the bin", "MUG in BIN", "MUG in GRIPPER", STATED),
    ("do the same with the spoon", "file", "put the item in the folder", "SPOON in FOLDER", "SPOON in GRIPPER",
     TAUGHT),
    ("take the pen", "tuck", "put the item in the box", "PEN in BOX", "PEN in GRIPPER", STATED),
    ("fil the eraser too", "file", "put the item in the folder", "ERASER in FOLDER", "ERASER on DESK", TAUGHT),
    ("put the cup on the desk", "shelve", "put the item on the shelf", "CUP on SHELF", "CUP on DESK", STATED),
)
"""Worked examples: (request, taught behaviour, what it does, its outcome, the stated result, answer)."""

READING_SCHEMA = {"type": "object", "properties": {"is": {"enum": [TAUGHT, STATED]}}, "required": ["is"],
                  "additionalProperties": False}


def reading_messages(utterance: str, name: str, does: str, outcome: Sequence[str],
                     stated: Sequence[str]) -> list[dict]:
    """The question's messages: `utterance`, the taught behaviour `name` (what it `does`, its `outcome` on a copy of
    the table) and the `stated` result, each outcome as the planner's goal text (`CUBE in GRIPPER`)."""
    out = [{"role": "system", "content": READING_PROMPT}]
    for text, taught, what, left, result, answer in (
            *READING_EXAMPLES, (utterance, name, does, ", ".join(outcome), ", ".join(stated), "")):
        out.append({"role": "user", "content": f"The person says: {text}\nTaught behaviour: {taught}: {what}; it "
                                               f"would leave {left}\nStated result: {result}"})
        if answer:
            out.append({"role": "assistant", "content": json.dumps({"is": answer})})
    return out

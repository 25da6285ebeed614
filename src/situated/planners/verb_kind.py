"""The side question asked about the verb of a request: does it ask for something the robot's seed skills do as
they are, whatever words the person uses ("give me the cup", "hold the ball"), or for a behaviour of its own that
the person has to teach ("show off the duck", "stash the pear")?

The planner, asked to plan a verb it does not know, sometimes answers with the smallest calls over the named
object instead of the unknown-behaviour form (measured: "show off the ducky", "commit candy" and, after a failed
lesson, "Pack the toy car" were each planned as a lone `pickup`, so no lesson began), and sometimes answers a
plain synonym as unknown ("give me the strawberry": the unknown behaviour `give`). The model reads the verb again
with only this question to answer. The worked examples use verbs and objects of their own, not the scenes'.
"""

from __future__ import annotations

import json

VERB_PROMPT = """\
A person asked a robot arm for something. The arm can do these things as it is: "hand_over" (pick up, take or \
carry an item and keep it in its gripper, also to give or hand it to the person), "put" (put an item into a \
container or down on the table), "move" (move its gripper over something), "release" (let go of what it holds) \
and "home" (go back to its home pose). Say which of them the person's verb asks for, in whatever words the \
person uses for it, or "other" if it names some other behaviour, which the person will have to teach the robot, \
even when you could guess its steps. Answer with JSON.
"""
VERB_EXAMPLES = (
    ("pass me the mug", "pass", "hand_over"),
    ("stack the red block", "stack", "other"),
    ("lift the cup and keep holding it", "lift", "hand_over"),
    ("water the plant", "water", "other"),
    ("drop the spoon in the sink", "drop", "put"),
    ("tidy up the fork", "tidy", "other"),
    ("bring me the towel", "bring", "hand_over"),
    ("shelve the book", "shelve", "other"),
    ("transfer the cup onto the table", "transfer", "put"),
    ("polish the spoon", "polish", "other"),
    ("head over to the sink", "head", "move"),
    ("stick the pen into the cup", "stick", "put"),
)
"""Worked examples: (request, its verb, answer)."""

KNOWN = ("hand_over", "put", "move", "release", "home")
NEW = "other"
VERB_SCHEMA = {"type": "object", "properties": {"is": {"enum": [*KNOWN, NEW]}}, "required": ["is"],
               "additionalProperties": False}
"""The side question's answer."""


def verb_messages(verb: str, utterance: str) -> list[dict]:
    """The side question's messages for the person's `utterance`, whose action the word `verb` names."""
    out = [{"role": "system", "content": VERB_PROMPT}]
    for text, word, answer in (*VERB_EXAMPLES, (utterance, verb, "")):
        out.append({"role": "user", "content": f"The person says: {text}\nVerb: {word}"})
        if answer:
            out.append({"role": "assistant", "content": json.dumps({"is": answer})})
    return out

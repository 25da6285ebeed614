"""The side question asked before a lesson of a behaviour about no object begins: do the person's words ask the
robot to do something ("wave at me", "tidy up"), or only talk ("I've got a patient's lunch to set up, let's be
quick"; "Measure twice, cut once, that's what my old man used to say")?

Measured on an unseen set: both of those began lessons (of `set` and `measure`), and every request after them
became a step of a behaviour nobody was teaching. A lesson about a named object is not asked about: the object
says the person means the robot to act on it. The worked examples use words of their own, not the scenes'.
"""

from __future__ import annotations

import json

REQUEST_PROMPT = """\
A person is talking to a robot arm. Say what their words are: "request" if they ask or tell the robot to do \
something, even a thing it may not know how to do yet, "talk" if they only chat, say what they themselves are \
doing or will do, or say a saying, and ask the robot to do nothing. Answer with JSON.
"""
REQUEST_EXAMPLES = (
    ("wave at me", "request"),
    ("I have a big dinner to cook tonight, so let's hurry", "talk"),
    ("now do a little dance for me", "request"),
    ("an apple a day keeps the doctor away, as my mother said", "talk"),
    ("tidy up, please", "request"),
    ("we're getting everything ready for the party", "talk"),
    ("clean up the desk", "request"),
    ("wow, you're a fast learner", "talk"),
)
"""Worked examples: (the person's words, answer)."""

REQUEST_SCHEMA = {"type": "object", "properties": {"is": {"enum": ["request", "talk"]}}, "required": ["is"],
                  "additionalProperties": False}
"""The side question's answer."""


def request_messages(utterance: str) -> list[dict]:
    """The side question's messages for the person's `utterance`."""
    out = [{"role": "system", "content": REQUEST_PROMPT}]
    for text, answer in (*REQUEST_EXAMPLES, (utterance, "")):
        out.append({"role": "user", "content": f"The person says: {text}"})
        if answer:
            out.append({"role": "assistant", "content": json.dumps({"is": answer})})
    return out

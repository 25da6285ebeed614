"""The side question asked before a lesson of a new verb begins, when the robot has been taught behaviours whose
names sound like it: is the person's verb one of those, misheard by speech-to-text or misspelt ("surf the banana"
after `serve` was taught), or a new behaviour to teach ("stack the cup" after `stash`)?

Measured on an unseen session: "surf the banana" started a lesson of `surf` one utterance after `serve` was taught.
Code only offers the taught names that sound like the verb (`toolcall.misheard`, by sound class); the model reads
whether the person means one of them. The worked examples use verbs of their own, not the scenes'.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

SLIP_VERB_PROMPT = """\
A person talks to a robot arm through a speech-to-text engine, which sometimes writes a word that sounds like \
the one said, and people misspell. The robot knows a behaviour the person taught it. Say whether the person's \
verb is that taught behaviour's name, misheard or misspelt (it sounds or looks like it and the person means it), \
or "new" if it is another verb with its own meaning. Answer with JSON.
"""
SLIP_VERB_EXAMPLES = (
    ("shelf the book", "shelf", ("shelve",), "shelve"),
    ("stack the cup", "stack", ("stash",), "new"),
    ("polich the spoon", "polich", ("polish",), "polish"),
    ("peel the orange", "peel", ("pile",), "new"),
    ("now warter the plant", "warter", ("water",), "water"),
    ("wade the plant", "wade", ("water",), "new"),
    ("stoe the mug", "stoe", ("stow",), "stow"),
    ("spin the cup", "spin", ("span",), "new"),
)
"""Worked examples: (request, its verb, taught behaviours offered, answer)."""

NOT_TAUGHT = "new"


def slip_verb_messages(verb: str, utterance: str, taught: Sequence[str]) -> list[dict]:
    """The side question's messages for the verb `verb` of `utterance`, offered the `taught` behaviours' names."""
    out = [{"role": "system", "content": SLIP_VERB_PROMPT}]
    for text, word, names, answer in (*SLIP_VERB_EXAMPLES, (utterance, verb, tuple(taught), "")):
        out.append({"role": "user", "content": f"Taught behaviours: {', '.join(names)}\nThe person says: {text}\n"
                                               f"Verb: {word}"})
        if answer:
            out.append({"role": "assistant", "content": json.dumps({"is": answer})})
    return out


def slip_verb_schema(taught: Sequence[str]) -> dict:
    """The side question's answer: one of the `taught` names offered, or `NOT_TAUGHT`."""
    return {"type": "object", "properties": {"is": {"enum": [*taught, NOT_TAUGHT]}}, "required": ["is"],
            "additionalProperties": False}


def is_slip_verb_schema(schema: dict) -> bool:
    """Whether `schema` is this side question's (its answer's choices end with `NOT_TAUGHT`)."""
    choices = schema.get("properties", {}).get("is", {}).get("enum", [])
    return set(schema.get("properties", {})) == {"is"} and bool(choices) and choices[-1] == NOT_TAUGHT

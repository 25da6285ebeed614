"""The side question asked when a request uses a word the robot does not know beside an object it does: is the
person giving that object a new name ("when I say 'the sweet', I mean the candy"; "let's call the gift bag the
sack"), or using the word for something else ("put the sweet on the tray")?

The model reads the request; the robot then knows the word as that object, as if the person had pointed at it.
The worked examples use objects and words of their own, not the scene's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

NAMING_PROMPT = """\
A person told a robot arm something. One word of it is not the name of anything the robot knows. Say whether \
the person is giving one of the robot's known objects that new name (answer that object) or uses the word for \
something else, such as an object to find, a word describing an object it asks about or what to do with it \
(answer "no"). Answer with JSON.
"""
NAMING_EXAMPLES = (
    ("when I say the jar, I mean the mug", "jar", ("MUG", "SHELF"), "MUG"),
    ("put the jar on the shelf", "jar", ("SHELF",), "no"),
    ("from now on the tray is called the platter", "platter", ("CUP", "TRAY"), "TRAY"),
    ("move the cup next to the platter", "platter", ("CUP",), "no"),
    ("let's call that block Bob", "bob", ("BLOCK", "BIN"), "BLOCK"),
    ("wrap the block in the cloth", "cloth", ("BLOCK",), "no"),
    ("could you pick up the tall mug", "tall", ("MUG",), "no"),
)
"""Worked examples: (request, word, known objects it also names, answer)."""


def naming_messages(word: str, utterance: str, known: Sequence[str]) -> list[dict]:
    """The side question's messages: the request, the unknown `word`, and the known objects (members) it names."""
    out = [{"role": "system", "content": NAMING_PROMPT}]
    for text, name, names, answer in (*NAMING_EXAMPLES, (utterance, word, tuple(known), "")):
        out.append({"role": "user", "content": f"Known objects named: {', '.join(names)}\nRequest: {text}\n"
                                               f"Word: {name}"})
        if answer:
            out.append({"role": "assistant", "content": json.dumps({"word": name, "names": answer})})
    return out


def naming_schema(word: str, known: Sequence[str]) -> dict:
    """The answer: one of the known objects offered, or "no"."""
    return {"type": "object", "properties": {"word": {"enum": [word]}, "names": {"enum": [*known, "no"]}},
            "required": ["word", "names"], "additionalProperties": False}

"""The side question asked when the model answers a request with a behaviour it does not know: which of the
person's words names what they want done (or taught)?

The planner names an unknown behaviour by a word of the request, and sometimes picks the wrong one: a greeting
("yo can u grab the banana": `yo`), a word about the lesson rather than the behaviour ("I show you how to present
the banana": `show`), a word that frames the command ("execute a pick on the soup can": `execute`). The model
reads the request again with only that question to answer, choosing among the request's own words; the caller
then plans the request again with the unknown behaviour, if any, named by that word. The worked examples use
verbs and objects of their own, not the scene's.
"""

from __future__ import annotations

import json
import re

NO_ACTION = "NONE"
"""The answer for words that name no action (a correction: "no wait, I meant the box")."""

ACTION_PROMPT = """\
A person told a robot arm something. Say which one of the person's words names what they want the robot to do, \
or to learn to do: the verb of the request itself, never a greeting, a polite or filler word, or a word about \
asking, showing, teaching or defining (such as "show", "teach", "define", "execute", "perform"). Answer NONE \
when no word names an action, as when the person only corrects what they said before. Answer with JSON.
"""
ACTION_EXAMPLES = (
    ("hey there, could you stack the red block", "stack"),
    ("ok robot, let me show you how to water the plant", "water"),
    ("yo can u lift the mug", "lift"),
    ("please perform a wipe of the counter", "wipe"),
    ("I'm going to define a new routine. Name it shelve.", "shelve"),
    ("hello! lovely day. would you fold the towel for me", "fold"),
    ("grab me the cup", "grab"),
    ("I want to teach you something new. I will show you how to polish the spoon", "polish"),
    ("make a bouquet with the roses", "make"),
    ("no sorry, I meant the shelf, not the sink", NO_ACTION),
)
"""Worked examples: (request, the word that names the action)."""

MAX_WORDS = 60
"""At most this many distinct words are offered (a longer request is cut there)."""


def request_words(utterance: str) -> list[str]:
    """The request's distinct words (letters only, two or more), in order: the answers the question allows."""
    words = dict.fromkeys(w for w in re.findall(r"[a-z]+", utterance.lower()) if len(w) >= 2)
    return list(words)[:MAX_WORDS]


def action_messages(utterance: str) -> list[dict]:
    """The side question's messages for the person's `utterance`."""
    out = [{"role": "system", "content": ACTION_PROMPT}]
    for text, word in (*ACTION_EXAMPLES, (utterance, "")):
        out.append({"role": "user", "content": f"The person says: {text}"})
        if word:
            out.append({"role": "assistant", "content": json.dumps({"action": word})})
    return out


def action_schema(utterance: str) -> dict | None:
    """The answer: one of the request's words, or `NO_ACTION`; None when the request has no word."""
    words = request_words(utterance)
    if not words:
        return None
    return {"type": "object", "properties": {"action": {"enum": [*words, NO_ACTION]}}, "required": ["action"],
            "additionalProperties": False}

"""The side question asked during a lesson: does the person give another step, or say the lesson is over?

People end a lesson in their own words ("great, that's how you serve a fruit", "and that's fetching"), not only
with the phrases the robot suggests ("that's it"); the model reads them. The worked examples use behaviours and
words of their own, not the scene's.
"""

from __future__ import annotations

import json

LESSON_PROMPT = """\
A person is teaching a robot arm a new behaviour by telling it the steps one at a time. Say what the person's \
latest words are: "step" if they ask the robot to do something more (a motion, a grasp, going somewhere), \
"over" if they say the behaviour has now been shown and the lesson is finished. Answer with JSON.
"""
LESSON_EXAMPLES = (
    ("stack", "go to the red block", "step"),
    ("stack", "alright, this is how stacking works", "over"),
    ("water", "now tip it over the plant", "step"),
    ("water", "perfect, you've got it", "over"),
    ("clean up", "then go back home", "step"),
    ("clean up", "and that was cleaning up a thing", "over"),
    ("stack", "pick it up", "step"),
    ("wipe", "so that is the whole of wiping, thanks", "over"),
)
"""Worked examples: (behaviour, the person's words, answer)."""


def lesson_messages(name: str, utterance: str) -> list[dict]:
    """The side question's messages for the lesson of behaviour `name` and the person's latest `utterance`."""
    out = [{"role": "system", "content": LESSON_PROMPT}]
    for behaviour, text, answer in (*LESSON_EXAMPLES, (name.replace("_", " "), utterance, "")):
        out.append({"role": "user", "content": f"Lesson: {behaviour}\nThe person says: {text}"})
        if answer:
            out.append({"role": "assistant", "content": json.dumps({"is": answer})})
    return out


LESSON_SCHEMA = {"type": "object", "properties": {"is": {"enum": ["step", "over"]}}, "required": ["is"],
                 "additionalProperties": False}
"""The side question's answer."""

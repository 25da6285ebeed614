"""The side questions asked during a lesson: does the person give another step, or say the lesson is over? And
before the first step: do their words give a step, or only talk about the lesson ("I'll show you how to
quarantine the cube, quick")? And of the words that begin a lesson: do they give its first step too ("I want
teach you new thing, is called collect. First you take the banana.", a held-out session's)? And where the action
the words ask for is a skill's ("Step one: pick up the duck"): do they announce a lesson of the new name all the
same ("I'm going to teach you what it means to present something")?

People end a lesson in their own words ("great, that's how you serve a fruit", "and that's fetching"), not only
with the phrases the robot suggests ("that's it"); the model reads them. The worked examples use behaviours and
words of their own, not the scene's.
"""

from __future__ import annotations

import json

LESSON_END = "end"
"""The answer for words that end the lesson. Not "over": steps say "over" ("go over to the box", "go ovr to the
bin"), and with that label the 1.5B read such steps as the lesson's end (`benchmarks/sandbox_word_probe.py --only
end`: 29 of 32 cases with "over", 31 with "end"; docs/sandbox.md)."""
LESSON_PROMPT = f"""\
A person is teaching a robot arm a new behaviour by telling it the steps one at a time. Say what the person's \
latest words are: "step" if they ask the robot to do something more (a motion, a grasp, going somewhere), \
"{LESSON_END}" if they say the behaviour has now been shown and the lesson is finished. Answer with JSON.
"""
LESSON_EXAMPLES = (
    ("stack", "go to the red block", "step"),
    ("stack", "alright, this is how stacking works", LESSON_END),
    ("water", "now tip it over the plant", "step"),
    ("water", "perfect, you've got it", LESSON_END),
    ("clean up", "then go back home", "step"),
    ("clean up", "and that was cleaning up a thing", LESSON_END),
    ("stack", "pick it up", "step"),
    ("wipe", "so that is the whole of wiping, thanks", LESSON_END),
)
"""Worked examples: (behaviour, the person's words, answer)."""


def _messages(prompt: str, examples: tuple[tuple[str, str, str], ...], name: str, utterance: str,
              label: str = "Lesson") -> list[dict]:
    out = [{"role": "system", "content": prompt}]
    for behaviour, text, answer in (*examples, (name.replace("_", " "), utterance, "")):
        out.append({"role": "user", "content": f"{label}: {behaviour}\nThe person says: {text}"})
        if answer:
            out.append({"role": "assistant", "content": json.dumps({"is": answer})})
    return out


def lesson_messages(name: str, utterance: str) -> list[dict]:
    """The side question's messages for the lesson of behaviour `name` and the person's latest `utterance`."""
    return _messages(LESSON_PROMPT, LESSON_EXAMPLES, name, utterance)


LESSON_SCHEMA = {"type": "object", "properties": {"is": {"enum": ["step", LESSON_END]}}, "required": ["is"],
                 "additionalProperties": False}
"""The side question's answer."""

START_PROMPT = """\
A person has just told a robot arm that it will learn a new behaviour, and is about to tell it the steps one at \
a time. Say what the person's latest words are: "step" if they ask the robot to do something (a motion, a \
grasp, going somewhere), "talk" if they only speak about the lesson (say what they will show, what it is called \
or what it is for) and give no step yet. Answer with JSON.
"""
START_EXAMPLES = (
    ("stack", "ok, I'll show you how to stack the blocks", "talk"),
    ("stack", "first you take the red block", "step"),
    ("water", "right, watering. it's easy, watch", "talk"),
    ("water", "go to the plant", "step"),
    ("clean up", "let me teach you to clean up the desk then", "talk"),
    ("clean up", "you grab the sponge", "step"),
)
"""Worked examples for the first words of a lesson: (behaviour, the person's words, answer)."""


def start_messages(name: str, utterance: str) -> list[dict]:
    """The first-words question's messages for the lesson of behaviour `name` (no step shown yet)."""
    return _messages(START_PROMPT, START_EXAMPLES, name, utterance)


START_SCHEMA = {"type": "object", "properties": {"is": {"enum": ["step", "talk"]}}, "required": ["is"],
                "additionalProperties": False}
"""The first-words question's answer."""

STEP_PROMPT = """\
A person tells a robot arm that it will learn a new behaviour. In the same words they may already give the \
first step for the robot to do now (a motion, a grasp, going somewhere, picking something up, letting go). Copy \
the words of that first step as the person said them, or answer "" if they give no step: they only name the \
behaviour, say what it is for, or ask for the new behaviour itself. Answer with JSON.
"""
STEP_EXAMPLES = (
    ("stack", "I'll teach you to stack. First grab the red block.", "grab the red block"),
    ("water", "let me show you how to water the plant", ""),
    ("shelve", "new skill called shelve, step one: go over to the book", "go over to the book"),
    ("serve", "I want to teach you to serve. Serve the cup, please.", ""),
    ("tidy up", "can you learn tidying up? to start, could you pick up the sock", "pick up the sock"),
    ("wrap", "this one is called wrapping, you'll love it", ""),
    ("stow", "time to learn stowing. start by taking the mug, no, the cup", "taking the mug, no, the cup"),
    ("sweep", "you don't know sweeping yet, so I'll walk you through it", ""),
)
"""Worked examples for the words that begin a lesson: (behaviour, the person's words, the first step's words)."""
STEP_MAX = 200


def step_messages(name: str, utterance: str) -> list[dict]:
    """The first-step question's messages for the words `utterance` that began the lesson of behaviour `name`."""
    return _copy_messages(STEP_PROMPT, STEP_EXAMPLES, name, utterance)


def _copy_messages(prompt: str, examples: tuple[tuple[str, str, str], ...], name: str,
                   utterance: str) -> list[dict]:
    out = [{"role": "system", "content": prompt}]
    for behaviour, text, answer in (*examples, (name.replace("_", " "), utterance, None)):
        out.append({"role": "user", "content": f"Lesson: {behaviour}\nThe person says: {text}"})
        if answer is not None:
            out.append({"role": "assistant", "content": json.dumps({"step": answer})})
    return out


LAST_STEP_PROMPT = """\
A person is teaching a robot arm a new behaviour by telling it the steps one at a time, and their latest words \
may say the lesson is over. In the same words they may still ask the robot to do one more thing now (a motion, \
a grasp, letting go, going somewhere). Copy the words of that step as the person said them, or answer "" if \
they ask for nothing more: they only praise, thank, or say what the behaviour was. Answer with JSON.
"""
LAST_STEP_EXAMPLES = (
    ("stack", "alright, this is how stacking works", ""),
    ("water", "put it down over there. great work", "put it down over there"),
    ("clean up", "and that was cleaning up a thing", ""),
    ("wipe", "back to your start position, thanks, that's it", "back to your start position"),
    ("stack", "perfect, you've got it", ""),
    ("shelve", "now open your fingers. lovely", "now open your fingers"),
    ("sweep", "Stop. That is sweeping.", ""),
    ("paint", "Let go. Great, that's painting.", "Let go"),
)
"""Worked examples for words the lesson question reads as its end: (behaviour, the person's words, the step's
words). Measured on held-out sessions: "Drop it. Congrats." and "and let it go period" ended lessons before
their release, and the behaviours learnt never let go; "Finish. This is how to hoist." gave the step "Finish"."""


def last_step_messages(name: str, utterance: str) -> list[dict]:
    """The last-step question's messages for words `utterance` read as the end of the lesson of `name`."""
    return _copy_messages(LAST_STEP_PROMPT, LAST_STEP_EXAMPLES, name, utterance)


STEP_SCHEMA = {"type": "object", "properties": {"step": {"type": "string", "maxLength": STEP_MAX}},
               "required": ["step"], "additionalProperties": False}
"""The first-step question's answer: the step's words, "" for none."""

ANNOUNCE_PROMPT = """\
A person talks to a robot arm. Say whether their words announce that they will now teach it a new behaviour \
with the name given, and show its steps: "teach" if so (they may give the first step at once), "other" if the \
name is only a greeting, a word of talk, a word for teaching itself, or the person just asks for something the \
arm does. Answer with JSON.
"""
ANNOUNCE_EXAMPLES = (
    ("stack", "I'll show you how to stack. First grab the red block.", "teach"),
    ("hey", "hey can you grab the mug", "other"),
    ("shelve", "let me teach you shelving, step one: go to the book", "teach"),
    ("show", "I show you how to water the plant", "other"),
    ("wipe", "this is how you wipe: you pick up the sponge", "teach"),
    ("please", "please pick up the spoon and put it in the sink", "other"),
    ("sort", "can you learn to sort? start by taking the fork", "teach"),
    ("thanks", "thanks! now carry the cup to the shelf", "other"),
    ("fold", "time to learn something new, it's called fold", "teach"),
    ("water", "I used to water the garden every evening", "other"),
)
"""Worked examples: (name, the person's words, answer). Measured on a held-out session: "ok ima teach u smth new,
its called perch", an announcement with no step yet, was read "other" when every "teach" example gave a step."""
ANNOUNCE_SCHEMA = {"type": "object", "properties": {"is": {"enum": ["teach", "other"]}}, "required": ["is"],
                   "additionalProperties": False}
"""The announcement question's answer."""


def announce_messages(name: str, utterance: str) -> list[dict]:
    """The announcement question's messages: do the words `utterance` begin a lesson of the behaviour `name`?"""
    return _messages(ANNOUNCE_PROMPT, ANNOUNCE_EXAMPLES, name, utterance, label="Name")

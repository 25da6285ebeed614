"""Teaching a behaviour by showing it: the dialogue's state, how it ends, and how its trace becomes a body.

The robot meets an unknown behaviour ("pack the ball"), says so and asks to be taught. Every plan the user then
confirms is executed as usual and its successful calls are recorded, until the user says that they are done
("that's it", "done", ... `DONE_PHRASES`) or gives up ("never mind", ... `ABORT_PHRASES`). The objects the
triggering utterance named (the ball) become the behaviour's parameters wherever the recorded calls use them:
`pack(obj)` = `pickup(obj)`, `goto('gift_bag')`, `release()`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..program import Call, Var

DONE_PHRASES = ("done", "i'm done", "i am done", "all done", "that's it", "that is it", "thats it",
                "that's all", "that is all", "finished", "i'm finished", "we're done", "that's how",
                "that's how you do it", "stop teaching", "end of lesson")
"""What ends a teaching dialogue (compared after lower-casing and dropping punctuation)."""
ABORT_PHRASES = ("never mind", "nevermind", "forget it", "cancel teaching", "stop, forget it", "abort")
"""What abandons a teaching dialogue without learning anything."""
COMMAND_WORDS = frozenset({"teach", "quit", "point", "demo", "undo", "reset", "help", "library", "api", "metrics",
                           "image"})
"""The console's commands (`console.py`), the teaching dialogue's own words: no behaviour is taught by one of
these names (measured on a held-out session: "I'd like to teach you how to serve something" was answered as the
unknown behaviour `teach`, and serve's steps were learnt as `teach`)."""


LESSON_WORDS = COMMAND_WORDS | {"show", "learn"}
"""Words that talk about a lesson rather than name one: an unknown behaviour the model names by one of them is
asked again for the word the lesson is of (measured on a held-out session: "... to show you how to stow
something, which is a little routine ..." began a lesson of `show`)."""


def phrase(text: str) -> str:
    """`text` lower-cased, with typographic apostrophes straightened and other punctuation dropped."""
    text = text.lower().replace("\u2019", "'").replace("`", "'")
    return " ".join(re.sub(r"[^a-z0-9' ]+", " ", text).split()).strip("'")


COURTESIES = ("ok", "okay", "alright", "all right", "right", "good", "great", "cool", "perfect", "nice", "yes",
              "yeah", "yep", "so", "and", "now", "then", "thanks", "thank you", "please", "robot")
"""Words said around a closing phrase that do not change it ("OK, done.", "Great, that's it, thanks")."""

_DONE = frozenset(phrase(p) for p in DONE_PHRASES)
_ABORT = frozenset(phrase(p) for p in ABORT_PHRASES)
_AROUND = sorted((phrase(c) for c in COURTESIES), key=len, reverse=True)


def _core(text: str) -> str:
    """`phrase(text)` without the courtesies before and after it (all of it when it is nothing else)."""
    words = phrase(text)
    trimmed = True
    while trimmed:
        trimmed = False
        for c in _AROUND:
            if words.startswith(c + " "):
                words, trimmed = words[len(c) + 1:], True
            elif words.endswith(" " + c):
                words, trimmed = words[: -len(c) - 1], True
    return words


def is_done(text: str) -> bool:
    """Whether an utterance ends the teaching dialogue ("That's it!", "done.", "OK, done, thanks")."""
    return phrase(text) in _DONE or _core(text) in _DONE


def is_abort(text: str) -> bool:
    """Whether an utterance abandons the teaching dialogue ("never mind", "Okay, forget it.")."""
    return phrase(text) in _ABORT or _core(text) in _ABORT


@dataclass
class Teaching:
    """One teaching dialogue: the behaviour's word, the utterance that asked for it and the objects it named,
    and the calls recorded so far."""

    name: str
    utterance: str
    objects: tuple[str, ...] = ()
    steps: list[Call] = field(default_factory=list)
    start: Any = None
    """The table as it was when the lesson began (a `TableCopy`), to re-run the lesson on."""

    def generalized(self) -> tuple[str, ...]:
        """The named objects the recorded calls use: each becomes a parameter, in the order they were named."""
        used = {a for c in self.steps for a in c.args}
        return tuple(o for o in self.objects if o in used)

    def body_calls(self, params: Sequence[str]) -> tuple[Call, ...]:
        """The recorded calls with each generalized object replaced by its parameter."""
        replace = dict(zip(self.generalized(), params, strict=True))
        return tuple(Call(c.action, tuple(Var(replace[a]) if a in replace else a for a in c.args))
                     for c in self.steps)

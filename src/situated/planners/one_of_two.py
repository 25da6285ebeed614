"""A side question with two names to choose from: which of the two do the person's words mean, in the end?

The place question (`place_meant`) and the item question (`item_meant`) are this one question with their own
prompt, worked examples, answer key and label; the answer's schema admits only the two names, so nothing else can
be written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class OneOfTwo:
    """One such question: its system `prompt`, worked `examples` ((words, the two names in alphabetical order,
    answer), ...), the answer's JSON `key` ("place") and the `label` the names are shown under ("Places")."""

    prompt: str
    examples: tuple[tuple[str, tuple[str, str], str], ...]
    key: str
    label: str

    def schema(self, names: tuple[str, str]) -> dict:
        """The answer's schema: one of the two `names`."""
        return {"type": "object", "properties": {self.key: {"enum": list(names)}}, "required": [self.key],
                "additionalProperties": False}

    def messages(self, utterance: str, names: tuple[str, str]) -> list[dict]:
        """The question's messages for the person's `utterance` and the two `names` it says."""
        out = [{"role": "system", "content": self.prompt}]
        for text, pair, answer in (*self.examples, (utterance, names, "")):
            out.append({"role": "user", "content": f"The person says: {text}\n{self.label}: {' or '.join(pair)}"})
            if answer:
                out.append({"role": "assistant", "content": json.dumps({self.key: answer})})
        return out

"""A trace as token ids and labels: context pieces are not learned; an action piece is learned whole when the
history shows the target, else only its first token (the five actions' first tokens differ, and the decoding
grammar completes the rest), since the tokens after it in the sequence are the ones the history shows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .traces import Trace

IGNORE = -100
"""Label of a position that is not learned."""

Tokenize = Callable[[str], list[int]]


@dataclass(frozen=True)
class Encoded:
    """Token ids of a trace and, per position, the token to learn there (IGNORE: none)."""

    id: str
    ids: tuple[int, ...]
    labels: tuple[int, ...]

    @property
    def learned(self) -> int:
        return sum(label != IGNORE for label in self.labels)

    def first_action_positions(self) -> list[int]:
        """Positions of each action's first token (the next-action decisions)."""
        return [i for i, label in enumerate(self.labels)
                if label != IGNORE and (i == 0 or self.labels[i - 1] == IGNORE)]


def encode(trace: Trace, tokenize: Tokenize) -> Encoded:
    """Tokenize `trace` piece by piece (as the running agent's prompt and its answer are tokenized)."""
    ids: list[int] = []
    labels: list[int] = []
    for piece in trace.pieces:
        tokens = tokenize(piece.text)
        ids += tokens
        if piece.target is None:
            labels += [IGNORE] * len(tokens)
        elif piece.text == f" {piece.target}\n":
            labels += tokens
        else:
            labels += [tokenize(f" {piece.target}")[0]] + [IGNORE] * (len(tokens) - 1)
    return Encoded(trace.id, tuple(ids), tuple(labels))

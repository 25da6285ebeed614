"""Walking to a room before going to something in it (grounded decoding's last pass, beyond the paper).

ProgPrompt's plans go room by room: every example opens a sub-goal in another room with `walk('<room>')` before
it finds what is there. A small model often goes straight to the object (`walk('sofa')` from the kitchen). In
VirtualHome that is not the same move: a held object is put INSIDE the room the character *left* at each walk
(docs/fidelity.md), so the remote control carried straight to the sofa stays "inside" the kitchen, while the
released ground truths, made by room-by-room plans, have it inside the living room. This pass runs the finished
plan on the private copy of the scene and, before each top-level statement whose move takes the character into
another room without walking to that room, writes `walk('<room>')`; the pass is kept only when the new plan has
no more failed steps than the old one. It writes navigation only, over objects the grammar allows.
"""

from __future__ import annotations

from collections.abc import Sequence, Set

from ..program import Assert, Call, Program
from ..program.reading import statement_at
from ..trace import StepEvent

_ENTERS = "+ character INSIDE "


def room_entries(steps: Sequence[StepEvent], rooms: Set[str]) -> list[tuple[int, str]]:
    """(line, room) of each executed step that takes the character into another room of `rooms` and is not a
    walk to that room itself, in order."""
    entries = []
    for step in steps:
        if not step.ok:
            continue
        entered = [c[len(_ENTERS):] for c in step.changes if c.startswith(_ENTERS)]
        for room in entered:
            if room in rooms and step.call != f"walk('{room}')":
                entries.append((step.line, room))
    return entries


def with_room_walks(text: str, program: Program, steps: Sequence[StepEvent], rooms: Set[str],
                    from_line: int = 1) -> tuple[str, list[tuple[int, str]]]:
    """`text` with `walk('<room>')` written before each top-level call or assertion from line `from_line` on whose
    move enters another room (`room_entries`) unless the statement before it already walks there; and, in order,
    the (line before which it was written, in the old text; room) of each walk written."""
    lines = text.split("\n")
    wanted: dict[int, str] = {}
    for line, room in room_entries(steps, rooms):
        stmt = statement_at(program, line)
        if isinstance(stmt, (Call, Assert)) and stmt.line >= from_line:
            wanted.setdefault(stmt.line, room)
    written: list[tuple[int, str]] = []
    for at in sorted(wanted, reverse=True):
        walk = f"walk('{wanted[at]}')"
        if at >= 2 and lines[at - 2].strip() == walk:
            continue
        target = lines[at - 1]
        lines.insert(at - 1, target[: len(target) - len(target.lstrip())] + walk)
        written.append((at, wanted[at]))
    return "\n".join(lines), sorted(written)


def moved(line: int, written: Sequence[tuple[int, str]]) -> int:
    """Where old line `line` stands after the walks `written` (`with_room_walks`) were inserted."""
    return line + sum(1 for at, _ in written if at <= line)

"""EAI answers: the steps of an action sequence, its text in EAI's format for each protocol, and reading it back.

Layout: `{`, one `  "ACTION": [args]` entry per line (keys repeat: order is execution order, as EAI's
order-preserving parser reads it), `}`. 1.0.5 args are `"name", "id"` (the id quoted, as in the prompt's example
`["sink", "sink_id"]` and as the models write it unconstrained; EAI's evaluator reads `name_id` either way);
1.0.4 args are `"name"` (a bare name means the last listed object of that name, as the 1.0.4 evaluator maps it).
Zero-argument actions (STANDUP) are written `[]` as the prompt says, although EAI's parser then drops them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from situated.datasets.eai_actions import (
    EaiTask,
    check_protocol,
)
from situated.errors import ParseError
from situated.llm.base import Completion

_ENTRY = re.compile(r'"(\w+)"\s*:\s*(\[[^\]]*\])')
Call = tuple[str, tuple[int, ...]]
"""An action call by object ids: ("GRAB", (1002,))."""


@dataclass(frozen=True)
class Step:
    """One action of an answer: the EAI action name and its objects (names and node ids)."""

    action: str
    names: tuple[str, ...] = ()
    ids: tuple[int, ...] = ()

    @property
    def call(self) -> Call:
        return (self.action, self.ids)

    def script(self) -> str:
        """The line EAI's evaluator executes for it: `[WALK] <sink> (1001)`."""
        return " ".join([f"[{self.action}]", *(f"<{n}> ({i})" for n, i in zip(self.names, self.ids, strict=True))])


@dataclass(frozen=True)
class EaiPlan:
    """A task's answer in EAI's format (`text`, the evaluator's `llm_output`), its steps and what it cost."""

    task_id: str
    protocol: str
    mode: str
    text: str
    steps: tuple[Step, ...]
    completions: tuple[Completion, ...] = ()
    rejected: tuple[str, ...] = ()
    """Grounded: the rejections, `step N: <call or "end">: reason`, one per rewrite."""
    truncated: bool = False
    """The (last) answer hit `max_tokens` and was cut back to its complete steps."""
    checked_ok: bool | None = None
    """Grounded: whether the final plan ran and met every goal on the private scene (None: not checked)."""
    inserted: tuple[str, ...] = ()
    """Grounded with hints: the steps the checker put before a failing step, `step N: <steps> before <step>`."""
    prompt: str = field(default="", repr=False)

    @property
    def calls(self) -> int:
        return len(self.completions)

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.completions)

    @property
    def completion_tokens(self) -> int:
        return sum(c.completion_tokens for c in self.completions)

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.completions)

    @property
    def repairs(self) -> int:
        return len(self.rejected)

    def cost(self) -> dict[str, float | int]:
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "seconds": round(self.seconds, 3)}



# ---------------------------------------------------------------------------------------------- answer format

def format_answer(steps: Sequence[Step], protocol: str) -> str:
    """Steps as EAI's answer text for `protocol` (a JSON dictionary whose keys may repeat)."""
    check_protocol(protocol)
    if not steps:
        return "{}"
    return "{\n" + ",\n".join("  " + entry_text(s, protocol) for s in steps) + "\n}"


def entry_text(step: Step, protocol: str) -> str:
    """One step as an answer entry: `"WALK": ["sink", "1001"]` (1.0.5) or `"WALK": ["sink"]` (1.0.4)."""
    return f"{json.dumps(step.action)}: [{args_text(step.names, step.ids, protocol)}]"


def args_text(names: Sequence[str], ids: Sequence[int], protocol: str) -> str:
    """An entry's objects as JSON list items for `protocol`."""
    if protocol == "1.0.4":
        return ", ".join(json.dumps(n) for n in names)
    return ", ".join(f"{json.dumps(n)}, {json.dumps(str(i))}" for n, i in zip(names, ids, strict=True))


def parse_answer(text: str, task: EaiTask, protocol: str) -> tuple[Step, ...]:
    """Read an answer (model text, as data) into steps with ids; ParseError for what EAI could not score.

    Entries are found as EAI's parser finds them (`"KEY": [...]` in order, repeated keys kept), but `[]` is kept
    as a zero-argument step (EAI's parser skips it). Names must be listed objects; 1.0.5 ids must match them;
    a 1.0.4 bare name takes the last listed object of that name.
    """
    check_protocol(protocol)
    steps = []
    flat = re.sub(r"\s+", " ", text.replace("'", '"'))
    for match in _ENTRY.finditer(flat):
        action = match[1].upper()
        try:
            args = json.loads(match[2])
        except ValueError:
            raise ParseError(f"task {task.task_id}: cannot read the arguments of {action}: {match[2]!r}") from None
        steps.append(_step(action, args, task, protocol))
    if not steps and flat.strip(" {}"):
        raise ParseError(f"task {task.task_id}: no '\"ACTION\": [...]' entry in the answer {text[:80]!r}")
    return tuple(steps)


def _step(action: str, args: list, task: EaiTask, protocol: str) -> Step:
    where = f"task {task.task_id}: {action} {args!r}"
    if protocol == "1.0.4":
        if not all(isinstance(a, str) for a in args):
            raise ParseError(f"{where}: 1.0.4 answers name objects only")
        try:
            return Step(action, tuple(args), tuple(task.names_only_id(a) for a in args))
        except KeyError as exc:
            raise ParseError(f"{where}: {exc.args[0]!r} is not a listed object") from None
    if len(args) % 2:
        raise ParseError(f"{where}: 1.0.5 answers give each object as name, id")
    names, ids = tuple(args[0::2]), args[1::2]
    try:
        ids = tuple(int(i) for i in ids)
    except (TypeError, ValueError):
        raise ParseError(f"{where}: object ids must be numbers") from None
    for name, i in zip(names, ids, strict=True):
        listed = [o for o in task.objects if o.id == i]
        if not listed or listed[0].name != name:
            raise ParseError(f"{where}: {name!r} with id {i} is not a listed object")
    return Step(action, names, ids)


def convert_answer(text: str, task: EaiTask, source: str, target: str) -> str:
    """An answer in `source` format rewritten for `target` ("1.0.4" names only ↔ "1.0.5" name+id)."""
    return format_answer(parse_answer(text, task, source), target)


"""VirtualHome script lines, in both formats found in the data.

- ProgPrompt ground truth: `<char0> [putin] <barsoap> (34) <bathroomcabinet> (26)` (id after the name).
- eai-eval programs: `[PUTIN] <barsoap> (1.34) <cabinet> (1.26)` (`<script instance>.<node id>`: the node id is
  the number after the dot).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ...errors import ParseError
from ...program import Call

_LINE = re.compile(r"^\s*(?:<char(?P<char>\d+)>\s*)?\[(?P<action>[A-Za-z_]+)\](?P<rest>.*)$")
_ARG = re.compile(r"\s*<(?P<name>[^<>]+?)>\s*\((?P<num>\d+(?:\.\d+)?)\)")


@dataclass(frozen=True)
class InstanceCall(Call):
    """A call whose objects are given as scene node ids (a VirtualHome script line, `[GRAB] <salmon> (30)`):
    `args` holds their class names (for the checks and messages), `ids` the instances the action uses."""

    ids: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if len(self.ids) != len(self.args):
            raise ValueError(f"{self.action}: {len(self.args)} names but {len(self.ids)} ids")


@dataclass(frozen=True)
class ScriptStep:
    """One grounded script line: a lower-case action and its (class name, node id) arguments."""

    action: str
    names: tuple[str, ...]
    ids: tuple[int, ...]
    character: int = 0

    def call(self) -> InstanceCall:
        """The line as a call of `HouseholdEnv.step`, its objects given by node id."""
        return InstanceCall(self.action, self.names, 0, 0, self.ids)

    def __str__(self) -> str:
        args = "".join(f" <{n}> ({i})" for n, i in zip(self.names, self.ids, strict=True))
        return f"[{self.action}]{args}"


def parse_script_line(text: str, *, line: int = 0, source: str | None = None) -> ScriptStep:
    """Parse one script line; ParseError naming the line when it is not `[action] <name> (id) ...`."""
    match = _LINE.match(text)
    if match is None:
        raise ParseError(f"not a VirtualHome script line: {text.strip()!r}", line, 1, source)
    rest = match["rest"]
    names: list[str] = []
    ids: list[int] = []
    pos = 0
    while True:
        arg = _ARG.match(rest, pos)
        if arg is None:
            break
        names.append(arg["name"].strip().lower().replace(" ", "_"))
        ids.append(int(arg["num"].rsplit(".", 1)[-1]))
        pos = arg.end()
    if rest[pos:].strip():
        col = len(text) - len(rest) + pos + 1
        raise ParseError(f"cannot read the arguments {rest[pos:].strip()!r}", line, col, source)
    return ScriptStep(match["action"].lower(), tuple(names), tuple(ids), int(match["char"] or 0))


def parse_script(lines: Iterable[str], *, source: str | None = None) -> list[ScriptStep]:
    """Parse the script lines among `lines` (lines without `[` and `#` comments are skipped, as VirtualHome does)."""
    steps = []
    for k, text in enumerate(lines, 1):
        stripped = text.strip()
        if "[" not in stripped or stripped.startswith("#"):
            continue
        steps.append(parse_script_line(stripped, line=k, source=source))
    return steps

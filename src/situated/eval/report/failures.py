"""Why episodes failed, grouped so that a reader sees the few recurring causes instead of hundreds of lines.

Household: the reasons of failed steps (from the traces), of skipped steps and early stops, of drafts that
grounded decoding rejected, and of problems in the model's raw answers — each reason normalized (object names
of the call become <obj>, scene ids and numbers are dropped) so that "grab keyboard: ... keyboard (id 96)" and
"grab cup: ... cup (id 12)" count as one; plus the goal conditions left unmet.
Navigation: where each agent stopped relative to the gold route, and how far it followed the route.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ...trace import SkipEvent, StepEvent, StopEvent
from ..episode import Episode

_ID = re.compile(r"\s*\(id \d+\)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_QUOTED = re.compile(r"'([^']*)'")
_REJECTED = re.compile(r"^line \d+: (\w+\([^)]*\)): (.*)$", re.DOTALL)


def normalize_reason(reason: str, call: str = "") -> str:
    """A failure reason with the call's object names replaced by <obj> (<obj1>, <obj2> for two), scene ids
    removed and other numbers replaced by N, whitespace collapsed."""
    text = _ID.sub("", reason)
    names = list(dict.fromkeys(_QUOTED.findall(call)))
    tags = ["<obj>"] if len(names) == 1 else [f"<obj{i}>" for i in range(1, len(names) + 1)]
    placeholders = {}
    for index, (name, tag) in enumerate(sorted(zip(names, tags, strict=True), key=lambda p: -len(p[0]))):
        if name:
            token = f"\x00{chr(65 + index)}\x00"
            text = re.sub(rf"(?<![\w]){re.escape(name)}(?![\w])", token, text)
            placeholders[token] = tag
    text = _NUMBER.sub("N", text)
    for token, tag in placeholders.items():
        text = text.replace(token, tag)
    return " ".join(text.split())


def _with_action(call: str, reason: str) -> str:
    """The reason, prefixed with the call's action unless it already starts with it."""
    action = call.split("(", 1)[0].strip()
    return reason if not action or reason.startswith(action) else f"{action}: {reason}"


@dataclass(frozen=True)
class Group:
    """One normalized reason: how often it occurred (per run label) and one original example."""

    reason: str
    counts: tuple[int, ...]
    example: str

    @property
    def total(self) -> int:
        return sum(self.counts)


def group(per_run: Sequence[Iterable[tuple[str, str]]], limit: int = 15) -> list[Group]:
    """Group (normalized reason, example) pairs of each run; the `limit` most frequent overall, most first."""
    counters: list[Counter[str]] = []
    examples: dict[str, str] = {}
    for items in per_run:
        counter: Counter[str] = Counter()
        for reason, example in items:
            counter[reason] += 1
            examples.setdefault(reason, example)
        counters.append(counter)
    total = sum(counters, Counter())
    ranked = sorted(total, key=lambda r: (-total[r], r))[:limit]
    return [Group(r, tuple(c[r] for c in counters), examples[r]) for r in ranked]


def failed_steps(episodes: Iterable[Episode]) -> list[tuple[str, str]]:
    """(normalized reason, example) of every failed, skipped or stopped step in the traces."""
    items = []
    for episode in episodes:
        for event in episode.trace:
            if isinstance(event, StepEvent) and not event.ok:
                items.append((_with_action(event.call, normalize_reason(event.reason, event.call)),
                              f"{event.call}: {event.reason}"))
            elif isinstance(event, SkipEvent):
                items.append((f"skipped: {normalize_reason(event.reason, event.call)}",
                              f"{event.call}: {event.reason}"))
            elif isinstance(event, StopEvent):
                items.append((f"stopped: {normalize_reason(event.reason)}", event.reason))
    return items


def rejected_drafts(episodes: Iterable[Episode]) -> list[tuple[str, str]]:
    """(normalized reason, example) of every statement grounded decoding rejected (details["rejected"])."""
    items = []
    for episode in episodes:
        for text in episode.details.get("rejected", []) or []:
            match = _REJECTED.match(str(text))
            call, reason = (match.group(1), match.group(2)) if match else ("", str(text))
            items.append((_with_action(call, normalize_reason(reason, call)), str(text)))
    return items


def raw_problems(episodes: Iterable[Episode]) -> list[tuple[str, str]]:
    """(normalized problem, example) of what was wrong with the model's raw answers (details["problems"])."""
    items = []
    for episode in episodes:
        for text in episode.details.get("problems", []) or []:
            items.append((normalize_reason(_QUOTED.sub("'<name>'", str(text))), str(text)))
    return items


def unmet_goals(episodes: Iterable[Episode]) -> list[tuple[str, str]]:
    """(condition, task) for every goal condition an episode left unmet (details["missing"])."""
    return [(str(c), e.instruction) for e in episodes for c in e.details.get("missing", []) or []]


# ---------------------------------------------------------------------------------------------- navigation
STOP_KINDS = (
    ("reached", "stopped at the target (or next to it)"),
    ("past", "went past the target, stopped later"),
    ("early", "stopped on the route before the target"),
    ("off", "left the route and stopped elsewhere"),
    ("never", "never stopped (step limit)"),
)


def stop_kind(episode: Episode) -> str:
    """Where a navigation episode ended relative to its gold route (one of the keys of STOP_KINDS)."""
    if episode.metrics.get("tc"):
        return "reached"
    actions = episode.details.get("actions") or []
    if actions and actions[-1] != "stop":
        return "never"
    gold = list(episode.details.get("gold_path") or [])
    path = list(episode.details.get("pano_path") or [])
    if gold and gold[-1] in path:
        return "past"
    if path and path[-1] in gold:
        return "early"
    return "off"


def route_followed(episode: Episode) -> float:
    """The fraction of the gold route's moves the agent made before it first left the route."""
    gold = list(episode.details.get("gold_path") or [])
    path = list(episode.details.get("pano_path") or [])
    if len(gold) < 2:
        return 1.0
    common = 0
    for ours, theirs in zip(path, gold, strict=False):
        if ours != theirs:
            break
        common += 1
    return max(0, common - 1) / (len(gold) - 1)


def route_length(episode: Episode) -> int:
    """Moves on the gold route (panoramas - 1)."""
    return max(0, len(episode.details.get("gold_path") or []) - 1)

"""The local state in words ("You see: ..."), for assertion prompts and feedback."""

from __future__ import annotations

from .graph import SceneGraph
from .semantics import held

_STATE_WORDS = {"OPEN": "open", "CLOSED": "closed", "ON": "on", "OFF": "off", "DIRTY": "dirty", "CLEAN": "clean",
                "PLUGGED_IN": "plugged in", "PLUGGED_OUT": "unplugged", "HEATED": "heated", "WASHED": "washed",
                "USED": "used", "SITTING": "sitting", "LYING": "lying"}
_SCENERY = frozenset({"wall", "floor", "ceiling", "doorjamb", "walllamp", "ceilinglamp"})
MAX_ITEMS = 40


def object_phrase(g: SceneGraph, node: int) -> str:
    """`fridge (closed, off)` / `salmon (inside fridge)`: a node, its states and what holds it up."""
    details = [_STATE_WORDS.get(s, s.lower()) for s in sorted(g.states(node))]
    details += [f"on {g.class_name(s)}" for s in sorted(g.targets(node, "ON"))]
    details += [f"inside {g.class_name(s)}" for s in sorted(g.targets(node, "INSIDE")) if not g.is_room(s)]
    name = g.class_name(node)
    return f"{name} ({', '.join(details)})" if details else name


def _join(phrases: list[str]) -> str:
    unique = list(dict.fromkeys(phrases))
    extra = len(unique) - MAX_ITEMS
    text = ", ".join(unique[:MAX_ITEMS])
    return text + (f" and {extra} more" if extra > 0 else "")


def describe_character(g: SceneGraph, char: int) -> str:
    """What the character is close to, where it is and what it holds."""
    near = sorted((n for n in g.targets(char, "CLOSE") if not g.is_room(n)
                   and g.class_name(n) not in _SCENERY and n != char), key=lambda n: (g.class_name(n), n))
    seen = _join([object_phrase(g, n) for n in near]) or "nothing close by"
    room = g.room_of(char)
    where = f"You are in the {g.class_name(room)}" if room is not None else "You are nowhere"
    posture = [w for s, w in (("SITTING", "sitting"), ("LYING", "lying")) if s in g.states(char)]
    if posture:
        where += ", " + posture[0]
    hands = held(g, char)
    holding = ", ".join(g.class_name(n) for n in hands) if hands else "nothing"
    return f"You see: {seen}. {where}, holding {holding}."


def describe_object(g: SceneGraph, node: int) -> str:
    """An object, its states and what is on or inside it."""
    parts = [object_phrase(g, node)]
    inside = sorted(g.sources(node, "INSIDE"), key=lambda n: (g.class_name(n), n))
    on = sorted(g.sources(node, "ON"), key=lambda n: (g.class_name(n), n))
    name = g.class_name(node)
    if g.is_room(node):
        inside = [n for n in inside if g.class_name(n) not in _SCENERY and g.category(n) != "Characters"]
    if inside:
        parts.append(f"inside {name}: {_join([g.class_name(n) for n in inside])}")
    if on:
        parts.append(f"on {name}: {_join([g.class_name(n) for n in on])}")
    return "You see: " + "; ".join(parts) + "."

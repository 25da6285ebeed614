"""The `Object` enum's members and their docstrings: the scene's objects and the ones a user taught by pointing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..planners.toolcall import ObjectEntry

if TYPE_CHECKING:
    from ..envs.tabletop import TabletopEnv

DESCRIPTIONS: dict[str, str] = {
    "apple": "A red apple.",
    "banana": "A yellow banana.",
    "pear": "A green pear.",
    "strawberry": "A small strawberry.",
    "bottle": "A bottle (grasped at the neck).",
    "soup_can": "A can of soup.",
    "mug": "A blue mug.",
    "red_cube": "A small red block.",
    "blue_cube": "A small blue block.",
    "green_cube": "A small green block.",
    "cube": "A small block.",
    "ball": "An orange toy ball.",
    "duck": "A yellow rubber duck.",
    "candy": "A small, pink gummy candy.",
    "toy_car": "A small toy car.",
    "bowl": "A bowl that can hold items.",
    "plate": "A plate that items can be put on.",
    "box": "An open box that can hold items.",
    "tray": "A tray that can hold items.",
    "gift_bag": "A gift bag that can hold items.",
}


def describe_object(name: str, container: bool) -> str:
    """A docstring for a scene object: the catalogue's, or one from its name and kind."""
    if name in DESCRIPTIONS:
        return DESCRIPTIONS[name]
    words = name.replace("_", " ")
    return f"A {words} that can hold items." if container else f"A {words}."


def pointed_description(name: str, body: str | None) -> str:
    """A taught object's docstring: what the user pointed at."""
    return f"Pointed at by the person (the {body.replace('_', ' ')})." if body else "A place the person pointed at."


TABLE_ENTRY = ObjectEntry("table", "The table top, where everything stands: a place to put things on, not a thing to "
                                   "pick up.", "place")
"""The table: a member of `Object` in every scene, a place (never an unknown object)."""


def scene_entries(env: TabletopEnv) -> list[ObjectEntry]:
    """One entry per object the camera sees (scene names, not taught names), sorted by name, then the table."""
    containers = containers_of(env)
    aliases = set(env.aliases) | set(env.locations)
    return [*(ObjectEntry(n, describe_object(n, n in containers), "container" if n in containers else "item")
              for n in env.object_names() if n not in aliases), TABLE_ENTRY]


def taught_kind(env: TabletopEnv, name: str) -> str:
    """A taught name's kind: a place where nothing was pointed at, else the kind of the object it names."""
    body = env.aliases.get(name)
    if body is None:
        return "place"
    return "container" if body in containers_of(env) else "item"


def containers_of(env: TabletopEnv) -> set[str]:
    """The names (scene and taught) that are containers."""
    return {n for n, props in env.object_properties().items() if "CONTAINER" in props}

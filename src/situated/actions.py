"""ActionSpace: the agent's API — primitives with typed parameters, taught behaviours, and the object vocabulary.

An ActionSpace renders itself for each planner: ProgPrompt's import line, JSON tool schemas for tool-calling
models; `situated.program.grammar` builds decoding grammars from it. It is immutable; teaching returns a new space.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from .errors import UnknownActionError


@dataclass(frozen=True)
class Param:
    """One parameter of an action: its name and kind (`object` = a name from the object vocabulary)."""

    name: str
    kind: str = "object"
    doc: str = ""
    # The object must have at least one of these properties (VirtualHome's names, e.g. GRABBABLE); empty: any.
    affords: tuple[str, ...] = ()


@dataclass(frozen=True)
class Primitive:
    """An action the agent's body can execute directly."""

    name: str
    params: tuple[Param, ...] = ()
    doc: str = ""

    @property
    def arity(self) -> int:
        return len(self.params)


@dataclass(frozen=True)
class Behaviour(Primitive):
    """An action composed of other actions (taught by a user); `body` holds the composed calls as plan text."""

    body: str = ""


@dataclass(frozen=True)
class ActionSpace:
    """The actions an agent can take and the objects it may name."""

    actions: tuple[Primitive, ...]
    objects: tuple[str, ...] = ()
    _index: dict[str, Primitive] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        index: dict[str, Primitive] = {}
        for action in self.actions:
            if action.name in index:
                raise ValueError(f"duplicate action {action.name!r}")
            index[action.name] = action
        object.__setattr__(self, "_index", index)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __iter__(self) -> Iterator[Primitive]:
        return iter(self.actions)

    def __len__(self) -> int:
        return len(self.actions)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.actions)

    def get(self, name: str) -> Primitive:
        """The action called `name`; UnknownActionError if there is none."""
        try:
            return self._index[name]
        except KeyError:
            raise UnknownActionError(f"unknown action {name!r}") from None

    def with_objects(self, objects: Iterable[str]) -> ActionSpace:
        """The same actions over another object vocabulary (deduplicated, order kept)."""
        return replace(self, objects=tuple(dict.fromkeys(objects)))

    def with_action(self, action: Primitive) -> ActionSpace:
        """A space that also has `action` (replacing one of the same name): how teaching grows the API."""
        kept = tuple(a for a in self.actions if a.name != action.name)
        return replace(self, actions=(*kept, action))

    def restricted(self, names: Iterable[str]) -> ActionSpace:
        """The sub-space of the named actions, in the given order."""
        return replace(self, actions=tuple(self.get(n) for n in names))

    def import_line(self) -> str:
        """ProgPrompt's import line: `from actions import turnright, walk <obj>, putin <obj> <obj>, ...`."""
        parts = [" ".join([a.name, *(f"<{'obj' if p.kind == 'object' else p.name}>" for p in a.params)])
                 for a in self.actions]
        return "from actions import " + ", ".join(parts)

    def tool_schemas(self) -> list[dict]:
        """OpenAI-style function tool specifications, objects constrained to the vocabulary when it is known."""
        tools = []
        for action in self.actions:
            props: dict[str, dict] = {}
            for p in action.params:
                schema: dict = {"type": "string"}
                if p.kind == "object" and self.objects:
                    schema["enum"] = list(self.objects)
                if p.doc:
                    schema["description"] = p.doc
                props[p.name] = schema
            tools.append({
                "type": "function",
                "function": {
                    "name": action.name,
                    "description": action.doc,
                    "parameters": {"type": "object", "properties": props,
                                   "required": [p.name for p in action.params]},
                },
            })
        return tools


def _prim(name: str, doc: str, *params: str | Param) -> Primitive:
    return Primitive(name, tuple(p if isinstance(p, Param) else Param(p) for p in params), doc)


def _needs(name: str, *properties: str) -> Param:
    """An object parameter restricted to objects with one of `properties` (what the simulator requires)."""
    return Param(name, affords=properties)


_HELD = _needs("obj", "GRABBABLE")


# ProgPrompt's primitives, in the order of the paper's import line (PROTOCOLS.md §1).
PROGPROMPT_PRIMITIVES: tuple[Primitive, ...] = (
    _prim("turnright", "Turn the agent 30 degrees to the right."),
    _prim("turnleft", "Turn the agent 30 degrees to the left."),
    _prim("walkforward", "Walk one metre forward."),
    _prim("walktowards", "Walk towards an object or room.", "obj"),
    _prim("walk", "Walk to an object or room.", "obj"),
    _prim("run", "Run to an object or room.", "obj"),
    _prim("grab", "Grab an object that is close, with a free hand.", _HELD),
    _prim("switchon", "Switch on an object that has a switch.", _needs("obj", "HAS_SWITCH")),
    _prim("switchoff", "Switch off an object that has a switch.", _needs("obj", "HAS_SWITCH")),
    _prim("open", "Open a closed object that can be opened.", _needs("obj", "CAN_OPEN")),
    _prim("close", "Close an open object that can be opened.", _needs("obj", "CAN_OPEN")),
    _prim("lookat", "Look at an object.", "obj"),
    _prim("sit", "Sit on an object that can be sat on.", _needs("obj", "SITTABLE")),
    _prim("standup", "Stand up."),
    _prim("find", "Find an object and go close to it.", "obj"),
    _prim("turnto", "Turn to face an object.", "obj"),
    _prim("drink", "Drink from a held drinkable object or recipient.", _needs("obj", "DRINKABLE", "RECIPIENT")),
    _prim("pointat", "Point at an object.", "obj"),
    _prim("watch", "Watch an object, e.g. a switched-on tv.", _needs("obj", "LOOKABLE")),
    _prim("putin", "Put a held object inside a container.", _HELD, "container"),
    _prim("putback", "Put a held object on a surface.", _HELD, "surface"),
)

# The rest of VirtualHome's script actions, so that any VirtualHome program runs.
VIRTUALHOME_EXTRA_PRIMITIVES: tuple[Primitive, ...] = (
    _prim("touch", "Touch an object.", "obj"),
    _prim("type", "Type on an object with a keyboard.", "obj"),
    _prim("lie", "Lie on an object that can be lain on.", _needs("obj", "LIEABLE")),
    _prim("drop", "Drop a held object.", "obj"),
    _prim("release", "Release a held object.", "obj"),
    _prim("wipe", "Wipe an object.", "obj"),
    _prim("push", "Push a movable object.", "obj"),
    _prim("pull", "Pull a movable object.", "obj"),
    _prim("move", "Move a movable object.", "obj"),
    _prim("pour", "Pour a held pourable object into a recipient.", _needs("obj", "POURABLE", "DRINKABLE"),
          _needs("recipient", "RECIPIENT")),
    _prim("wash", "Wash an object.", "obj"),
    _prim("rinse", "Rinse an object.", "obj"),
    _prim("scrub", "Scrub an object.", "obj"),
    _prim("squeeze", "Squeeze an object.", "obj"),
    _prim("plugin", "Plug an object in.", _needs("obj", "HAS_PLUG")),
    _prim("plugout", "Unplug an object.", _needs("obj", "HAS_PLUG")),
    _prim("puton", "Put on a piece of clothing.", _needs("obj", "CLOTHES")),
    _prim("putoff", "Take off a piece of clothing.", _needs("obj", "CLOTHES")),
    _prim("putobjback", "Put a held object back where it was.", "obj"),
    _prim("read", "Read a held readable object.", _needs("obj", "READABLE")),
    _prim("eat", "Eat an eatable object.", "obj"),
    _prim("cut", "Cut a cuttable object.", "obj"),
    _prim("greet", "Greet a person.", "obj"),
    _prim("sleep", "Sleep."),
    _prim("wakeup", "Wake up."),
)

# VELMA's street-navigation actions (PROTOCOLS.md §2), each with the gloss its prompt shows.
STREET_PRIMITIVES: tuple[Primitive, ...] = (
    _prim("forward", "move ahead to the next spot along the street you are facing"),
    _prim("left", "at an intersection, turn to face the street on your left"),
    _prim("right", "at an intersection, turn to face the street on your right"),
    _prim("turn_around", "turn to face the opposite direction"),
    _prim("stop", "stop here because you have reached the goal"),
)

# ProgPrompt's tabletop variant (the paper's real-robot experiments, §V-C): one primitive.
TABLETOP_PRIMITIVES: tuple[Primitive, ...] = (
    _prim("grab_and_putin", "Pick up the first object and put it into the second, a container.",
          _needs("obj1", "GRABBABLE"), _needs("obj2", "CONTAINER")),
)

# Vocal Sandbox's seed skills (PROTOCOLS.md §3); taught behaviours, objects and motions join them.
SANDBOX_PRIMITIVES: tuple[Primitive, ...] = (
    _prim("go_home", "Move the arm back to its home pose above the table (compliant: the user may guide it)."),
    _prim("goto", "Move the gripper above an object, a container or a taught location (compliant).",
          Param("obj", doc="where to go")),
    _prim("grasp", "Close the gripper on whatever is between the fingers (not compliant)."),
    _prim("release", "Open the gripper and let go of what it holds (not compliant)."),
    _prim("pickup", "Go to an object, grasp it and lift it (not compliant).",
          Param("obj", doc="what to pick up", affords=("GRABBABLE",))),
)

NAVIGATION_ACTIONS = frozenset({"walk", "run", "find", "turnto", "lookat", "walktowards", "walkforward", "turnleft",
                                "turnright"})
"""Household actions that only move or orient the agent: a plan made executable by swapping a task's step for one
of them has dropped that step (Honest Exec)."""
ALREADY = " is already "
"""In the household environment's failure reasons: the action's effect already holds (open, grabbed, on, ...)."""

PROGPROMPT_SPACE = ActionSpace(PROGPROMPT_PRIMITIVES)
TABLETOP_SPACE = ActionSpace(TABLETOP_PRIMITIVES)
SANDBOX_SPACE = ActionSpace(SANDBOX_PRIMITIVES)
STREET_SPACE = ActionSpace(STREET_PRIMITIVES)
VIRTUALHOME_SPACE = ActionSpace(PROGPROMPT_PRIMITIVES + VIRTUALHOME_EXTRA_PRIMITIVES)

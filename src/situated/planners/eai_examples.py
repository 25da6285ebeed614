"""Worked examples for EAI action sequencing, written for this project (issue 14: few-shot examples come from
ProgPrompt's training plans or are written for the project; never from EAI's ground-truth programs).

Each example is a task in EAI's own input format (the five fields of its prompt template: objects with ids and
properties, current state, node / edge / action goals) and an answer that meets its goals under VirtualHome's
executor rules: walk to a room, walk to the object before acting on it, hold what is put somewhere, open a
container before putting something in and close it after. The tasks are not EAI task categories, the ids are
not the EAI scene's, and the examples were written once, from those rules, and not chosen by their effect on
EAI's tasks. `situated.planners.eai.model_prompt(..., shots=N)` puts the first N before the task as earlier turns
of the conversation.
"""

from __future__ import annotations

from dataclasses import dataclass

ExampleStep = tuple[str, tuple[tuple[str, int], ...]]
"""An answer step: action and its objects as (name, id)."""

_RULE = "-----------------\n"


@dataclass(frozen=True)
class EaiExample:
    """A project-written task in EAI's input format and an answer that achieves its goals."""

    name: str
    fields: tuple[tuple[str, str], ...]
    """The five template fields (`object_in_scene`, `cur_change`, `node_goals`, `edge_goals`, `action_goals`)."""
    answer: tuple[ExampleStep, ...]

    def field_map(self) -> dict[str, str]:
        return dict(self.fields)


def _objects(*objects: tuple[str, int, list[str]]) -> str:
    lines = [f"{name}, id: {i}, properties: {props!r}" for name, i, props in objects]
    return "Objects in the scene:\n" + "\n".join(lines) + "\n" + _RULE


def _state(nodes: list[tuple[str, list[str], list[str]]], edges: list[str]) -> str:
    node_lines = [f"{name}, states: {states!r}, properties:{props!r}" for name, states, props in nodes]
    return "Nodes:\n" + "\n".join(node_lines) + "\n\nEdges:\n" + "\n".join(edges) + "\n" + _RULE


def _lines(*lines: str) -> str:
    return "".join(f"{line}\n" for line in lines) + _RULE


def _actions(*actions: str) -> str:
    if not actions:
        return "There is no action requirement.\n"
    return "The following action(s) should be included:\n" + _lines(*actions)


_WASHER = ["CAN_OPEN", "CONTAINERS", "HAS_SWITCH", "HAS_PLUG", "RECIPIENT"]
_TOWEL = ["GRABBABLE", "MOVABLE"]

LAUNDRY = EaiExample(
    name="Put the towel in the washing machine",
    fields=(
        ("object_in_scene", _objects(("character", 65, []), ("kitchen", 205, []), ("bathroom", 11, []),
                                     ("towel", 2011, _TOWEL), ("washing_machine", 2012, _WASHER))),
        ("cur_change", _state(
            [("character", [], []), ("washing_machine", ["CLOSED", "OFF", "PLUGGED_IN"], _WASHER),
             ("towel", ["CLEAN"], _TOWEL)],
            ["<character> (65) is INSIDE to <kitchen> (205)", "<towel> (2011) is INSIDE to <bathroom> (11)",
             "<washing_machine> (2012) is INSIDE to <bathroom> (11)"])),
        ("node_goals", _lines("washing_machine is CLOSED", "washing_machine is ON")),
        ("edge_goals", _lines("towel is INSIDE to washing_machine")),
        ("action_goals", _actions()),
    ),
    answer=(
        ("WALK", (("bathroom", 11),)),
        ("WALK", (("towel", 2011),)),
        ("GRAB", (("towel", 2011),)),
        ("WALK", (("washing_machine", 2012),)),
        ("OPEN", (("washing_machine", 2012),)),
        ("PUTIN", (("towel", 2011), ("washing_machine", 2012))),
        ("CLOSE", (("washing_machine", 2012),)),
        ("SWITCHON", (("washing_machine", 2012),)),
    ),
)

_CHAIR = ["SITTABLE", "SURFACES", "MOVABLE"]

PAINTING = EaiExample(
    name="Look at the painting, then sit in the armchair",
    fields=(
        ("object_in_scene", _objects(("character", 65, []), ("bedroom", 67, []), ("living_room", 336, []),
                                     ("painting", 2021, ["LOOKABLE"]), ("armchair", 2022, _CHAIR))),
        ("cur_change", _state(
            [("character", [], [])],
            ["<character> (65) is INSIDE to <bedroom> (67)", "<painting> (2021) is INSIDE to <living_room> (336)",
             "<armchair> (2022) is INSIDE to <living_room> (336)"])),
        ("node_goals", _lines("character is SITTING")),
        ("edge_goals", _lines("character is ON to armchair")),
        ("action_goals", _actions("LOOKAT or WATCH")),
    ),
    answer=(
        ("WALK", (("living_room", 336),)),
        ("WALK", (("painting", 2021),)),
        ("TURNTO", (("painting", 2021),)),
        ("LOOKAT", (("painting", 2021),)),
        ("WALK", (("armchair", 2022),)),
        ("SIT", (("armchair", 2022),)),
    ),
)

EXAMPLES: tuple[EaiExample, ...] = (LAUNDRY, PAINTING)
"""The project's examples, in the order `shots=N` takes them."""

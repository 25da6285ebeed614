"""HouseholdEnv: the household Environment over a VirtualHome-format scene graph."""

from __future__ import annotations

from pathlib import Path

from ...actions import VIRTUALHOME_SPACE, ActionSpace, Param, Primitive
from ...errors import UnknownObjectError
from ...program import Call, Condition, Var
from ..base import StepResult
from ..checked import CallWording, checked_step
from .conditions import class_conditions
from .derived import apply_derived
from .describe import describe_character, describe_object
from .graph import SceneGraph
from .grounding import Grounder, normalize
from .script import InstanceCall
from .semantics import HOLDS, World, apply_action, is_close

HOUSEHOLD_SPACE: ActionSpace = VIRTUALHOME_SPACE.with_action(
    Primitive("lookat_short", (Param("obj"),), "Look at an object briefly.")).with_action(
    Primitive("lookat_long", (Param("obj"),), "Look at an object for a long time."))
"""Every action the household simulator runs: VirtualHome's, and EAI's two timed looks."""

HOUSEHOLD_WORDING = CallWording(unknown="unknown action {action!r}",
                                arity="{words}: {name} takes {arity} object(s), got {got}",
                                unbound="{words}: loop variable {var!r} is not bound", fold_case=True)

# Assertion state words (ProgPrompt's `'opened'`, `'switchon'`, ...) → graph states.
_STATE_NAMES = {"opened": "OPEN", "open": "OPEN", "closed": "CLOSED", "switchon": "ON", "switchedon": "ON",
                "on": "ON", "switchoff": "OFF", "switchedoff": "OFF", "off": "OFF", "plugged_in": "PLUGGED_IN",
                "plugged_out": "PLUGGED_OUT", "unplugged": "PLUGGED_OUT"}


class HouseholdEnv:
    """A household scene the interpreter acts in: grounding, VirtualHome action semantics, derived states."""

    def __init__(self, graph: dict | SceneGraph, *, seed: int = 0, derived_states: bool = True) -> None:
        own = graph.copy() if isinstance(graph, SceneGraph) else SceneGraph.from_dict(graph)
        self._world = World(own, own.character())   # reset() rewinds its journal to the initial graph
        self._grounder = Grounder(seed)
        self.derived_states = derived_states

    @classmethod
    def from_file(cls, path: str | Path, *, seed: int = 0, derived_states: bool = True) -> HouseholdEnv:
        """Load a VirtualHome JSON graph; DataError naming the file and field when it is malformed."""
        return cls(SceneGraph.load(path), seed=seed, derived_states=derived_states)

    def fork(self) -> HouseholdEnv:
        """An independent copy of the current state (graph and grabs, no grounding memory) to try actions on."""
        other = HouseholdEnv.__new__(HouseholdEnv)
        other._world = World(self.graph.copy(), self.character, dict(self._world.grabbed_from))
        other._grounder = Grounder(0)
        other.derived_states = self.derived_states
        return other

    @property
    def graph(self) -> SceneGraph:
        return self._world.graph

    @property
    def character(self) -> int:
        return self._world.character

    # ------------------------------------------------------------------ Environment protocol
    def reset(self, task: object = None) -> str:
        """Restore the initial graph and forget the grounding memory; returns describe()."""
        self._world.rewind()
        self._grounder.reset()
        return self.describe()

    def step(self, call: Call) -> StepResult:
        """Check the call (`checked_step`), ground its class names to node ids (an `InstanceCall` names them
        already) and run the action."""
        return checked_step(call, HOUSEHOLD_SPACE, HOUSEHOLD_WORDING, self._step_checked)

    def _step_checked(self, call: Call) -> StepResult:
        action = call.action.lower()
        if isinstance(call, InstanceCall):
            return self._step_ids(action, call.ids)
        ids = []
        for arg in call.args:
            try:
                ids.append(self._grounder.ground(self.graph, str(arg), self.character))
            except UnknownObjectError as exc:
                words = " ".join([action, *(str(a) for a in call.args)])
                return StepResult(False, f"{words}: {exc}")
        return self._step_ids(action, tuple(ids))

    def _step_ids(self, action: str, ids: tuple[int, ...]) -> StepResult:
        """Run an already-grounded action; remembers the instances used."""
        result = apply_action(self._world, action, tuple(ids), apply_derived if self.derived_states else None)
        if result.ok:
            for node in ids:
                self._grounder.remember(self.graph, node)
        return result

    def holds(self, condition: Condition) -> bool:
        """Symbolic check of an assertion: close / state / holds / inside / on, possibly negated."""
        return self._holds(condition) != condition.negated

    def _ids(self, arg: object) -> list[int]:
        """The instances a condition's name refers to: the remembered one when there is one, else all."""
        if isinstance(arg, Var):
            return []
        key = normalize(str(arg))
        ids = self.graph.ids_of(key)
        remembered = self._grounder.memory.get(key)
        return [remembered] if remembered in ids else ids

    def _holds(self, condition: Condition) -> bool:
        g, char = self.graph, self.character
        kind, args = condition.kind, condition.args
        first = self._ids(args[0]) if args else []
        if kind == "close":
            return any(is_close(g, char, n) for n in first)
        if kind == "holds":
            return any(g.has_edge(char, hand, n) for n in first for hand in HOLDS)
        if kind == "state":
            word = normalize(str(args[1])).replace("_", "") if len(args) > 1 else ""
            state = _STATE_NAMES.get(word, normalize(str(args[1])).upper() if len(args) > 1 else "")
            return any(state in g.states(n) for n in first)
        if kind in ("inside", "on"):
            second = self._ids(args[1]) if len(args) > 1 else []
            rel = kind.upper()
            return any(g.has_edge(a, rel, b) for a in first for b in second)
        return False

    def describe(self, near: str | None = None) -> str:
        """"You see: ..." around the character, or about the named object."""
        if near is None:
            return describe_character(self.graph, self.character)
        try:
            node = self._grounder.ground(self.graph, near, self.character)
        except UnknownObjectError:
            return f"You see no {near} in this scene."
        return describe_object(self.graph, node)

    def snapshot(self) -> dict:
        return self.graph.to_dict()

    # ------------------------------------------------------------------ extras
    def object_names(self) -> list[str]:
        """Sorted unique class names of the scene's objects (rooms included)."""
        return self.graph.class_names()

    def object_properties(self) -> dict[str, frozenset[str]]:
        """Each class name's properties (GRABBABLE, CAN_OPEN, ...), united over its instances: what it affords."""
        g = self.graph
        return {name: frozenset().union(*(g.properties(i) for i in g.ids_of(name))) for name in g.class_names()}

    def conditions(self) -> frozenset[str]:
        """Class-level facts of the current graph (see conditions.class_conditions)."""
        return class_conditions(self.graph)

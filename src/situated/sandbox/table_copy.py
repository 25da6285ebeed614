"""A private, symbolic copy of the table: where each object is, what the gripper holds and where the arm is.

Plans are tried on it before the person sees them (`checking.py`): it runs the seed skills with the same rules
and the same failure reasons as the simulated arm (`envs/tabletop/skills.py`) — `grasp` while holding something
fails ("already holding 'ball'"), `grasp` with no item under the gripper closes on nothing, `pickup` of a
container or a place fails, `release` drops what is held into the container the arm is over, or onto the table —
but takes microseconds instead of seconds of physics. Geometry it cannot know (reach, a grasp that misses) is
left to the real run. It is an `Environment`, so the interpreter runs plans on it as on the arm.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..envs.base import StepResult
from ..program import Call, Condition, Var

if TYPE_CHECKING:
    from ..envs.tabletop import TabletopEnv

TABLE = "table"
"""The table top: a place everything stands on, never an object to pick up."""
HOME = "home"
SEED_SKILLS = frozenset({"go_home", "goto", "grasp", "release", "pickup"})
GRIPPER_WORDS = frozenset({"gripper", "hand", "hands"})  # the place names of the gripper in conditions
ARM_NEAR = 0.05
"""The arm is at an object when the gripper is within this distance (m) of it horizontally."""


@dataclass
class TableCopy:
    """The symbolic state of the table (see the module docstring). `where` maps each item to the container,
    item or place it is in or on; `arm` is what the gripper is at ('home', an object or a place)."""

    items: frozenset[str]
    containers: frozenset[str]
    places: frozenset[str] = frozenset({TABLE})
    where: dict[str, str] = field(default_factory=dict)
    held: str | None = None
    arm: str = HOME
    motions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Taught motion skills (`name(target)`) and their gripper events in order ("close", "open"): a motion moves the
    arm to the target; a close grasps the target if it is an item and fails if the gripper already holds something
    (as on the arm: "close the gripper: already holding 'ball'"); an open lets go there. Without events it changes
    nothing else."""
    aliases: Mapping[str, str] = field(default_factory=dict)
    """Taught names of scene objects (`marker` → `pen`)."""
    unseen: frozenset[str] = frozenset()
    """Objects the camera does not see now: going to them fails, as on the arm ("I cannot see the duck")."""

    # -- building ------------------------------------------------------------------------------------------------

    @classmethod
    def of_env(cls, env: TabletopEnv, motions: Mapping[str, Sequence[str]] | None = None) -> TableCopy:
        """A copy of the simulated table as it is now; `motions`: the taught motions' gripper events."""
        props = env.object_properties()
        containers = frozenset(n for n, p in props.items() if "CONTAINER" in p and n not in env.aliases)
        items = frozenset(n for n, p in props.items() if "GRABBABLE" in p and n not in env.aliases)
        where: dict[str, str] = {}
        for fact in env.conditions():
            words = fact.split()
            if len(words) == 3 and words[1] in ("INSIDE", "ON"):
                where[words[0]] = words[2]
        held = env.world.held_name()
        for item in items:
            if item != held:
                where.setdefault(item, TABLE)
        unseen = (items | containers) - set(env.percepts()) - {held}
        copy = cls(items, containers, frozenset({TABLE, *env.locations}), where, held, HOME,
                   {n: tuple(e) for n, e in (motions or {}).items()}, dict(env.aliases), frozenset(unseen))
        copy.arm = _arm_at(env, copy)
        return copy

    def copy(self) -> TableCopy:
        return replace(self, where=dict(self.where))

    def key(self) -> tuple:
        """A hashable summary of the state (for search)."""
        return (self.held, self.arm, tuple(sorted(self.where.items())))

    def resolve(self, name: str) -> str:
        return self.aliases.get(name, name)

    def known(self, name: str) -> bool:
        name = self.resolve(name)
        return name in self.items or name in self.containers or name in self.places

    # -- the Environment protocol --------------------------------------------------------------------------------

    def reset(self, task: Any = None) -> str:
        return self.describe()

    def step(self, call: Call) -> StepResult:
        """One skill on the copy, with the arm's failure reasons."""
        if any(isinstance(a, Var) for a in call.args):
            return StepResult(False, f"{call.action}: an argument is not bound")
        args = [self.resolve(str(a)) for a in call.args]
        before = self.facts()
        reason = self._run(call.action, args)
        after = self.facts()
        changes = tuple([f"+ {f}" for f in sorted(after - before)] + [f"- {f}" for f in sorted(before - after)])
        return StepResult(not reason, f"{call.action}: {reason}" if reason else "", changes)

    def _run(self, action: str, args: list[str]) -> str:
        for name in args:
            if not self.known(name):
                return f"no object {name!r} here"
            if name in self.unseen and action in ("goto", "pickup", *self.motions) and name != self.held:
                return f"I cannot see the {name.replace('_', ' ')}"
        if action in self.motions:
            self.arm = args[0] if args else self.arm
            return self._motion(self.motions[action])
        if action == "go_home":
            self.arm = HOME
        elif action == "goto":
            if args[0] != self.held:
                self.arm = args[0]
        elif action == "grasp":
            return self._grasp()
        elif action == "release":
            self._release()
        elif action == "pickup":
            return self._pickup(args[0])
        else:
            return f"unknown action {action!r}"
        return ""

    def _motion(self, events: Sequence[str]) -> str:
        """A motion's gripper events at the target: a close takes the target item from where it lies, an open puts
        what is held back there (the motion ends where it started), or where the arm is."""
        origin = None
        for event in events:
            if event == "close" and self.held is not None:
                return f"close the gripper: already holding '{self.held}'"
            if event == "close" and self.arm in self.items:
                self.held, origin = self.arm, self.where.pop(self.arm, TABLE)
            elif event == "open" and self.held is not None:
                if origin is not None:
                    self.where[self.held], self.held = origin, None
                else:
                    self._release()
        return ""

    def _grasp(self) -> str:
        if self.held is not None:
            return f"already holding '{self.held}'"
        if self.arm not in self.items:
            return "the gripper closed on nothing"
        self.held = self.arm
        spot = self.where.pop(self.arm, TABLE)
        if spot in self.containers:  # lifted out of a container, the item is still above it
            self.arm = spot
        return ""

    def _release(self) -> None:
        if self.held is None:
            return
        spot = self.arm if self.arm in self.containers or self.arm in self.places else TABLE
        self.where[self.held] = spot
        self.held = None

    def _pickup(self, name: str) -> str:
        if self.held == name:
            return ""
        if self.held is not None:
            return f"already holding '{self.held}'"
        if name in self.containers:
            return f"'{name}' is a container and cannot be picked up"
        if name in self.places:
            return f"'{name}' is a place, not a thing to pick up"
        self.arm = name
        return self._grasp()

    def holds(self, condition: Condition) -> bool:
        return self._holds(condition) != condition.negated

    def _holds(self, condition: Condition) -> bool:
        if any(isinstance(a, Var) for a in condition.args):
            return False
        args = [self.resolve(str(a)) for a in condition.args]
        if condition.kind == "holds":
            return self.held == args[0]
        if condition.kind == "close":
            return args[0] in (self.arm, self.held)
        if condition.kind == "state":
            return args[0] in GRIPPER_WORDS and len(args) > 1 and (
                args[1] in ("open", "opened")) == (self.held is None)
        if len(args) < 2:
            return False
        if args[1] in GRIPPER_WORDS:
            return self.held == args[0]
        return self.where.get(args[0]) == args[1]

    def facts(self) -> frozenset[str]:
        """Where everything is, in the words the prompt uses: "ball in gift_bag", "ball held", "arm at tray"."""
        out = {f"{item} {'in' if spot in self.containers else 'on'} {spot}" for item, spot in self.where.items()}
        if self.held is not None:
            out.add(f"{self.held} held")
        return frozenset(out)

    def describe(self, near: str | None = None) -> str:
        return "; ".join(sorted(self.facts())) + f"; the arm is at {self.arm}"

    def snapshot(self) -> dict:
        return {"where": dict(self.where), "held": self.held, "arm": self.arm}


def _arm_at(env: TabletopEnv, copy: TableCopy) -> str:
    """What the gripper is at: the object (or taught place) right under it, else home."""
    snap = env.snapshot()
    ee = snap["gripper"]["position"]
    best: tuple[float, str] | None = None
    points = {n: list(p.origin) for n, p in env.percepts().items() if n != copy.held}  # as the camera saw them
    points.update({n: list(p) for n, p in env.locations.items()})
    for name, position in points.items():
        distance = ((ee[0] - position[0]) ** 2 + (ee[1] - position[1]) ** 2) ** 0.5
        reach = ARM_NEAR if name in copy.items else 0.09
        if distance <= reach and (best is None or distance < best[0]):
            best = (distance, name)
    return best[1] if best else HOME

"""TabletopEnv: a Panda arm on a table with household objects, simulated by pybullet, as an Environment.

Plans call the skills `go_home()`, `goto(obj)`, `grasp()`, `release()`, `pickup(obj)` and
`grab_and_putin(obj, container)`; conditions (`'duck' in 'tray'`, `'duck' in 'hands'`, `'close' to 'duck'`,
`'duck' on 'tray'`, `'duck' on 'spot'` for a taught spot) are read from the simulation's geometry. The object list
comes from the camera (segmentation and depth), plus the names a user has taught; the skills aim with the camera's
percepts too (`percepts.py`, `seen.py`), with `perception_noise` (m) on every lifted point. Taught names and spots
are knowledge, not scene: reset() keeps them.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...actions import SANDBOX_PRIMITIVES, TABLETOP_PRIMITIVES, ActionSpace
from ...program import Call, Condition, Var
from ..base import StepResult
from ..checked import CallWording, checked_step
from . import relations
from .arm import FINGER_OPEN
from .bodies import yaw_of
from .camera import Camera
from .catalogue import CATALOGUE
from .perception import Observation, perceive
from .percepts import Percept, covered_by, estimate_all
from .png import save_png
from .scene import Scene, load_scene, resolve_scene
from .seen import Grip, SeenWorld
from .skills import Skills
from .world import TABLE_Z, World

TABLETOP_SKILLS = ActionSpace(SANDBOX_PRIMITIVES + TABLETOP_PRIMITIVES)
"""The only actions `step` accepts: Vocal Sandbox's seed skills and ProgPrompt's `grab_and_putin`."""
TABLETOP_WORDING = CallWording(unknown="unknown action {action!r} (known: {known})")
# Skill name → number of object arguments.
SKILLS: dict[str, int] = {skill.name: skill.arity for skill in TABLETOP_SKILLS}
_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
_GRIPPER_WORDS = frozenset({"gripper", "hand", "hands"})
PLACE_HEIGHT = 0.05
"""A place pointed at lies on the table: within this height (m) of the table top."""


def normalize(name: str) -> str:
    """`Gift Bag` / `GIFT_BAG` / `gift-bag` → `gift_bag`."""
    return re.sub(r"[\s\-]+", "_", str(name).strip().lower())


class TabletopEnv:
    """A simulated tabletop scene the interpreter acts in (see the module docstring)."""

    def __init__(self, scene: Scene | Sequence[str] | str | Path = "gift_bag", *, seed: int = 0,
                 slip_probability: float = 0.0, camera: Camera | None = None, perception_noise: float = 0.0) -> None:
        """`scene`: a Scene, catalogue names (laid out with `seed`), a built-in scene's name or a scene file.
        `perception_noise`: standard deviation (m) of the error on each lifted camera point (seeded by `seed`);
        every grasp held up to 3 cm in the benchmark, 2 cm is the documented level (docs/sandbox.md, "Perception")."""
        if not 0.0 <= slip_probability <= 1.0:
            raise ValueError(f"slip_probability must lie in [0, 1], got {slip_probability}")
        if not 0.0 <= perception_noise <= 0.2:
            raise ValueError(f"perception_noise must lie in [0, 0.2] m, got {perception_noise}")
        self.seed = seed
        self.perception_noise = perception_noise
        self.scene = resolve_scene(scene, seed)
        self.camera = camera or Camera()
        self.world = World(self.scene)
        self._rng = random.Random(seed)
        self._noise = np.random.default_rng(seed)
        self.skills = Skills(self.world, self._rng, slip_probability, look=self.look, put_down=self._put_down)
        self.aliases: dict[str, str] = {}                 # taught name → body name
        self.locations: dict[str, tuple[float, float, float]] = {}
        self._seen: tuple[int, Observation] | None = None
        self._percepts: tuple[Observation | None, dict[str, Percept]] | None = None

    @classmethod
    def from_file(cls, path: str | Path, *, seed: int = 0, slip_probability: float = 0.0,
                  camera: Camera | None = None, perception_noise: float = 0.0) -> TabletopEnv:
        """Load a scene file (`situated-tabletop-scene/1`); DataError naming the file and field when malformed."""
        return cls(load_scene(path, seed), seed=seed, slip_probability=slip_probability, camera=camera,
                   perception_noise=perception_noise)

    def close(self) -> None:
        """Disconnect the simulator (the environment is unusable afterwards)."""
        self.world.close()

    @property
    def slip_probability(self) -> float:
        return self.skills.slip_probability

    @slip_probability.setter
    def slip_probability(self, value: float) -> None:
        self.skills.slip_probability = value

    @property
    def sim_time(self) -> float:
        """Simulated seconds since the last reset."""
        return self.world.time

    # ------------------------------------------------------------------ names
    def resolve(self, name: str) -> str | None:
        """The body a name refers to (scene name or taught alias), or None."""
        key = normalize(name)
        if key in self.world.bodies:
            return key
        return self.aliases.get(key)

    def _target(self, name: str) -> str | np.ndarray | None:
        body = self.resolve(name)
        if body is not None:
            return body
        spot = self.locations.get(normalize(name))
        return np.array(spot) if spot is not None else None

    def object_names(self) -> list[str]:
        """Sorted names the camera sees now, plus taught names and spots (and what the gripper holds)."""
        seen = set(self.observe().names)
        held = self.world.held_name()
        if held is not None:
            seen.add(held)
        seen.update(alias for alias, body in self.aliases.items() if body in seen)
        seen.update(self.locations)
        return sorted(seen)

    def object_properties(self) -> dict[str, frozenset[str]]:
        """What each name affords: {"GRABBABLE"} for items, {"CONTAINER"} for containers, {"LOCATION"} for spots."""
        props: dict[str, frozenset[str]] = {}
        for name, body in self.world.bodies.items():
            props[name] = frozenset({"CONTAINER"} if body.spec.is_container else {"GRABBABLE"})
        for alias, body in self.aliases.items():
            props[alias] = props[body]
        for spot in self.locations:
            props[spot] = frozenset({"LOCATION"})
        return props

    def kinds(self) -> dict[str, str]:
        """Each scene object's kind (fruit, bottle, can, cup, block, toy, sweet, container): for sorting tasks."""
        return {name: body.spec.kind for name, body in self.world.bodies.items()}

    # ------------------------------------------------------------------ Environment protocol
    def reset(self, task: object = None) -> str:
        """Restore the initial scene exactly (poses, gripper open, arm home, slip draws); returns describe()."""
        self.world.reset()
        self._rng.seed(self.seed)
        self._noise = np.random.default_rng(self.seed)
        self.skills.reset()
        self._seen = None
        self._percepts = None
        return self.describe()

    def step(self, call: Call) -> StepResult:
        """Run one skill by name; unknown actions, wrong arity (`checked_step`) and unknown names fail with a
        reason."""
        return checked_step(call, TABLETOP_SKILLS, TABLETOP_WORDING, self._run_skill)

    def _run_skill(self, call: Call) -> StepResult:
        names = [str(arg) for arg in call.args]
        skills: dict[str, Callable[..., StepResult]] = {
            "go_home": self.go_home, "goto": self.goto, "grasp": self.grasp, "release": self.release,
            "pickup": self.pickup, "grab_and_putin": self.grab_and_putin}
        return skills[call.action](*names)

    def holds(self, condition: Condition) -> bool:
        """Geometric check of close / holds / inside / on (and `gripper is 'opened'|'closed'`), negation applied."""
        return bool(self._holds(condition)) != condition.negated

    def _holds(self, condition: Condition) -> bool:
        args = [a.name if isinstance(a, Var) else str(a) for a in condition.args]
        if not args or any(isinstance(a, Var) for a in condition.args):
            return False
        kind = condition.kind
        if kind == "state":
            if normalize(args[0]) not in _GRIPPER_WORDS or len(args) < 2:
                return False
            is_open = self.world.arm.finger_width() > 2 * FINGER_OPEN - 0.005
            word = normalize(args[1])
            return is_open if word in ("opened", "open") else (not is_open) if word == "closed" else False
        first = self._target(args[0])
        if kind == "close":
            return first is not None and relations.close(self.world, first)
        if not isinstance(first, str):
            return False
        if kind == "holds":
            return self.world.held_name() == first
        if len(args) < 2:
            return False
        if kind == "inside" and normalize(args[1]) in _GRIPPER_WORDS:
            return self.world.held_name() == first
        if kind == "on" and normalize(args[1]) == relations.TABLE:
            return relations.on(self.world, first, relations.TABLE)
        place = self.locations.get(normalize(args[1]))
        if kind == "on" and place is not None and self.resolve(args[1]) is None:
            return relations.on_place(self.world, first, place)
        second = self.resolve(args[1])
        if second is None:
            return False
        if kind == "inside":
            return relations.inside(self.world, first, second)
        return relations.on(self.world, first, second)

    def describe(self, near: str | None = None) -> str:
        """"You see: ..." — the visible objects and where they are, or one object (or spot) and its contents."""
        facts = self.conditions()
        held = self.world.held_name()
        if near is not None:
            return self._describe_one(near, facts)
        phrases = [self._phrase(name, facts) for name in sorted(self.observe().names) if name != held]
        seen = ", ".join(phrases) if phrases else "nothing on the table"
        return f"You see: {seen}. The gripper holds {held or 'nothing'}."

    def _phrase(self, name: str, facts: frozenset[str]) -> str:
        if self.world.bodies[name].spec.is_container:
            return f"{name} (container)"
        where = [f.split(" ", 1)[1].lower() for f in sorted(facts) if f.startswith(name + " ")]
        return f"{name} ({', '.join(where)})" if where else name

    def _describe_one(self, near: str, facts: frozenset[str]) -> str:
        target = self._target(near)
        if target is None:
            return f"You see no {near} on the table."
        if not isinstance(target, str):
            x, y, z = (float(v) for v in target)
            return f"You see: the spot {normalize(near)} at ({x:.2f}, {y:.2f}, {z:.2f})."
        parts = [self._phrase(target, facts)]
        contents = sorted(f.split(" ")[0] for f in facts if f.endswith(f" INSIDE {target}") or f.endswith(
            f" ON {target}"))
        if contents:
            parts.append(f"{'inside' if self.world.bodies[target].spec.is_container else 'on'} {target}: "
                         + ", ".join(contents))
        if target not in self.observe().names and target != self.world.held_name():
            parts.append(f"{target} is hidden from the camera")
        return "You see: " + "; ".join(parts) + "."

    def snapshot(self) -> dict[str, Any]:
        """Objects with kind, position (bottom centre, m), heading and visibility; what is held, inside, on."""
        facts = self.conditions()
        visible = set(self.observe().names)
        objects = {}
        for name, body in self.world.bodies.items():
            origin = self.world.origin(name)
            objects[name] = {"kind": body.spec.kind, "position": [round(float(v), 4) for v in origin],
                             "yaw": round(yaw_of(self.world.orientation(name)), 4), "visible": name in visible}
        ee, q = self.world.arm.ee_pose()
        return {
            "time": round(self.world.time, 4),
            "objects": objects,
            "held": self.world.held_name(),
            "inside": {f.split()[0]: f.split()[2] for f in sorted(facts) if " INSIDE " in f},
            "on": {f.split()[0]: f.split()[2] for f in sorted(facts) if " ON " in f},
            "gripper": {"position": [round(float(v), 4) for v in ee], "orientation": [round(float(v), 5) for v in q],
                        "width": round(self.world.arm.finger_width(), 4)},
            "aliases": dict(sorted(self.aliases.items())),
            "locations": {k: list(v) for k, v in sorted(self.locations.items())},
        }

    def conditions(self) -> frozenset[str]:
        """Class-level facts of the current state: "duck INSIDE tray", "duck HELD", "apple ON table", and
        "duck ON spot" instead of "duck ON table" for an item resting at a taught spot (the nearest one)."""
        facts = set(relations.facts(self.world))
        for fact in sorted(facts):
            item, relation, support = fact.split(" ") if fact.count(" ") == 2 else ("", "", "")
            if relation != "ON" or support != relations.TABLE:
                continue
            centre = self.world.centre(item)
            near = [(float(np.hypot(*(centre[:2] - np.array(p[:2])))), name) for name, p in self.locations.items()
                    if relations.on_place(self.world, item, p)]
            if near:
                facts.discard(fact)
                facts.add(f"{item} ON {min(near)[1]}")
        return frozenset(facts)

    # ------------------------------------------------------------------ skills
    def _run(self, action: str, run: Callable[[], str]) -> StepResult:
        """Run a skill; its reason ('' = success) prefixed with the action, and the facts it changed."""
        before = self.conditions()
        reason = run()
        self._seen = None
        after = self.conditions()
        changes = tuple([f"+ {f}" for f in sorted(after - before)] + [f"- {f}" for f in sorted(before - after)])
        if reason:
            return StepResult(False, f"{action}: {reason}", changes)
        return StepResult(True, "", changes)

    def _unknown(self, action: str, name: str) -> StepResult:
        known = ", ".join(sorted([*self.world.bodies, *self.aliases, *self.locations]))
        return StepResult(False, f"{action}: no object {name!r} here (known: {known})")

    def go_home(self) -> StepResult:
        """Back to the home pose (keeps holding what it holds)."""
        return self._run("go_home", self.skills.go_home)

    def goto(self, name: str) -> StepResult:
        """Above an item (ready to grasp), over a container (ready to release into it) or at a taught spot."""
        target = self._target(name)
        if target is None:
            return self._unknown("goto", name)
        return self._run("goto", lambda: self.skills.goto(target, normalize(name)))

    def grasp(self) -> StepResult:
        """Descend onto the item under the gripper, close on it, check both fingers touch it, lift it."""
        return self._run("grasp", self.skills.grasp)

    def release(self) -> StepResult:
        """Open the gripper and let what it held come to rest."""
        return self._run("release", self.skills.release)

    def pickup(self, name: str) -> StepResult:
        """goto(name), then grasp()."""
        body = self.resolve(name)
        if body is None:
            return self._unknown("pickup", name)
        return self._run("pickup", lambda: self.skills.pickup(body))

    def grab_and_putin(self, item: str, container: str) -> StepResult:
        """Pick the item up, release it into the container (or at a taught spot), go home; fails unless it ends
        inside (on the table within 6 cm of the spot)."""
        first, second = self.resolve(item), self._target(container)
        if first is None:
            return self._unknown("grab_and_putin", item)
        if second is None:
            return self._unknown("grab_and_putin", container)
        return self._run("grab_and_putin", lambda: self.skills.grab_and_putin(first, second, normalize(container)))

    # ------------------------------------------------------------------ motion primitives (Vocal Sandbox)
    def ee_pose(self) -> tuple[tuple[float, float, float], tuple[float, float, float, float]]:
        """The gripper point's position (m) and the hand's orientation quaternion (x, y, z, w)."""
        ee, q = self.world.arm.ee_pose()
        return (float(ee[0]), float(ee[1]), float(ee[2])), tuple(float(v) for v in q)  # type: ignore[return-value]

    def move_ee(self, position: Sequence[float], orientation: Sequence[float] | None = None) -> StepResult:
        """Move the gripper point along a straight line to `position` (orientation default: unchanged)."""
        return self._run("move_ee", lambda: self.skills.move_ee(position, orientation))

    def follow(self, positions: np.ndarray, orientations: np.ndarray | None = None, dt: float = 1 / 60) -> StepResult:
        """Track a Cartesian trajectory (N, 3) [with orientations (N, 4)], one point per `dt` seconds."""
        return self._run("follow", lambda: self.skills.follow(positions, orientations, dt))

    def record_demo(self, waypoints: Sequence[Sequence[float]], rate_hz: float = 20.0,
                    speed: float = 0.15) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Move through waypoints like a teleoperated demonstration; (times, positions, quaternions) at rate_hz."""
        try:
            return self.skills.record_demo(waypoints, rate_hz, speed)
        finally:
            self._seen = None

    # ------------------------------------------------------------------ teaching
    def name_object(self, name: str, where: Sequence[float]) -> StepResult:
        """Teach a name for the object at a pixel (u, v) of the camera image, or nearest a point (x, y, z)."""
        key = normalize(name)
        problem = self._bad_new_name(key)
        if problem:
            return StepResult(False, f"name_object: {problem}")
        if len(where) == 2:
            u, v = int(where[0]), int(where[1])
            try:
                body = self.observe().object_at_pixel(u, v)
            except ValueError as exc:
                return StepResult(False, f"name_object: {exc}")
            if body is None:
                return StepResult(False, f"name_object: no object at pixel ({u}, {v})")
        elif len(where) == 3:
            body = self._body_near(np.asarray(where, dtype=float))
            if body is None:
                return StepResult(False, "name_object: no object within 5 cm of ({:.2f}, {:.2f}, {:.2f})".format(
                    *where))
        else:
            return StepResult(False, "name_object: give a pixel (u, v) or a point (x, y, z)")
        self.aliases[key] = body
        return StepResult(True, "", (f"+ {key} NAMES {body}",))

    def add_location(self, name: str, xyz: Sequence[float]) -> StepResult:
        """Teach a named spot (no object there); `goto(name)` then brings the gripper above it."""
        key = normalize(name)
        problem = self._bad_new_name(key)
        if problem:
            return StepResult(False, f"add_location: {problem}")
        if len(xyz) != 3 or not all(np.isfinite(float(v)) for v in xyz):
            return StepResult(False, "add_location: give a point (x, y, z)")
        self.locations[key] = (float(xyz[0]), float(xyz[1]), float(xyz[2]))
        return StepResult(True, "", (f"+ {key} LOCATION",))

    def name_place(self, name: str, where: Sequence[float]) -> StepResult:
        """Teach a named place where the table is bare: at a pixel (u, v) of the camera image (lifted with its
        depth) or at a point (x, y, z) no object is within 5 cm of; `goto(name)` then brings the gripper (or
        what it holds) above it."""
        if len(where) == 2:
            u, v = int(where[0]), int(where[1])
            try:
                observation = self.observe()
                point = np.array(observation.pixel_to_point(u, v))
            except ValueError as exc:
                return StepResult(False, f"name_place: {exc}")
            if int(observation.segmentation[v, u]) != self.world.table:
                what = observation.object_at_pixel(u, v)
                return StepResult(False, f"name_place: pixel ({u}, {v}) shows {repr(what) if what else 'no table'}")
        elif len(where) == 3:
            point = np.asarray(where, dtype=float)
            if not np.isfinite(point).all():
                return StepResult(False, "name_place: give a point (x, y, z)")
            near = self._body_near(point)
            if near is not None:
                return StepResult(False, f"name_place: {near!r} is there")
        else:
            return StepResult(False, "name_place: give a pixel (u, v) or a point (x, y, z)")
        if abs(float(point[2]) - TABLE_Z) > PLACE_HEIGHT:
            return StepResult(False, "name_place: ({:.2f}, {:.2f}, {:.2f}) is not on the table".format(*point))
        result = self.add_location(name, (float(point[0]), float(point[1]), TABLE_Z))
        return result if result.ok else StepResult(False, result.reason.replace("add_location", "name_place", 1))

    def forget(self, name: str) -> bool:
        """Drop a taught name or spot; whether there was one."""
        key = normalize(name)
        return self.aliases.pop(key, None) is not None or self.locations.pop(key, None) is not None

    def _bad_new_name(self, key: str) -> str:
        if not _NAME.fullmatch(key):
            return f"{key!r} is not a usable name (lower-case letters, digits, underscores)"
        if key in self.world.bodies or key in CATALOGUE or key in SKILLS or key in (relations.TABLE, "hands"):
            return f"{key!r} already names something else"
        if key in self.aliases or key in self.locations:
            return f"{key!r} is already taught (forget it first)"
        return ""

    def _body_near(self, point: np.ndarray) -> str | None:
        """The object the camera sees nearest a point (within 5 cm of its perceived box), or None."""
        best: tuple[float, str] | None = None
        for name, seen in self.percepts().items():
            spec = self.world.bodies[name].spec
            c, s = np.cos(seen.yaw), np.sin(seen.yaw)
            d = point - np.array(seen.origin)
            local = np.array([c * d[0] + s * d[1], -s * d[0] + c * d[1], d[2]])
            half = np.array([spec.footprint[0] / 2, spec.footprint[1] / 2])
            low = np.array([*-half, 0.0])
            high = np.array([*half, seen.top - seen.origin[2]])
            distance = float(np.linalg.norm(local - np.clip(local, low, high)))
            if distance <= 0.05 and (best is None or distance < best[0]):
                best = (distance, name)
        return best[1] if best else None

    # ------------------------------------------------------------------ perception
    def observe(self) -> Observation:
        """What the fixed camera sees now (rendered once per state; cached until the next motion or reset)."""
        if self._seen is None or self._seen[0] != self.world.steps:
            labels = {body.uid: name for name, body in self.world.bodies.items()}
            self._seen = (self.world.steps, perceive(self.world.client, self.camera, labels,
                                                     noise=self.perception_noise, rng=self._noise))
        return self._seen[1]

    def percepts(self) -> dict[str, Percept]:
        """Where the camera sees each object now (not what is held). An object the arm hides in the image, or
        borders, keeps the percept from the last view that showed it whole; an object nothing shows is absent."""
        observation = self.observe()
        if self._percepts is not None and self._percepts[0] is observation:
            return self._percepts[1]
        specs = {name: body.spec for name, body in self.world.bodies.items()}
        arm = self.world.arm.uid
        fresh = estimate_all(observation, specs, arm)
        before = self._percepts[1] if self._percepts is not None else {}
        held = self.world.held_name()
        now: dict[str, Percept] = {}
        for name in self.world.bodies:
            new, old = fresh.get(name), before.get(name)
            if name == held:
                continue
            if new is not None and (not new.by_arm or old is None):
                now[name] = new
            elif old is not None and (new is not None or covered_by(observation, old, arm)):
                now[name] = old
        self._percepts = (observation, now)
        return now

    def _put_down(self, name: str, origin: np.ndarray, yaw: float) -> None:
        """Remember where the arm let go of an item (on the floor of the container seen under it, else on the
        table) until the camera sees it again: the hand above it hides it from the camera for a while."""
        known = dict(self._percepts[1]) if self._percepts is not None else {}
        floor = TABLE_Z
        for container, p in known.items():
            shape = self.world.bodies[container].spec.container
            if shape is None:
                continue
            c, s = np.cos(p.yaw), np.sin(p.yaw)
            dx, dy = origin[0] - p.origin[0], origin[1] - p.origin[1]
            x, y = c * dx + s * dy, -s * dx + c * dy
            over = (abs(x) <= shape.half_x and abs(y) <= shape.half_y) if shape.footprint == "rect" else (
                np.hypot(x, y) <= shape.half_x)
            if over:
                floor = p.origin[2] + shape.floor
        body = self.world.bodies[name]
        height = body.high[2] - body.low[2]
        known[name] = Percept(name, (float(origin[0]), float(origin[1]), float(floor)), yaw, float(floor + height),
                              0, by_arm=True)
        self._percepts = (None, known)

    def look(self, grip: Grip | None = None) -> SeenWorld:
        """The table as the camera sees it now: what the skills aim with (one render per state)."""
        return SeenWorld(self.world, self.percepts(), grip)

    def image(self) -> np.ndarray:
        """The camera's RGB image, (H, W, 3) uint8."""
        return self.observe().rgb

    def save_image(self, path: str | Path) -> Path:
        """Write the camera's RGB image as PNG."""
        return save_png(path, self.image())

    def pixel_to_point(self, u: int, v: int) -> tuple[float, float, float]:
        """The world point at pixel (u, v) (column, row), lifted with the depth image and the camera's intrinsics."""
        return self.observe().pixel_to_point(u, v)

    def object_at_pixel(self, u: int, v: int) -> str | None:
        """The object at pixel (u, v) in the segmentation image, or None."""
        return self.observe().object_at_pixel(u, v)

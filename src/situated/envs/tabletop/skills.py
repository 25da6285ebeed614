"""The robot's skills, executed with real motion, each returning '' on success or the reason it failed, in words.

Vocal Sandbox's seed skills (`go_home`, `goto`, `grasp`, `release`, `pickup`) and ProgPrompt's tabletop primitive
(`grab_and_putin`), plus the motion primitives taught skills are made of (`move_ee`, `follow`, `record_demo`).

- `goto(x)` brings the open gripper 5 cm above an item, turned to grasp it; over a container it brings what the
  gripper holds over a free spot in it (`packing`: the first item halfway off the centre along the container's
  x axis, later ones clear of what is inside), turned to the container, low enough to drop gently (its bottom
  1.5 cm above the floor or what lies there) but with the hand above the rim; at a taught spot it hovers above
  the spot.
- `grasp()` descends onto the item under the gripper (`pickup(x)`: onto x itself, closing above the rim of a
  container x lies in), with the heading, the point along a long item and the fingers' opening that keep clear of
  the neighbours and the container's walls (`grasp_planning`), closes the fingers and checks that both touch it
  (`pickup` looks again and tries once more, turned, after a miss); the item is
  then fixed to the hand by a constraint (a common simulator practice: the grasp does not rely on friction). With
  probability `slip_probability` (a seeded draw per grasp) it slips out instead.
- `release()` opens the gripper and waits until the dropped item comes to rest.
- Moves go up to a travel height above everything on the table, across, then down, along straight lines.

The skills aim with what the camera sees (`seen.py`): one view per skill call (`look`, rendered at its start),
never the simulator's poses. An object the view does not show cannot be gone to or grasped ("I cannot see the
duck"). Whether a pick-and-place ended inside its container is read from the simulation (a symbolic check).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

import numpy as np

from ...errors import DataError
from .arm import FINGER_OPEN, HOME, TICK, Arm, top_down
from .bodies import Quat, rotation, yaw_of
from .grasp_planning import HAND_ABOVE, Grasp, container_of, hand_overlaps, rank_grasps
from .kinematics import forward
from .packing import FINGER_MARGIN, REGRASP_MARGIN, Content, discs, free_spot
from .relations import inside, on_place
from .seen import Grip, SeenWorld
from .world import TABLE_Z, TIME_STEP, World

HOVER = 0.05             # gripper point above an item's top before grasping
RIM_CLEARANCE = 0.025    # fingertips above a container's rim after goto(container) with nothing held
HAND_CLEARANCE = 0.015   # the hand's lowest point above a container's rim when releasing into it
TRAVEL_CLEARANCE = 0.04  # held item's (or fingertips') bottom above everything while travelling
MIN_TRAVEL_Z = 0.22
MAX_TRAVEL_Z = 0.50
FINGERTIP = 0.012        # fingertips reach this far below the gripper point
REACH_TOLERANCE = 0.01   # a pose whose IK solution misses by more than this is out of reach
ARRIVAL_TOLERANCE = 0.01


def _fold(yaw: float) -> float:
    """A gripper heading in (−π/2, π/2]: the two fingers are interchangeable."""
    yaw = math.remainder(yaw, math.pi)
    return yaw if yaw > -math.pi / 2 else yaw + math.pi


def _words(name: str) -> str:
    return name.replace("_", " ")


class Skills:
    """Skills over one World, aiming with the views `look` gives (see the module docstring); `rng` draws grasp
    slips (seeded by the environment)."""

    def __init__(self, world: World, rng: random.Random, slip_probability: float = 0.0,
                 look: Callable[[Grip | None], SeenWorld] | None = None,
                 put_down: Callable[[str, np.ndarray, float], None] | None = None) -> None:
        self.world = world
        self.rng = rng
        self.slip_probability = slip_probability
        self.look = look
        self.put_down = put_down
        """Told what the gripper lets go of, where (its frame's origin) and turned how (yaw), as the arm knows it."""
        self.grip: Grip | None = None
        """Where the held item sits in the hand (from the percept it was grasped on)."""
        self._view: SeenWorld | None = None
        self._grasps: dict[str, tuple[Grasp, np.ndarray]] = {}
        """The grasps chosen in the current view."""
        self._missed: Grasp | None = None
        """The grasp that just missed (while `pickup` tries once more)."""

    def reset(self) -> None:
        """Forget the grip (the world was put back)."""
        self.grip = None
        self._view = None
        self._grasps = {}

    @contextmanager
    def _looking(self) -> Iterator[SeenWorld]:
        """One view for a whole skill call (a skill made of skills reuses its caller's)."""
        if self._view is not None:
            yield self._view
            return
        if self.look is None:
            raise RuntimeError("Skills need a camera (`look`) to aim")
        self._view = self.look(self.grip)
        self._grasps = {}
        try:
            yield self._view
        finally:
            self._view = None
            self._grasps = {}

    @property
    def seen(self) -> SeenWorld:
        """The view of the skill call in progress."""
        if self._view is None:
            raise RuntimeError("no view: geometry is asked for outside a skill call")
        self._view.grip = self.grip
        return self._view

    # ------------------------------------------------------------------ geometry helpers
    @property
    def arm(self) -> Arm:
        return self.world.arm

    def _hang(self) -> float:
        """How far below the gripper point the lowest part of what it carries reaches."""
        held = self.world.held_name()
        ee, _ = self.arm.ee_pose()
        if held is None or self.grip is None:
            return FINGERTIP
        return max(FINGERTIP, float(ee[2]) - self.seen.bottom(held))

    def _travel_z(self) -> float:
        held = self.world.held_name()
        tops = [self.seen.top(n) for n in self.seen.bodies if n != held]
        z = max([TABLE_Z, *tops]) + self._hang() + TRAVEL_CLEARANCE
        return min(MAX_TRAVEL_Z, max(MIN_TRAVEL_Z, z))

    def _point_at(self, name: str, slide: float = 0.0) -> np.ndarray:
        """Where the fingers close on an item slid `slide` along its local x from its grasp offset, `grasp_z()`
        above its lowest point (as seen)."""
        seen = self.seen
        spec = seen.bodies[name].spec
        point = seen.to_world(name, (spec.grasp_offset[0] + slide, spec.grasp_offset[1], 0.0))
        bottom, top = seen.bottom(name), seen.top(name)
        point[2] = min(max(bottom + spec.grasp_z(), self._above_rim(name)), top - 0.008)
        return point

    def grasp_choice(self, name: str) -> tuple[Grasp, np.ndarray]:
        """The grasp for `name` and its gripper point (`grasp_planning.rank_grasps`): the best one whose hover
        pose the arm can reach (near the edge of the workspace a quarter turn can decide). One per view."""
        if name in self._grasps:
            return self._grasps[name]
        seen = self.seen
        base = yaw_of(seen.orientation(name)) + seen.bodies[name].spec.grasp_yaw
        ranked = [(replace(g, yaw=_fold(g.yaw)), p)
                  for g, p in rank_grasps(seen, name, lambda slide: self._point_at(name, slide), base)]
        if self._missed is not None:    # a second try: another heading or another point along the item
            other = [(g, p) for g, p in ranked if abs(math.remainder(g.yaw - self._missed.yaw, math.pi)) > 0.35
                     or abs(g.slide - self._missed.slide) > 0.01]
            ranked = other or ranked
        choice = ranked[0]
        if len(ranked) > 1:
            for grasp, point in ranked:
                hover = np.array([point[0], point[1], seen.top(name) + HOVER])
                if not self._out_of_reach(hover, top_down(grasp.yaw)):
                    choice = (grasp, point)
                    break
        self._grasps[name] = choice
        return choice

    def grasp_point(self, name: str) -> np.ndarray:
        """Where the fingers close on an item (its chosen grasp)."""
        return self.grasp_choice(name)[1]

    def _above_rim(self, name: str) -> float:
        """The lowest gripper point that keeps the hand above the rim of the container `name` lies in (the hand
        is wider than every container: below the rim it hits a wall); -inf when it lies in none. A grasp then
        closes higher on the item, down to 8 mm below its top."""
        seen = self.seen
        other = container_of(seen, name)
        if other is None:
            return -math.inf
        shape = seen.bodies[other].spec.container
        assert shape is not None
        return float(seen.origin(other)[2]) + shape.rim + HAND_CLEARANCE - HAND_ABOVE

    def grasp_yaw(self, name: str) -> float:
        """The gripper's heading for grasping `name` (its chosen grasp)."""
        return self.grasp_choice(name)[0].yaw

    def _current_yaw(self) -> float:
        _, q = self.arm.ee_pose()
        return _fold(yaw_of(q))

    # ------------------------------------------------------------------ motion
    def _out_of_reach(self, position: np.ndarray, orientation: Quat) -> bool:
        _, error, angle = self.arm.solve(position, orientation)
        return error > REACH_TOLERANCE or angle > 0.1

    def _transit(self, goal: np.ndarray, orientation: Quat) -> str:
        """Up to travel height, across, down to `goal`; '' or why it stopped."""
        ee, q = self.arm.ee_pose()
        if float(np.linalg.norm(goal[:2] - ee[:2])) > 0.02:
            travel = max(self._travel_z(), float(goal[2]))
            up = np.array([ee[0], ee[1], travel])
            if ee[2] < travel - 0.005 and not self._out_of_reach(up, q):   # too near the base: go across at once
                self.arm.move_line(up, q, tolerance=0.015, settle=0.15)
            above = np.array([goal[0], goal[1], travel])
            if self._out_of_reach(above, orientation):
                return f"({goal[0]:.2f}, {goal[1]:.2f}) is out of reach"
            self.arm.move_line(above, orientation, tolerance=0.015, settle=0.15)
        error = self.arm.move_line(goal, orientation, speed=0.3)
        if error > ARRIVAL_TOLERANCE:
            return self._stopped(error)
        return ""

    def _stopped(self, error: float, aim: str = "the goal") -> str:
        """Why a move ended short of `aim`: what the arm (or what it holds) is pressing against."""
        world, held = self.world, self.world.held_name()
        blockers = [name for name, body in world.bodies.items() if name != held and (
            world.client.getContactPoints(self.arm.uid, body.uid)
            or (held is not None and world.contacts(held, name)))]
        if not blockers and world.client.getContactPoints(self.arm.uid, world.table):
            blockers = ["the table"]
        by = f"blocked by {', '.join(repr(b) if b != 'the table' else b for b in blockers)}" if blockers \
            else "blocked"
        return f"stopped {error * 100:.1f} cm short of {aim} ({by})"

    def go_home(self) -> str:
        with self._looking():
            home = forward(HOME)
            reason = self._transit(home[:3, 3], top_down(0.0))
            if reason:
                return reason
            error = self.arm.move_joints(HOME)
            return "" if error < 0.05 else "could not settle at home"

    def goto(self, target: str | np.ndarray, label: str = "") -> str:
        """Above an item (to grasp it), above a container (to release into it) or at a taught spot."""
        with self._looking():
            return self._goto(target, label)

    def _goto(self, target: str | np.ndarray, label: str) -> str:
        world = self.seen
        held = world.held_name()
        label = label or (target if isinstance(target, str) else "that spot")
        if isinstance(target, str):
            if target == held:
                return ""
            if target not in world.bodies:
                return f"I cannot see the {_words(label)}"
            spec = world.bodies[target].spec
            if spec.is_container:
                goal, yaw = self._over_container(target)
            elif held is None:
                point = self.grasp_point(target)
                goal = np.array([point[0], point[1], world.top(target) + HOVER])
                yaw = self.grasp_yaw(target)
            else:
                point = world.centre(target)
                goal = np.array([point[0], point[1], world.top(target) + self._hang() + 0.02])
                yaw = self._current_yaw()
        else:
            point = np.asarray(target, dtype=float)
            lift = self._hang() + 0.02 if held is not None else HOVER
            goal = np.array([point[0], point[1], max(float(point[2]), TABLE_Z) + lift])
            yaw = self._current_yaw()
        orientation = top_down(yaw)
        if self._out_of_reach(goal, orientation):
            return f"'{label}' is out of reach"
        return self._transit(goal, orientation)

    def _over_container(self, name: str) -> tuple[np.ndarray, float]:
        """Where to put the gripper to release into a container: the held item's centre over a free spot
        (`_free_spot`), the hand turned to the container, its bottom 1.5 cm above the floor but the hand 1.5 cm above
        the rim; with nothing held, just above the rim."""
        world = self.seen
        shape = world.bodies[name].spec.container
        assert shape is not None
        base = float(world.origin(name)[2])
        centre = world.to_world(name, (0.0, 0.0, 0.0))
        yaw = _fold(yaw_of(world.orientation(name)))
        held = world.held_name()
        if held is None:
            return np.array([centre[0], centre[1], base + shape.rim + FINGERTIP + RIM_CLEARANCE]), yaw
        ee, q = self.arm.ee_pose()
        offset = rotation(top_down(yaw)) @ (rotation(q).T @ (world.centre(held) - ee))
        spot, below = self._free_spot(name, held, yaw)
        floor = max(base + shape.floor, below)
        z = max(floor + self._hang() + 0.015, base + shape.rim + HAND_CLEARANCE - HAND_ABOVE)
        goal = np.array([spot[0] - offset[0], spot[1] - offset[1], z])
        # the hand (21 cm along the fingers) stays above what stands tall in the container beside the spot
        tops = [world.top(n) for n in world.bodies if n not in (held, name) and world.inside(n, name)
                and hand_overlaps(world, n, goal, yaw)]
        goal[2] = max([z, *(top + HAND_CLEARANCE - HAND_ABOVE for top in tops)])
        return goal, yaw

    def _free_spot(self, container: str, held: str, yaw: float) -> tuple[np.ndarray, float]:
        """Where in `container` to drop `held` (world x, y), the hand turned to `yaw`, and the highest top of the
        contents under it there (`packing.free_spot`: footprints as discs, as the camera sees them)."""
        world = self.seen
        shape = world.bodies[container].spec.container
        assert shape is not None
        turn = yaw_of(world.orientation(container))
        if self.grip is not None and self.grip.name == held:
            own = rotation(top_down(yaw)) @ self.grip.rotation
            held_yaw = math.atan2(own[1, 0], own[0, 0])
        else:
            held_yaw = yaw_of(world.orientation(held))
        contents = [Content(world.to_local(container, world.centre(n))[:2] + d.centres, d.radius, world.top(n))
                    for n in world.bodies if n != held and world.inside(n, container)
                    for d in (discs(world.bodies[n].spec.footprint, yaw_of(world.orientation(n)) - turn),)]
        base = world.to_local(container, np.array([0.0, 0.0, float(world.origin(container)[2])]))[:2]
        spec = world.bodies[held].spec
        margin = REGRASP_MARGIN if len(spec.grasp_turns()) == 1 else FINGER_MARGIN
        spot, below = free_spot(shape, discs(spec.footprint, held_yaw - turn), contents, base, margin)
        point = world.to_world(container, (float(spot[0]), float(spot[1]), 0.0))
        return point[:2], below

    def _under_gripper(self) -> str | None:
        """The item whose grasp point lies within 3 cm of the gripper's vertical line, below it (highest first)."""
        ee, _ = self.arm.ee_pose()
        best: tuple[float, str] | None = None
        for name, body in self.seen.bodies.items():
            if body.spec.is_container or name == self.world.held_name():
                continue
            point = self.grasp_point(name)
            top = self.seen.top(name)
            if float(np.linalg.norm(point[:2] - ee[:2])) <= 0.03 and top <= ee[2] + 0.01 and (
                    best is None or top > best[0]):
                best = (top, name)
        return best[1] if best else None

    def grasp(self) -> str:
        """Descend onto the item under the gripper, close, check both fingers touch it, attach it, lift."""
        with self._looking():
            return self._grasp()

    def _grasp(self, name: str | None = None) -> str:
        """Grasp `name` (pickup's item, which goto has just hovered over) or, without one, the item under the
        gripper (a bare `grasp()`: the highest one near its line, which in a crowded container may be another)."""
        held = self.world.held_name()
        if held is not None:
            return f"already holding '{held}'"
        start, _ = self.arm.ee_pose()
        target = name if name is not None else self._under_gripper()
        short = ""
        if target is not None:
            grasp, point = self.grasp_choice(target)
            if grasp.opening < FINGER_OPEN:     # open only as wide as the item needs: a wall or neighbour is near
                self.arm.move_fingers(grasp.opening, timeout=0.3)
            error = self.arm.move_line(point, top_down(grasp.yaw), speed=0.25)
            if error > 2 * ARRIVAL_TOLERANCE:   # something lies on it or around it: say what, not "missed"
                short = self._stopped(error, f"'{target}'")
        self.arm.move_fingers(0.0)
        both = target is not None and all(self.arm.touching(self.world.bodies[target].uid))
        slipped = both and self.rng.random() < self.slip_probability
        if both and not slipped:
            assert target is not None
            self.arm.attach(self.world.bodies[target].uid)
            self.arm.set_fingers(self.arm.finger_width() / 2)
            origin, turn = self.seen.pose(target)     # as seen: the grip is where the camera put the item
            ee, q = self.arm.ee_pose()
            hand = rotation(q)
            self.grip = Grip(target, hand.T @ (origin - ee), hand.T @ turn)
        else:
            self.arm.move_fingers(0.04)
        if target is None:
            return "the gripper closed on nothing"
        ee, q = self.arm.ee_pose()
        self.arm.move_line(np.array([ee[0], ee[1], max(float(start[2]), float(ee[2]) + 0.05)]), q, speed=0.25)
        if slipped:
            return f"the {target} slipped out of the gripper"
        if not both:
            touched = [name for name, body in self.world.bodies.items()
                       if any(self.arm.touching(body.uid))]
            return short or f"the gripper missed '{target}'" + (f" (it touched '{touched[0]}')" if touched else "")
        if self.world.held_name() != target:
            return f"lost '{target}' while lifting it"
        return ""

    def release(self) -> str:
        """Open the gripper; whatever it held drops and comes to rest."""
        held = self.world.held_name()
        if held is not None and self.grip is not None and self.put_down is not None:
            ee, q = self.arm.ee_pose()
            hand = rotation(q)
            turn = hand @ self.grip.rotation
            self.put_down(held, ee + hand @ self.grip.offset, math.atan2(turn[1, 0], turn[0, 0]))
        self.grip = None
        self.arm.detach()
        self.arm.move_fingers(0.04, timeout=0.4)
        self.world.settle(1.5)
        return ""

    def pickup(self, name: str) -> str:
        with self._looking():
            return self._pickup(name)

    def _pickup(self, name: str) -> str:
        held = self.world.held_name()
        if held == name:
            return ""
        if held is not None:
            return f"already holding '{held}'"
        if self.world.bodies[name].spec.is_container:
            return f"'{name}' is a container and cannot be picked up"
        reason = self._goto(name, "") or self._grasp(name)
        if not reason.startswith("the gripper missed") or self.look is None or name not in self._grasps:
            return reason
        # One more try, as a person would: look again (the item may have moved) and grasp it turned another way
        # or at another point along it. Bounded: one retry, and only after a miss (not a block or a slip).
        self._missed = self._grasps[name][0]
        self._view, self._grasps = self.look(self.grip), {}
        try:
            return self._goto(name, "") or self._grasp(name)
        finally:
            self._missed = None

    def grab_and_putin(self, item: str, container: str | np.ndarray, label: str = "") -> str:
        """Pick `item` up, carry it over `container` (or a taught spot, a point), release it, go home; '' only if
        it ends inside (or on the table within 6 cm of the spot)."""
        with self._looking():
            if isinstance(container, str):
                return self._grab_and_putin(item, container)
            return self._put_at(item, np.asarray(container, dtype=float), label or "that spot")

    def _put_at(self, item: str, spot: np.ndarray, label: str) -> str:
        if self.world.bodies[item].spec.is_container:
            return f"'{item}' is a container and cannot be picked up"
        reason = self.pickup(item)
        if not reason:
            reason = self.goto(spot, label)
            self.release()
        self.go_home()
        if reason:
            return reason
        if not on_place(self.world, item, spot):
            return f"'{item}' landed away from '{label}'"
        return ""

    def _grab_and_putin(self, item: str, container: str) -> str:
        """Pick `item` up, carry it over `container`, release it, go home; '' only if it ends inside. When the
        carry fails the item is let go where the arm stopped, and the arm goes home whatever happened, so the
        next pick-and-place starts from the same pose with an empty gripper."""
        if not self.world.bodies[container].spec.is_container:
            return f"'{container}' is not a container"
        if self.world.bodies[item].spec.is_container:
            return f"'{item}' is a container and cannot be picked up"
        reason = self.pickup(item)
        if not reason:
            reason = self.goto(container)
            self.release()  # blocked or not, the gripper opens: a failed pick-and-place holds nothing afterwards
        self.go_home()
        if reason:
            return reason
        if not inside(self.world, item, container):
            return f"'{item}' landed outside '{container}'"
        return ""

    # ------------------------------------------------------------------ motion primitives
    def move_ee(self, position: Sequence[float], orientation: Sequence[float] | None = None) -> str:
        """A straight line to a pose (orientation default: keep the current one)."""
        goal = np.asarray(position, dtype=float)
        _, current = self.arm.ee_pose()
        q: Quat = tuple(float(v) for v in orientation) if orientation is not None else current  # type: ignore[assignment]
        if self._out_of_reach(goal, q):
            return f"({goal[0]:.2f}, {goal[1]:.2f}, {goal[2]:.2f}) is out of reach"
        error = self.arm.move_line(goal, q)
        return "" if error <= ARRIVAL_TOLERANCE else self._stopped(error)

    def follow(self, positions: np.ndarray, orientations: np.ndarray | None = None, dt: float = 1 / 60) -> str:
        """Track a Cartesian trajectory, one point per `dt` seconds; '' if it ends within 1 cm of the last point."""
        points = np.asarray(positions, dtype=float).reshape(-1, 3)
        if len(points) == 0:
            return "empty trajectory"
        _, current = self.arm.ee_pose()
        quats = (np.asarray(orientations, dtype=float).reshape(-1, 4) if orientations is not None
                 else np.tile(np.array(current), (len(points), 1)))
        if len(quats) != len(points):
            return f"{len(points)} positions but {len(quats)} orientations"
        for k in range(0, len(points), max(1, len(points) // 20)):
            if self._out_of_reach(points[k], tuple(quats[k])):
                return f"point {k} ({points[k][0]:.2f}, {points[k][1]:.2f}, {points[k][2]:.2f}) is out of reach"
        if self._out_of_reach(points[-1], tuple(quats[-1])):
            return "the trajectory's last point is out of reach"
        per_point = max(1, round(dt / TIME_STEP))
        for point, quat in zip(points, quats, strict=True):
            self.arm.command(self.arm.ik(point, tuple(quat)))
            self.world.step(per_point)
        error = self.arm.hold(points[-1], tuple(quats[-1]))
        return "" if error <= ARRIVAL_TOLERANCE else f"ended {error * 100:.1f} cm from the goal"

    def record_demo(self, waypoints: Sequence[Sequence[float]], rate_hz: float = 20.0,
                    speed: float = 0.15) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Move through waypoints (x, y, z) or (x, y, z, qx, qy, qz, qw) like a teleoperated demonstration,
        recording the end effector's pose every 1/rate_hz seconds: (times (T,), positions (T, 3), quats (T, 4))."""
        times: list[float] = []
        positions: list[np.ndarray] = []
        quats: list[tuple[float, ...]] = []
        start = self.world.time
        every = max(1, round(1.0 / rate_hz / (TIME_STEP * TICK)))
        ticks = 0

        def sample() -> None:
            nonlocal ticks
            if ticks % every == 0:
                ee, q = self.arm.ee_pose()
                times.append(self.world.time - start)
                positions.append(ee)
                quats.append(q)
            ticks += 1

        for k, waypoint in enumerate(waypoints):
            values = [float(v) for v in waypoint]
            if len(values) not in (3, 7) or not all(math.isfinite(v) for v in values):
                raise DataError(f"record_demo: waypoints[{k}]: expected (x, y, z) or (x, y, z, qx, qy, qz, qw)")
            q = tuple(values[3:]) if len(values) == 7 else self.arm.ee_pose()[1]
            if self._out_of_reach(np.array(values[:3]), q):
                raise DataError(f"record_demo: waypoints[{k}]: ({values[0]:.2f}, {values[1]:.2f}, "
                                f"{values[2]:.2f}) is out of reach")
        sample()
        self.arm.on_tick = sample
        try:
            for waypoint in waypoints:
                values = [float(v) for v in waypoint]
                _, q = self.arm.ee_pose()
                target_q = tuple(values[3:7]) if len(values) >= 7 else q
                self.arm.move_line(np.array(values[:3]), target_q, speed=speed, settle=0.2)
        finally:
            self.arm.on_tick = None
        return np.array(times), np.array(positions).reshape(-1, 3), np.array(quats).reshape(-1, 4)

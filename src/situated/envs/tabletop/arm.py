"""The Franka Panda: inverse kinematics, Cartesian motion by joint position control, the gripper, attaching.

Motion is real: every move interpolates the end effector's pose along a straight line, solves IK with pybullet's
`calculateInverseKinematics` (end-effector link 11, null space pulled toward home) for each control tick (60 Hz),
sends joint position targets and steps the simulation (240 Hz); at the goal, the exact solution refined on the
arm's own kinematics (kinematics.py) is held until the arm is still. Reachability is checked before a move by
solving IK and verifying it with forward kinematics, so a refused move never disturbs the scene.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .bodies import Quat, rotation
from .bullet import pybullet
from .kinematics import refine

EE_LINK = 11                  # panda_grasptarget: between the fingertips
ARM_JOINTS = tuple(range(7))
FINGER_JOINTS = (9, 10)
HOME = (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785)
FINGER_OPEN = 0.04            # each finger's travel (m): 8 cm between the fingers
ARM_FORCES = (87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0)
FINGER_FORCE = 40.0
TICK = 4                      # simulation steps per control tick (240 Hz / 4 = 60 Hz)


def top_down(yaw: float) -> Quat:
    """Gripper pointing down, turned by `yaw` about the world z axis (fingers along (−sin yaw, cos yaw))."""
    return (math.cos(yaw / 2), math.sin(yaw / 2), 0.0, 0.0)


def quat_angle(a: Quat | tuple[float, ...], b: Quat | tuple[float, ...]) -> float:
    """Angle (radians) of the rotation between two orientations."""
    dot = abs(float(np.dot(a, b)))
    return 2.0 * math.acos(min(1.0, dot))


def slerp(a: Quat | tuple[float, ...], b: Quat | tuple[float, ...], t: float) -> Quat:
    """Spherical interpolation between two orientations (t = 0 → a, t = 1 → b)."""
    qa, qb = np.array(a, dtype=float), np.array(b, dtype=float)
    dot = float(np.dot(qa, qb))
    if dot < 0:
        qb, dot = -qb, -dot
    if dot > 0.9995:
        q = qa + t * (qb - qa)
    else:
        theta = math.acos(dot)
        q = (math.sin((1 - t) * theta) * qa + math.sin(t * theta) * qb) / math.sin(theta)
    q /= np.linalg.norm(q)
    return (float(q[0]), float(q[1]), float(q[2]), float(q[3]))


class Arm:
    """The Panda in one simulation; `step(n)` advances that simulation (and whatever else it does per step)."""

    def __init__(self, client: Any, step: Callable[[int], None]) -> None:
        self.client = client
        self._step = step
        self.uid = client.loadURDF("franka_panda/panda.urdf", [0, 0, 0], [0, 0, 0, 1], useFixedBase=True)
        info = [client.getJointInfo(self.uid, j) for j in ARM_JOINTS]
        self.lower = [i[8] for i in info] + [0.0, 0.0]
        self.upper = [i[9] for i in info] + [FINGER_OPEN, FINGER_OPEN]
        self.ranges = [u - lo for lo, u in zip(self.lower, self.upper, strict=True)]
        self.held: int | None = None          # body id attached to the hand
        self.on_tick: Callable[[], None] | None = None   # called after every control tick (demo recording)
        self._constraint: int | None = None
        self.reset()

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        """Arm at home, gripper open, nothing attached, motors holding that pose."""
        self.detach()
        for j, q in zip(ARM_JOINTS, HOME, strict=True):
            self.client.resetJointState(self.uid, j, q, 0.0)
        for j in FINGER_JOINTS:
            self.client.resetJointState(self.uid, j, FINGER_OPEN, 0.0)
        self.command(HOME)
        self.set_fingers(FINGER_OPEN)

    def rearm(self) -> None:
        """Nothing attached, motors commanding home and an open gripper (after the simulation state is restored)."""
        self.detach()
        self.command(HOME)
        self.set_fingers(FINGER_OPEN)

    def joints(self) -> tuple[float, ...]:
        return tuple(s[0] for s in self.client.getJointStates(self.uid, ARM_JOINTS))

    def finger_width(self) -> float:
        """Distance between the fingers (m)."""
        return float(sum(s[0] for s in self.client.getJointStates(self.uid, FINGER_JOINTS)))

    def ee_pose(self) -> tuple[np.ndarray, Quat]:
        """Position of the point between the fingertips, and the hand's orientation (x, y, z, w)."""
        state = self.client.getLinkState(self.uid, EE_LINK, computeForwardKinematics=True)
        return np.array(state[4]), tuple(state[5])

    # ------------------------------------------------------------------ kinematics
    def solve(self, position: np.ndarray | tuple[float, ...],
              orientation: Quat | tuple[float, ...]) -> tuple[tuple[float, ...], float, float]:
        """IK for a pose: pybullet's solution (null space toward home, seeded by the current joints), refined by
        damped least squares on the arm's own kinematics; returns the angles (within limits) and the position (m)
        and angle (rad) errors left there. Reads the simulation, never changes it."""
        first = self.ik(np.asarray(position, dtype=float), orientation)
        best: tuple[tuple[float, ...], float, float] = ((), float("inf"), float("inf"))
        for seed in (first, self.joints(), HOME):
            q, error, angle = refine(seed, np.asarray(position, dtype=float), rotation(orientation),
                                     self.lower[:7], self.upper[:7], HOME)
            if error + 0.05 * angle < best[1] + 0.05 * best[2]:
                best = (tuple(float(v) for v in q), error, angle)
            if error < 1e-3 and angle < 0.01:
                break
        return best

    # ------------------------------------------------------------------ control
    def command(self, q: tuple[float, ...]) -> None:
        """Joint position targets for the seven arm joints (held until the next command)."""
        self.client.setJointMotorControlArray(self.uid, list(ARM_JOINTS), pybullet.POSITION_CONTROL,
                                              targetPositions=list(q), forces=list(ARM_FORCES),
                                              positionGains=[0.2] * 7)

    def _tick(self) -> None:
        self._step(TICK)
        if self.on_tick is not None:
            self.on_tick()

    def set_fingers(self, each: float, force: float = FINGER_FORCE) -> None:
        self.client.setJointMotorControlArray(self.uid, list(FINGER_JOINTS), pybullet.POSITION_CONTROL,
                                              targetPositions=[each, each], forces=[force, force])

    def ik(self, position: np.ndarray, orientation: Quat | tuple[float, ...]) -> tuple[float, ...]:
        """One IK solution from the current joints (null space pulls toward home), for control ticks."""
        solution = self.client.calculateInverseKinematics(
            self.uid, EE_LINK, list(position), list(orientation), lowerLimits=self.lower, upperLimits=self.upper,
            jointRanges=self.ranges, restPoses=[*HOME, FINGER_OPEN, FINGER_OPEN], maxNumIterations=30,
            residualThreshold=1e-4)
        return tuple(solution[:7])

    def move_line(self, position: np.ndarray | tuple[float, ...], orientation: Quat | tuple[float, ...],
                  speed: float = 0.4, tolerance: float = 0.003, settle: float = 0.6) -> float:
        """Move the end effector along a straight line to a pose; returns the distance (m) left to the goal."""
        goal = np.asarray(position, dtype=float)
        goal_q = tuple(float(v) for v in orientation)
        start, start_q = self.ee_pose()
        duration = max(float(np.linalg.norm(goal - start)) / speed, quat_angle(start_q, goal_q) / 1.6, 0.05)
        ticks = max(1, math.ceil(duration * 60))
        for k in range(1, ticks + 1):
            s = k / ticks
            s = s * s * (3 - 2 * s)            # smooth start and stop
            self.command(self.ik(start + s * (goal - start), slerp(start_q, goal_q, s)))
            self._tick()
        return self.hold(goal, goal_q, tolerance, settle)

    def hold(self, goal: np.ndarray, goal_q: Quat, tolerance: float = 0.003, settle: float = 0.6) -> float:
        """Command the exact IK solution of the goal pose until the end effector is there and still (or `settle`
        seconds pass); returns the distance (m) left."""
        target, _, _ = self.solve(goal, goal_q)
        self.command(target)
        for _ in range(max(1, math.ceil(settle * 60))):
            position, _ = self.ee_pose()
            speed = max(abs(s[1]) for s in self.client.getJointStates(self.uid, ARM_JOINTS))
            if float(np.linalg.norm(position - goal)) < tolerance and speed < 0.05:
                break
            self._tick()
        position, _ = self.ee_pose()
        return float(np.linalg.norm(position - goal))

    def move_joints(self, target: tuple[float, ...], speed: float = 1.2, settle: float = 0.5) -> float:
        """Interpolate in joint space to `target` (rad/s limited); returns the largest joint error left (rad)."""
        start = np.array(self.joints())
        goal = np.array(target)
        ticks = max(1, math.ceil(float(np.max(np.abs(goal - start))) / speed * 60))
        for k in range(1, ticks + 1):
            s = k / ticks
            s = s * s * (3 - 2 * s)
            self.command(tuple(start + s * (goal - start)))
            self._tick()
        error = float("inf")
        for _ in range(max(1, math.ceil(settle * 60))):
            error = float(np.max(np.abs(np.array(self.joints()) - goal)))
            if error < 0.005:
                break
            self._tick()
        return error

    def move_fingers(self, each: float, force: float = FINGER_FORCE, timeout: float = 0.6) -> float:
        """Drive both fingers toward `each` until they stop (blocked by an object) or arrive; returns the width."""
        self.set_fingers(each, force)
        last = self.finger_width()
        still = 0
        for _ in range(math.ceil(timeout * 60)):
            self._tick()
            width = self.finger_width()
            arrived = abs(width - 2 * each) < 0.001
            still = still + 1 if abs(width - last) < 2e-4 else 0
            last = width
            if arrived or still >= 4:
                break
        return last

    # ------------------------------------------------------------------ attaching
    def touching(self, body: int) -> tuple[bool, bool]:
        """Whether the left and the right finger touch `body`."""
        return tuple(bool(self.client.getContactPoints(self.uid, body, linkIndexA=f)) for f in FINGER_JOINTS)  # type: ignore[return-value]

    def attach(self, body: int) -> None:
        """Fix `body` to the hand where it is now (the grasp is then kept by a constraint, not by friction)."""
        ee, eq = self.ee_pose()
        com, q = self.client.getBasePositionAndOrientation(body)
        inv = rotation(eq).T
        local = inv @ (np.array(com) - ee)
        rel = self.client.multiplyTransforms([0, 0, 0], self.client.invertTransform([0, 0, 0], eq)[1], [0, 0, 0], q)[1]
        self._constraint = self.client.createConstraint(
            self.uid, EE_LINK, body, -1, pybullet.JOINT_FIXED, [0, 0, 0], local.tolist(), [0, 0, 0],
            parentFrameOrientation=rel, childFrameOrientation=[0, 0, 0, 1])
        self.client.changeConstraint(self._constraint, maxForce=500)
        self.client.changeDynamics(body, -1, activationState=pybullet.ACTIVATION_STATE_WAKE_UP)
        self.held = body

    def detach(self) -> None:
        if self._constraint is not None:
            self.client.removeConstraint(self._constraint)
            if self.held is not None:
                self.client.changeDynamics(self.held, -1, activationState=pybullet.ACTIVATION_STATE_WAKE_UP)
        self._constraint = None
        self.held = None

"""One headless pybullet simulation: the table, the Panda and a scene's objects, with exact save and restore.

Each World owns its pybullet clients (no global pybullet state); two Worlds never share anything. The simulation
is deterministic: the same scene and the same commands give bit-identical states.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from .arm import Arm
from .bodies import Body, build, centre, extent, pose
from .bullet import BulletClient, pybullet, pybullet_data
from .catalogue import CATALOGUE
from .scene import Scene

TIME_STEP = 1.0 / 240.0
TABLE_Z = 0.0            # the table top (the robot stands on it at the origin)


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """Silence file descriptor 1 for a moment: pybullet's C code prints an `argv[0]=` line on every connection,
    which would end up in a command's output (a `--json` line must stay the last one)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # no real stdout (e.g. captured): nothing to protect
        yield
        return
    sys.stdout.flush()
    saved = os.dup(fd)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), fd)
            try:
                yield
            finally:
                os.dup2(saved, fd)
    finally:
        os.close(saved)


class World:
    """The simulated tabletop: `bodies` by name, the `arm`, simulated time, and the initial state to go back to."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        with _quiet_stdout():
            self.client = BulletClient(connection_mode=pybullet.DIRECT)
        c = self.client
        data = pybullet_data.getDataPath()
        c.setAdditionalSearchPath(data)
        c.setPhysicsEngineParameter(fixedTimeStep=TIME_STEP, deterministicOverlappingPairs=1, numSolverIterations=20)
        c.setGravity(0, 0, -9.81)
        self.table = c.loadURDF("table/table.urdf", [0.5, 0.0, TABLE_Z - 0.625], [0, 0, 0, 1], useFixedBase=True)
        self.steps = 0
        self.arm = Arm(c, self.step)
        self.bodies: dict[str, Body] = {}
        for placement in scene.placements:
            self.bodies[placement.name] = build(c, placement.name, CATALOGUE[placement.name], placement.x,
                                                placement.y, placement.yaw, TABLE_Z + 0.0005)
        self.by_uid: dict[int, str] = {b.uid: n for n, b in self.bodies.items()}
        self.settle(0.5)
        self.steps = 0
        self._initial = c.saveState()
        self._wake()

    def close(self) -> None:
        self.client.disconnect()

    # ------------------------------------------------------------------ time
    @property
    def time(self) -> float:
        """Simulated seconds since the scene was set up (or reset)."""
        return self.steps * TIME_STEP

    def step(self, n: int = 1) -> None:
        for _ in range(n):
            self.client.stepSimulation()
        self.steps += n

    def settle(self, timeout: float = 1.5, speed: float = 0.01) -> None:
        """Step until every loose object is at rest (linear speed below `speed` m/s) or `timeout` seconds pass."""
        for _ in range(max(1, math.ceil(timeout * 60))):
            self.step(4)
            if all(np.linalg.norm(self.client.getBaseVelocity(b.uid)[0]) < speed
                   and np.linalg.norm(self.client.getBaseVelocity(b.uid)[1]) < 0.3
                   for b in self.bodies.values() if b.spec.mass > 0 and b.uid != self.arm.held):
                break

    def reset(self) -> None:
        """Back to the initial state: object poses and velocities, arm at home, gripper open, time zero."""
        self.arm.detach()
        self.client.restoreState(self._initial)
        self._wake()
        self.arm.rearm()
        self.steps = 0

    def _wake(self) -> None:
        """Every object of the scene kept from sleeping, and awake. The saved state does not hold activation: an
        object that fell asleep in one episode would still be asleep in the next, whose physics would then differ
        (on some CPUs episodes after a reset alternated between two outcomes, 2 cm apart)."""
        for body in self.bodies.values():
            self.client.changeDynamics(body.uid, -1, activationState=pybullet.ACTIVATION_STATE_DISABLE_SLEEPING)
            if body.spec.mass > 0:
                self.client.changeDynamics(body.uid, -1, activationState=pybullet.ACTIVATION_STATE_WAKE_UP)

    # ------------------------------------------------------------------ geometry
    def aabb(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        low, high = self.client.getAABB(self.bodies[name].uid, -1)
        return np.array(low), np.array(high)

    def origin(self, name: str) -> np.ndarray:
        """The body's frame origin: its footprint centre on its bottom face (when upright)."""
        return pose(self.client, self.bodies[name])[0]

    def orientation(self, name: str) -> tuple[float, ...]:
        return pose(self.client, self.bodies[name])[1]

    def centre(self, name: str) -> np.ndarray:
        """Centre of the body's own box (turning with it)."""
        return centre(self.client, self.bodies[name])

    def bottom(self, name: str) -> float:
        """Height of the body's lowest point."""
        return extent(self.client, self.bodies[name])[0]

    def top(self, name: str) -> float:
        """Height of the body's highest point."""
        return extent(self.client, self.bodies[name])[1]

    def contacts(self, a: str, b: str) -> bool:
        return bool(self.client.getContactPoints(self.bodies[a].uid, self.bodies[b].uid))

    def held_name(self) -> str | None:
        return self.by_uid.get(self.arm.held) if self.arm.held is not None else None

    def state_dict(self) -> dict[str, Any]:
        """Poses of every object, as plain data."""
        out: dict[str, Any] = {}
        for name in self.bodies:
            origin, q = pose(self.client, self.bodies[name])
            out[name] = {"position": [round(float(v), 4) for v in origin],
                         "orientation": [round(float(v), 5) for v in q]}
        return out

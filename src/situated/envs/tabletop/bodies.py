"""Building catalogue objects as pybullet bodies, and reading their poses in the catalogue's body frame.

pybullet reports a body's pose at its centre of mass; the catalogue's frame has its origin at the footprint centre
on the bottom face. `Body.offset` (measured once, when the body is built) converts between the two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .catalogue import ObjectSpec

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]

_ROLLING_FRICTION = 0.0005     # lets spheres and cylinders come to rest instead of rolling for ever
_SPINNING_FRICTION = 0.001
_ANGULAR_DAMPING = 0.3         # damps the rocking of convex-decomposed meshes (the duck) on the table


@dataclass(frozen=True, eq=False)
class Body:
    """A catalogue object built in one simulator: its body id, its entry and the centre-of-mass offset."""

    name: str
    uid: int
    spec: ObjectSpec
    offset: Vec3            # centre of mass in the body frame (bottom-centre origin)
    low: Vec3               # the body's box in its own frame (measured when built)
    high: Vec3
    hull: np.ndarray | None = None   # (N, 3) collision-mesh vertices (or box corners) in the body frame


def yaw_quaternion(yaw: float) -> Quat:
    """Rotation by `yaw` radians about the world z axis."""
    return (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))


def rotation(q: Quat | tuple[float, ...]) -> np.ndarray:
    """3×3 rotation matrix of an (x, y, z, w) quaternion."""
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def yaw_of(q: Quat | tuple[float, ...]) -> float:
    """Heading of a body's x axis about the world z axis."""
    r = rotation(q)
    return math.atan2(r[1, 0], r[0, 0])


def build(client: Any, name: str, spec: ObjectSpec, x: float, y: float, yaw: float, table_z: float) -> Body:
    """Create `spec` standing on the table at (x, y) turned by `yaw`; returns its Body."""
    if spec.urdf:
        uid = client.loadURDF(spec.urdf, [0.0, 0.0, 1.0], [0, 0, 0, 1], globalScaling=spec.scale,
                              useFixedBase=spec.mass == 0.0)
        client.changeVisualShape(uid, -1, rgbaColor=list(spec.rgba))
        if spec.mass > 0:
            client.changeDynamics(uid, -1, mass=spec.mass)
    else:
        uid = _build_parts(client, spec)
    com, _ = client.getBasePositionAndOrientation(uid)
    vertices = _mesh_vertices(client, uid) if spec.urdf else None
    if vertices is not None:         # pybullet's box around a mesh has margins: measure the vertices instead
        points = np.array(com) + vertices
        low, high = points.min(axis=0), points.max(axis=0)
    else:
        low, high = (np.array(v) for v in client.getAABB(uid, -1))
    origin = np.array([(low[0] + high[0]) / 2, (low[1] + high[1]) / 2, low[2]])
    offset = tuple(float(v) for v in np.array(com) - origin)
    local_low = tuple(float(v) for v in low - origin)
    local_high = tuple(float(v) for v in high - origin)
    hull = None
    if spec.urdf:
        hull = (vertices + np.array(offset)) if vertices is not None else np.array(
            [[x, y, z] for x in (local_low[0], local_high[0]) for y in (local_low[1], local_high[1])
             for z in (local_low[2], local_high[2])])
    client.changeDynamics(uid, -1, lateralFriction=1.0, rollingFriction=_ROLLING_FRICTION,
                          spinningFriction=_SPINNING_FRICTION, restitution=0.0, angularDamping=_ANGULAR_DAMPING)
    if spec.mass > 0:    # resting objects fall asleep instead of creeping; a touch wakes them
        client.changeDynamics(uid, -1, activationState=client.ACTIVATION_STATE_ENABLE_SLEEPING)
    body = Body(name, uid, spec, offset, local_low, local_high, hull)
    place(client, body, x, y, yaw, table_z)
    return body


def place(client: Any, body: Body, x: float, y: float, yaw: float, z: float) -> None:
    """Put the body's bottom-centre at (x, y, z), turned by `yaw`, at rest."""
    q = yaw_quaternion(yaw)
    com = np.array([x, y, z]) + rotation(q) @ np.array(body.offset)
    client.resetBasePositionAndOrientation(body.uid, com.tolist(), q)
    client.resetBaseVelocity(body.uid, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    if body.spec.mass > 0:    # a sleeping body would keep its old place in Bullet's broadphase
        client.changeDynamics(body.uid, -1, activationState=client.ACTIVATION_STATE_WAKE_UP)


def pose(client: Any, body: Body) -> tuple[np.ndarray, Quat]:
    """The body frame's origin (bottom centre) in the world, and its orientation."""
    com, q = client.getBasePositionAndOrientation(body.uid)
    return np.array(com) - rotation(q) @ np.array(body.offset), q


def to_world(client: Any, body: Body, local: tuple[float, float, float]) -> np.ndarray:
    """A point given in the body frame, in world coordinates."""
    origin, q = pose(client, body)
    return origin + rotation(q) @ np.array(local)


def to_local(client: Any, body: Body, point: np.ndarray | tuple[float, ...]) -> np.ndarray:
    """A world point in the body frame."""
    origin, q = pose(client, body)
    return rotation(q).T @ (np.asarray(point, dtype=float) - origin)


def centre(client: Any, body: Body) -> np.ndarray:
    """The centre of the body's own box (it turns with the body, unlike pybullet's axis-aligned box)."""
    origin, q = pose(client, body)
    return origin + rotation(q) @ ((np.array(body.low) + np.array(body.high)) / 2)


def extent(client: Any, body: Body) -> tuple[float, float]:
    """The lowest and highest points of the body (z): exact for primitive parts, from the vertices of meshes."""
    return extent_at(body, *pose(client, body))


def extent_at(body: Body, origin: np.ndarray, q: Quat | tuple[float, ...]) -> tuple[float, float]:
    """The lowest and highest points (z) the body would reach with its frame at `origin`, turned by `q`."""
    r = rotation(q)
    if body.hull is not None:
        heights = body.hull @ r[2] + origin[2]
        return float(heights.min()), float(heights.max())
    bottom, top = math.inf, -math.inf
    for part in body.spec.parts:
        pr = r @ rotation(_part_quaternion(part.roll, part.yaw))
        z = float((origin + r @ np.array(part.position))[2])
        if part.shape == "sphere":
            reach = part.size[0]
        elif part.shape == "box":
            reach = float(np.abs(pr[2]) @ (np.array(part.size) / 2))
        else:
            axis_z = abs(float(pr[2, 2]))
            reach = axis_z * part.size[1] / 2 + part.size[0] * math.sqrt(max(0.0, 1 - axis_z**2))
        bottom, top = min(bottom, z - reach), max(top, z + reach)
    return bottom, top


def _mesh_vertices(client: Any, uid: int) -> np.ndarray | None:
    """The collision mesh's vertices relative to the centre of mass (None when the body has no mesh)."""
    shapes = client.getCollisionShapeData(uid, -1)
    if not shapes or any(shape[2] != client.GEOM_MESH for shape in shapes):
        return None
    count, vertices = client.getMeshData(uid, -1)
    return np.array(vertices, dtype=float).reshape(-1, 3) if count else None


def _part_quaternion(roll: float, yaw: float) -> Quat:
    """Rotation about x by `roll`, then about z by `yaw` (pybullet's Euler order for [roll, 0, yaw])."""
    cr, sr, cy, sy = math.cos(roll / 2), math.sin(roll / 2), math.cos(yaw / 2), math.sin(yaw / 2)
    return (sr * cy, sr * sy, cr * sy, cr * cy)


def _build_parts(client: Any, spec: ObjectSpec) -> int:
    p = client   # BulletClient exposes pybullet's constants too
    shapes = {"box": p.GEOM_BOX, "sphere": p.GEOM_SPHERE, "cylinder": p.GEOM_CYLINDER}
    kinds, radii, halves, lengths, positions, orientations = [], [], [], [], [], []
    for part in spec.parts:
        kinds.append(shapes[part.shape])
        radii.append(part.size[0] if part.shape != "box" else 0.0)
        halves.append([s / 2 for s in part.size] if part.shape == "box" else [0.0, 0.0, 0.0])
        lengths.append(part.size[1] if part.shape == "cylinder" else 0.0)
        positions.append(list(part.position))
        orientations.append(list(_part_quaternion(part.roll, part.yaw)))
    collision = p.createCollisionShapeArray(kinds, radii=radii, halfExtents=halves, lengths=lengths,
                                            collisionFramePositions=positions,
                                            collisionFrameOrientations=orientations)
    visual = p.createVisualShapeArray(kinds, radii=radii, halfExtents=halves, lengths=lengths,
                                      visualFramePositions=positions, visualFrameOrientations=orientations)
    centre = [0.0, 0.0, spec.height / 2]
    uid = p.createMultiBody(baseMass=spec.mass, baseCollisionShapeIndex=collision, baseVisualShapeIndex=visual,
                            basePosition=[0.0, 0.0, 1.0], baseInertialFramePosition=centre)
    for index, part in enumerate(spec.parts):
        p.changeVisualShape(uid, -1, shapeIndex=index, rgbaColor=list(part.rgba or spec.rgba))
    return uid

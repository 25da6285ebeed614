"""Perception: the object list from segmentation, positions from lifted depth, pixels, PNG; the arm's kinematics."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pybullet
import pytest
from pybullet_utils.bullet_client import BulletClient

from situated.envs.tabletop import ITEMS, Camera, TabletopEnv
from situated.envs.tabletop.kinematics import forward
from situated.envs.tabletop.png import encode_png


@pytest.fixture(scope="module")
def crowded() -> Iterator[TabletopEnv]:
    env = TabletopEnv(["tray", *ITEMS], seed=1)
    yield env
    env.close()


def test_perception_finds_exactly_the_scene_objects_within_2cm(crowded: TabletopEnv) -> None:
    observation = crowded.observe()
    assert sorted(observation.names) == sorted(crowded.scene.names)
    for detection in observation.detections:
        truth = crowded.world.centre(detection.name)
        assert np.linalg.norm(np.array(detection.position) - truth) < 0.02, detection


def test_gift_bag_scene_objects_come_from_the_camera() -> None:
    env = TabletopEnv("gift_bag", seed=0)
    try:
        assert env.object_names() == ["ball", "candy", "cube", "duck", "gift_bag", "toy_car", "tray"]
        # an object hidden from the camera is not listed: move the duck under the tray's floor level
        env.world.client.resetBasePositionAndOrientation(env.world.bodies["duck"].uid, [0.5, 0.0, -0.3],
                                                         [0, 0, 0, 1])
        env.world.step(1)
        assert "duck" not in env.object_names()
    finally:
        env.close()


def test_pixel_lifting_and_segmentation_agree_with_the_geometry(crowded: TabletopEnv) -> None:
    camera = crowded.camera
    for name in ("red_cube", "soup_can", "banana"):
        top = crowded.world.centre(name)
        top[2] = crowded.world.top(name)
        u, v = (round(c) for c in camera.project(top))
        assert crowded.object_at_pixel(u, v) == name
        lifted = np.array(crowded.pixel_to_point(u, v))
        assert np.linalg.norm(lifted[:2] - top[:2]) < 0.015, name
        assert abs(lifted[2] - top[2]) < 0.01, name
    # a pixel of bare table lifts to the table top and names no object
    free = np.argwhere(crowded.observe().segmentation == crowded.world.table)
    v, u = free[len(free) // 2]
    assert crowded.object_at_pixel(int(u), int(v)) is None
    assert abs(crowded.pixel_to_point(int(u), int(v))[2]) < 0.005
    with pytest.raises(ValueError, match="outside the 320×240 image"):
        crowded.pixel_to_point(320, 0)


def test_camera_matrices_match_pybullet() -> None:
    camera = Camera()
    client = BulletClient(connection_mode=pybullet.DIRECT)
    try:
        assert np.allclose(camera.view_matrix(), client.computeViewMatrix(camera.eye, camera.target, camera.up))
        assert np.allclose(camera.projection_matrix(), client.computeProjectionMatrixFOV(
            camera.fov, camera.width / camera.height, camera.near, camera.far))
    finally:
        client.disconnect()
    k = camera.intrinsics
    assert k[0, 2] == camera.width / 2 and k[0, 0] == pytest.approx(k[1, 1])
    assert np.allclose(camera.extrinsics[:3, 3], camera.eye)
    # projecting then lifting at the point's depth gives the point back
    point = np.array([0.55, -0.12, 0.04])
    u, v = camera.project(point)
    depth = (camera.extrinsics[:3, :3].T @ (point - np.array(camera.eye)))[2]
    assert np.allclose(camera.lift(u, v, depth), point)


def test_image_is_rgb_and_saves_as_png(crowded: TabletopEnv, tmp_path: Path) -> None:
    image = crowded.image()
    assert image.shape == (240, 320, 3) and image.dtype == np.uint8
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 50       # a rendered scene, not a blank frame
    path = crowded.save_image(tmp_path / "view.png")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (320, 240)
    # decode our own PNG: the IDAT payload is the image, row by row, each with filter byte 0
    length = struct.unpack(">I", data[33:37])[0]
    raw = np.frombuffer(zlib.decompress(data[41:41 + length]), dtype=np.uint8).reshape(240, 1 + 320 * 3)
    assert (raw[:, 0] == 0).all() and np.array_equal(raw[:, 1:].reshape(240, 320, 3), image)
    with pytest.raises(ValueError, match="expected an"):
        encode_png(np.zeros((4, 4)))


def test_forward_kinematics_matches_pybullet() -> None:
    client = BulletClient(connection_mode=pybullet.DIRECT)
    try:
        import pybullet_data

        client.setAdditionalSearchPath(pybullet_data.getDataPath())
        robot = client.loadURDF("franka_panda/panda.urdf", useFixedBase=True)
        rng = np.random.default_rng(0)
        for _ in range(5):
            q = rng.uniform(-1.5, 1.5, 7)
            q[3] = rng.uniform(-2.8, -0.3)
            for j, a in enumerate(q):
                client.resetJointState(robot, j, a)
            state = client.getLinkState(robot, 11, computeForwardKinematics=True)
            pose = forward(q)
            assert np.allclose(pose[:3, 3], state[4], atol=1e-6)
            assert np.allclose(pose[:3, :3], np.array(client.getMatrixFromQuaternion(state[5])).reshape(3, 3),
                               atol=1e-6)
    finally:
        client.disconnect()

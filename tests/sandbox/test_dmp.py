"""DMP skills: fit a demonstration, replay it to the demonstrated and to new goals, store and restore it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("movement_primitives")

from situated.errors import DataError
from situated.sandbox.dmp import DmpSkill, fit_dmp
from situated.sandbox.library import SkillLibrary

START = np.array([0.40, 0.00, 0.10])
GOAL = np.array([0.60, 0.15, 0.10])
LIFT = 0.15


def yaw_quaternion(angle: float) -> np.ndarray:
    """w-x-y-z quaternion of a rotation by `angle` about z."""
    return np.array([math.cos(angle / 2), 0.0, 0.0, math.sin(angle / 2)])


def angle_between(q1: np.ndarray, q2: np.ndarray) -> float:
    return 2.0 * math.acos(min(1.0, abs(float(np.dot(q1, q2)))))


@pytest.fixture(scope="module")
def demo() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lift, move and lower over 2 s (minimum-jerk progress, a 15 cm lift), turning 0.5 rad about z."""
    times = np.linspace(0.0, 2.0, 201) + 5.0  # recorded clock: need not start at 0
    s = (times - times[0]) / 2.0
    progress = 10 * s**3 - 15 * s**4 + 6 * s**5
    positions = START + np.outer(progress, GOAL - START)
    positions[:, 2] += LIFT * np.sin(np.pi * s) ** 2
    quaternions = np.array([yaw_quaternion(0.5 * p) for p in progress])
    return times, positions, quaternions


@pytest.fixture(scope="module")
def skill(demo: tuple[np.ndarray, np.ndarray, np.ndarray]) -> DmpSkill:
    return fit_dmp(*demo, n_weights_per_dim=20)


def test_rollout_reproduces_the_demonstration(demo: tuple[np.ndarray, np.ndarray, np.ndarray],
                                              skill: DmpSkill) -> None:
    _, positions, quaternions = demo
    assert skill.execution_time == pytest.approx(2.0) and skill.dt == pytest.approx(0.01)
    assert len(skill.weights) == 6 * 20
    times, pos, quat = skill.rollout()
    assert pos.shape == (201, 3) and quat.shape == (201, 4) and times[-1] == pytest.approx(2.0)
    assert np.abs(pos - positions).max() < 0.005  # within 5 mm all along
    assert max(angle_between(a, b) for a, b in zip(quat, quaternions, strict=True)) < 0.01
    assert np.linalg.norm(pos[-1] - GOAL) < 0.001


def test_rollout_to_a_new_goal_keeps_the_shape(skill: DmpSkill) -> None:
    new_goal = GOAL + np.array([0.10, -0.10, 0.05])  # 15 cm away
    new_turn = yaw_quaternion(1.0)
    _, pos, quat = skill.rollout(goal=(new_goal, new_turn))
    assert np.linalg.norm(new_goal - GOAL) == pytest.approx(0.15)
    assert np.linalg.norm(pos[-1] - new_goal) < 0.001
    assert angle_between(quat[-1], new_turn) < 0.01
    assert pos[:, 2].max() > max(START[2], new_goal[2]) + 0.10  # it still lifts before lowering
    assert int(np.argmax(pos[:, 2])) in range(60, 140)  # highest near the middle, as demonstrated
    assert np.all(np.isfinite(pos)) and np.allclose(np.linalg.norm(quat, axis=1), 1.0)


def test_rollout_from_a_new_start(skill: DmpSkill) -> None:
    new_start = START + np.array([-0.05, 0.10, 0.0])
    _, pos, _ = skill.rollout(start=(new_start, [1.0, 0.0, 0.0, 0.0]))
    assert np.linalg.norm(pos[0] - new_start) < 1e-9
    assert np.linalg.norm(pos[-1] - GOAL) < 0.001
    assert pos[:, 2].max() > START[2] + 0.10


def test_quaternion_signs_do_not_matter(demo: tuple[np.ndarray, np.ndarray, np.ndarray], skill: DmpSkill) -> None:
    times, positions, quaternions = demo
    flipped = quaternions.copy()
    flipped[::3] *= -1.0  # q and -q are the same rotation; demonstrations from trackers flip
    other = fit_dmp(times, positions, flipped * 2.0)  # and need not be normalised
    assert np.allclose(other.weights, skill.weights, atol=1e-6)
    _, _, a = skill.rollout(goal=(GOAL, yaw_quaternion(1.0)))
    _, _, b = skill.rollout(goal=(GOAL, -yaw_quaternion(1.0)))
    assert max(angle_between(x, y) for x, y in zip(a, b, strict=True)) < 1e-6


def test_dict_round_trip_gives_the_same_rollout(skill: DmpSkill) -> None:
    data = json.loads(json.dumps(skill.to_dict()))
    again = DmpSkill.from_dict(data)
    assert again == skill
    goal = (GOAL + 0.1, yaw_quaternion(-0.3))
    for x, y in zip(skill.rollout(goal=goal), again.rollout(goal=goal), strict=True):
        assert np.array_equal(x, y)


def test_skill_in_the_library(tmp_path: Path, skill: DmpSkill) -> None:
    with SkillLibrary.open(tmp_path / "lib.db") as lib:
        lib.add_skill("wave", [], "Wave at the user, as demonstrated.", skill.to_dict())
    with SkillLibrary.open(tmp_path / "lib.db") as lib:
        stored = lib.skills()[0]
        assert DmpSkill.from_dict(stored.weights, source=f"{lib.path}: skill {stored.name}") == skill


BAD_DICTS = [
    ({"format": "situated-dmp/2"}, "format"),
    ({"weights": [0.0] * 119}, "weights: must be a list of 120 numbers"),
    ({"weights": [0.0] * 119 + [float("nan")]}, r"weights\[119\]: must be a finite number"),
    ({"weights": [0.0] * 119 + ["1"]}, r"weights\[119\]: must be a finite number"),
    ({"weights": "0" * 120}, "weights: must be a list"),
    ({"n_weights_per_dim": True}, "n_weights_per_dim"),
    ({"n_weights_per_dim": 1}, "n_weights_per_dim"),
    ({"execution_time": -2.0}, "execution_time: must be positive"),
    ({"dt": 3.0}, "dt: must be at most execution_time"),
    ({"dt": 1e-9}, "dt: must be at most execution_time and at least"),
    ({"goal_position": [0.0, 0.0]}, "goal_position: must be a list of 3 numbers"),
    ({"start_orientation": [1.0, 1.0, 0.0, 0.0]}, "start_orientation: must be a unit quaternion"),
    ({"goal_orientation": [1.0, 0.0, 0.0, float("inf")]}, r"goal_orientation\[3\]"),
    ({"alpha_y": 0}, "alpha_y: must be positive"),
    ({"extra": 1}, "extra: unknown field"),
    ({"beta_y": None}, "beta_y: must be a finite number"),
]


@pytest.mark.parametrize(("change", "problem"), BAD_DICTS, ids=[p for _, p in BAD_DICTS])
def test_from_dict_rejects_bad_data(skill: DmpSkill, change: dict[str, Any], problem: str) -> None:
    data = {**skill.to_dict(), **change}
    with pytest.raises(DataError, match=problem) as err:
        DmpSkill.from_dict(data, source="lib.db: skill wave")
    assert str(err.value).startswith("lib.db: skill wave: ") and "\n" not in str(err.value)


def test_from_dict_rejects_missing_fields_and_non_objects(skill: DmpSkill) -> None:
    data = skill.to_dict()
    del data["dt"]
    with pytest.raises(DataError, match="dt: missing"):
        DmpSkill.from_dict(data)
    with pytest.raises(DataError, match="must be an object"):
        DmpSkill.from_dict([1, 2])  # type: ignore[arg-type]


def test_fit_rejects_bad_demonstrations(demo: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    times, positions, quaternions = demo
    backwards = times.copy()
    backwards[50] = backwards[49]
    zero = quaternions.copy()
    zero[7] = 0.0
    nan = positions.copy()
    nan[3, 1] = np.nan
    cases = [
        ((backwards, positions, quaternions), "times: must increase strictly"),
        ((times, positions[:, :2], quaternions), r"positions: shape \(201, 2\), expected \(201, 3\)"),
        ((times, positions, quaternions[:-1]), r"quaternions: shape \(200, 4\), expected \(201, 4\)"),
        ((times, nan, quaternions), "positions: must be finite"),
        ((times, positions, zero), "quaternions: a quaternion of length 0"),
        ((times[:2], positions[:2], quaternions[:2]), "at least 3 samples"),
        ((times, "abc", quaternions), "positions: must be numbers"),
    ]
    for args, problem in cases:
        with pytest.raises(DataError, match=problem):
            fit_dmp(*args)
    with pytest.raises(DataError, match="n_weights_per_dim"):
        fit_dmp(times, positions, quaternions, n_weights_per_dim=1)


def test_rollout_rejects_bad_poses(skill: DmpSkill) -> None:
    with pytest.raises(DataError, match="rollout: goal position: shape"):
        skill.rollout(goal=([0.0, 0.0], [1.0, 0.0, 0.0, 0.0]))
    with pytest.raises(DataError, match="rollout: start: must be"):
        skill.rollout(start=np.zeros(7))  # type: ignore[arg-type]

"""The simulator tests need the optional `pybullet` (extra `tabletop`); without it only the scene tests run."""

from __future__ import annotations

import importlib.util

_SIMULATOR_TESTS = ["test_tabletop_env.py", "test_tabletop_perception.py", "test_tabletop_skills.py",
                    "test_perception_skills.py"]
collect_ignore = [] if importlib.util.find_spec("pybullet") else _SIMULATOR_TESTS

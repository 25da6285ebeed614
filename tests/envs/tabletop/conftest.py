"""The tabletop tests need the optional `pybullet` (extra `tabletop`); without it they are not collected."""

from __future__ import annotations

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("pybullet") else ["test_tabletop_*.py"]

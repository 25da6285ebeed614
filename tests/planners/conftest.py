"""Fixtures of the planner tests: the real Map2seq splits the navigation agents are tested on."""

from __future__ import annotations

from pathlib import Path

import pytest

from situated.datasets.map2seq import NavDataset, load_split


@pytest.fixture(scope="session")
def seen(velma_data: Path) -> NavDataset:
    """Map2seq's seen-scenario dev file: the training-area routes examples come from."""
    return load_split(velma_data / "map2seq_seen", "dev")


@pytest.fixture(scope="session")
def dev(velma_data: Path) -> NavDataset:
    """Map2seq's unseen-area dev file: the test episodes."""
    return load_split(velma_data / "map2seq_unseen", "dev")

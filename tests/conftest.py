"""Shared fixtures: the real datasets live in ../shared/data beside the project root and are read from there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Root of the real datasets (../shared/data); tests that need it are skipped only if it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def progprompt_data(shared_data: Path) -> Path:
    return shared_data / "progprompt"


@pytest.fixture(scope="session")
def velma_data(shared_data: Path) -> Path:
    return shared_data / "velma"


@pytest.fixture(scope="session")
def examples(progprompt_data: Path) -> dict[str, str]:
    """ProgPrompt's training plans (the example set the paper's prompts draw from)."""
    return json.loads((progprompt_data / "pythonic_plans" / "train_complete_plan_set.json").read_text())

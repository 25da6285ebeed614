"""Shared fixtures: the real datasets live in ../shared/data beside the project root and are read from there."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# conversations' prompt states (llm.llamacpp_disk_states) go to a directory of this run, not the user's cache
if "SITUATED_PROMPT_STATES" not in os.environ:
    os.environ["SITUATED_PROMPT_STATES"] = tempfile.mkdtemp(prefix="situated-prompt-states-")
    atexit.register(shutil.rmtree, os.environ["SITUATED_PROMPT_STATES"], True)

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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that reads ../shared/data, so `pytest -m shared_data` (or `-m "not shared_data"`)
    selects them and a user sees which ran."""
    for item in items:
        if "shared_data" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.shared_data)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say how many of the tests that passed read the real data in ../shared/data."""
    passed = terminalreporter.stats.get("passed", [])
    real = sum(1 for report in passed if "shared_data" in getattr(report, "keywords", {}))
    terminalreporter.write_line(f"{real} of {len(passed)} passed tests read the real data in {SHARED_DATA}")

"""Sessions run with the real model's calls from a cassette: the scripts of a test, each in a new session (as a new
process) on one library, and the replies and expectations of their lines. SITUATED_CASSETTE_MODE=record runs the
real model and records its calls again."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from situated.envs.tabletop import TabletopEnv
from situated.llm import cassette
from situated.sandbox import SkillLibrary
from situated.sandbox.script import Step, read_script, run_script
from situated.sandbox.session import SandboxSession

MODEL = "llamacpp:qwen2.5-coder-1.5b"
MODE = os.environ.get("SITUATED_CASSETTE_MODE", "replay")


def run_recorded(recorded: Path, folder: Path, scripts: Sequence[str], scene: str = "gift_bag") -> list[list[Step]]:
    """The steps of each script in `scripts`, run in turn on `scene` and one library in `folder`, the model's calls
    replayed from (or recorded to) the cassette `recorded`."""
    if MODE == "replay" and not recorded.is_file():
        pytest.fail(f"cassette {recorded} missing; record it with SITUATED_CASSETTE_MODE=record")
    llm = cassette.wrap(MODEL, recorded, mode=MODE, n_threads=1)
    runs: list[list[Step]] = []
    for number, text in enumerate(scripts):
        script = folder / f"script_{number}.session"
        script.write_text(text)
        steps: list[Step] = []
        env = TabletopEnv(scene, seed=0)
        try:
            with SkillLibrary.open(folder / "lib.db") as lib, SandboxSession(env, llm, lib, scene=scene,
                                                                             model=MODEL) as session:
                run_script(session, read_script(script), steps.append)
        finally:
            env.close()
        runs.append(steps)
    return runs


def replies(steps: list[Step], number: int) -> list[Any]:
    """The robot's replies to the script's line `number`."""
    return [r for s in steps if s.line.number == number for r in s.replies]


def met(steps: list[Step], number: int) -> bool:
    """Whether the expectation on the script's line `number` held."""
    return next(s.met for s in steps if s.line.number == number)

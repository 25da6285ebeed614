"""The web console's test kit: a gift-bag session on its own thread, behind the FastAPI app."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web console needs the web extra: pip install 'situated[web]'")
pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from situated.web.console import WebConsole
from situated.web.runner import SessionRunner

LOOPBACK = "http://127.0.0.1:8000"
SHOTS = os.environ.get("SITUATED_SCREENSHOTS")
"""Where the browser tests save the screenshots of docs/sandbox_web.md (unset: nowhere, as in CI)."""


def shot(page: Any, name: str) -> None:
    """Save the page as `sandbox_web_NAME.png` under SITUATED_SCREENSHOTS, when it is set (in 256 colours, to
    keep the file small)."""
    if SHOTS:
        from PIL import Image

        path = Path(SHOTS) / f"sandbox_web_{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path))
        with Image.open(path) as image:
            small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
        small.save(path, optimize=True)


def opener(llm: Any, library: Path, motions: bool = False) -> Callable[[ExitStack], Any]:
    """Opens the gift-bag scene, the library and a session on `llm` (on the runner's thread); `motions`: the
    robot may ask to be shown a motion."""

    def open_session(stack: ExitStack) -> Any:
        from situated.envs.tabletop import TabletopEnv
        from situated.sandbox import SkillLibrary
        from situated.sandbox.session import SandboxSession

        lib = stack.enter_context(SkillLibrary.open(library))
        env = TabletopEnv("gift_bag", seed=0)
        stack.callback(env.close)
        return stack.enter_context(SandboxSession(env, llm, lib, scene="gift_bag", model=getattr(llm, "uri", None),
                                                  motions=motions))

    return open_session


@contextmanager
def web_console(llm: Any, library: Path, recognizer: Any = None, motions: bool = False) -> Iterator[WebConsole]:
    with SessionRunner(opener(llm, library, motions)) as runner:
        yield WebConsole(runner, recognizer)


def pixel_of(session: Any, name: str) -> tuple[int, int]:
    """A pixel of the camera image that shows `name` (the middle one of its pixels)."""
    env = session.env
    rows, cols = np.nonzero(env.observe().segmentation == env.world.bodies[name].uid)
    k = len(rows) // 2
    return int(cols[k]), int(rows[k])

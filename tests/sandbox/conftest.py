"""The gift-bag world shared by the sandbox tests: one simulator per module, reset and forgetful per test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def env() -> Iterator[Any]:
    """The gift-bag scene (pybullet, imported here so that modules without it can skip first)."""
    from situated.envs.tabletop import TabletopEnv

    world = TabletopEnv("gift_bag", seed=0)
    yield world
    world.close()


@pytest.fixture
def fresh(env: Any) -> Any:
    """`env` reset, with every taught alias and location forgotten."""
    env.reset()
    for name in [*env.aliases, *env.locations]:
        env.forget(name)
    return env

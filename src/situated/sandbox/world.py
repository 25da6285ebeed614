"""The tabletop world as a sandbox session sees it: the arm's skills plus skills taught by demonstration."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..envs.base import StepResult
from ..program import Call, Condition, Var
from .motions import DemoSkill

if TYPE_CHECKING:
    from ..envs.tabletop import TabletopEnv


class SandboxWorld:
    """An `Environment` over a `TabletopEnv`: `step` runs a taught motion itself and passes anything else on."""

    def __init__(self, env: TabletopEnv) -> None:
        self.env = env
        self.motions: dict[str, DemoSkill] = {}

    def reset(self, task: Any = None) -> str:
        return self.env.reset(task)

    def step(self, call: Call) -> StepResult:
        motion = self.motions.get(call.action)
        if motion is None:
            return self.env.step(call)
        if len(call.args) != 1 or isinstance(call.args[0], Var):
            return StepResult(False, f"{call.action} takes 1 argument (a target), got {len(call.args)}")
        return motion.run(self.env, str(call.args[0]))

    def holds(self, condition: Condition) -> bool:
        return self.env.holds(condition)

    def describe(self, near: str | None = None) -> str:
        return self.env.describe(near)

    def snapshot(self) -> dict:
        return self.env.snapshot()

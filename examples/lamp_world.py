"""The documentation's example environment: a toy world with one lamp (docs/architecture.md, "A new environment").

The world implements the `Environment` protocol and nothing else; `lamp_world()` wraps it in `CheckedEnv`, the one
call check every environment shares, so an unknown action, a wrong number of objects or an unbound loop variable
is refused before the world is asked. The conformance kit (tests/envs/conformance.py) checks it like the
household, street and tabletop worlds.

Run it: `python examples/lamp_world.py` interprets a two-line plan on it and prints the trace.
"""

from __future__ import annotations

from situated.actions import ActionSpace, Param, Primitive
from situated.envs.base import StepResult
from situated.envs.checked import CheckedEnv
from situated.program import Call, Condition

LAMP_SPACE = ActionSpace((Primitive("switchon", (Param("obj"),), "Switch the lamp on."),
                          Primitive("switchoff", (Param("obj"),), "Switch the lamp off.")), objects=("lamp",))


class LampWorld:
    """One lamp, off at the start; `switchon('lamp')` / `switchoff('lamp')` (calls already checked)."""

    def __init__(self) -> None:
        self.on = False

    def reset(self, task: object = None) -> str:
        self.on = False
        return "The lamp is off."

    def step(self, call: Call) -> StepResult:
        if call.args != ("lamp",):
            return StepResult(False, f"{call.action}: there is no {call.args[0]} here")
        self.on = call.action == "switchon"
        return StepResult(True, changes=(f"lamp {'ON' if self.on else 'OFF'}",))

    def holds(self, condition: Condition) -> bool:
        return (condition.kind == "state" and condition.args == ("lamp", "switchon") and self.on) != condition.negated

    def describe(self, near: str | None = None) -> str:
        return f"You see: lamp ({'on' if self.on else 'off'})."

    def snapshot(self) -> dict:
        return {"lamp": self.on}


def lamp_world() -> CheckedEnv:
    """The lamp world with its calls checked against `LAMP_SPACE`."""
    return CheckedEnv(LampWorld(), LAMP_SPACE)


if __name__ == "__main__":
    from situated.interpreter import interpret
    from situated.program import parse

    world = lamp_world()
    world.reset()
    for event in interpret(parse("switchon('lamp')\nassert('lamp' is 'switchon')\nfly('lamp')"), world).events:
        print(event)

"""The one call check of every Environment, as Gymnasium's `PassiveEnvChecker` wraps any Env.

A call that names an action the environment's `ActionSpace` lacks, has the wrong number of arguments or still
holds an unbound loop variable fails with a reason in words, and the world is never asked. `CheckedEnv` wraps
any Environment with this check; the built-in environments (household, streets, tabletop) are built checked:
their `step` runs `checked_step` with their own space and wording, so a caller that constructs one directly
gets the same check. Each world keeps its own wording (`CallWording`): the reasons reach plans' feedback and
prompts, so they stay word for word what they were.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..actions import ActionSpace
from ..program import Call, Condition, Var
from .base import Environment, StepResult


@dataclass(frozen=True)
class CallWording:
    """How a world words a refused call. Fields of the templates: `action` (as called), `name` (the action
    looked up: lower case when `fold_case`), `words` (the call as words: `putin salmon`), `arity`, `got`, `var`
    (the unbound variable) and `known` (the space's action names, comma-separated)."""

    unknown: str | None = "unknown action {action!r}"
    """None: an unknown action passes on (without arguments) for the world to correct, as VELMA's rules make
    an unknown word `forward`."""
    arity: str = "{action} takes {arity} argument(s), got {got}"
    unbound: str = "{action}: loop variable {var!r} is not bound"
    fold_case: bool = False
    """Look actions up in lower case (VirtualHome's `[GRAB]` is `grab`)."""


def call_problem(call: Call, space: ActionSpace, wording: CallWording = CallWording()) -> str | None:
    """Why `call` cannot run in a world with `space` (unknown action, wrong arity, unbound variable), or None."""
    name = call.action.lower() if wording.fold_case else call.action
    if name in space:
        arity = space.get(name).arity
    elif wording.unknown is None:
        arity = 0
    else:
        return wording.unknown.format(action=call.action, name=name, known=", ".join(space.names))
    words = " ".join([name, *(a.name if isinstance(a, Var) else str(a) for a in call.args)])
    if len(call.args) != arity:
        return wording.arity.format(action=call.action, name=name, words=words, arity=arity, got=len(call.args))
    for arg in call.args:
        if isinstance(arg, Var):
            return wording.unbound.format(action=call.action, name=name, words=words, var=arg.name)
    return None


def checked_step(call: Call, space: ActionSpace, wording: CallWording,
                 run: Callable[[Call], StepResult]) -> StepResult:
    """`run(call)` when the call passes `call_problem`, else a failed StepResult with the reason."""
    problem = call_problem(call, space, wording)
    return StepResult(False, problem) if problem is not None else run(call)


class CheckedEnv:
    """Any Environment with its calls checked against `space` first (see the module docstring)."""

    def __init__(self, env: Environment, space: ActionSpace, wording: CallWording = CallWording()) -> None:
        self.env = env
        self.space = space
        self.wording = wording

    @property
    def unwrapped(self) -> Environment:
        """The environment inside every CheckedEnv layer."""
        env = self.env
        return env.unwrapped if isinstance(env, CheckedEnv) else env

    def reset(self, task: Any = None) -> str:
        return self.env.reset(task)

    def step(self, call: Call) -> StepResult:
        return checked_step(call, self.space, self.wording, self.env.step)

    def holds(self, condition: Condition) -> bool:
        return self.env.holds(condition)

    def describe(self, near: str | None = None) -> str:
        return self.env.describe(near)

    def snapshot(self) -> dict:
        return self.env.snapshot()

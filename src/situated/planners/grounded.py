"""Grounded decoding (beyond the paper): check each generated plan on a private copy of the scene before it
is accepted, and have the model rewrite it from the first action that would fail.

The planner writes a plan as usual. The verifier runs it on a shadow environment (the same scene and grounding
seed as the real one, symbolic assertion checks) and reports the failed actions. From the first failure on the
plan is rewritten: the statements before it are kept, a comment `# grab('salmon') is not possible: <reason>`
tells the model why, and decoding continues with the grammar forbidding the rejected call as the next
statement. At most `repairs` rewrites per plan; the last plan is kept whatever it does. The model still writes
every line; the simulator only says no, as a robot's own precondition checks would.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from situated.envs.base import Environment
from situated.interpreter import Limits, run
from situated.program import Program
from situated.trace import StepEvent

DEFAULT_REPAIRS = 5
"""Rewrites per plan that `situated plan` and `situated eval progprompt` allow unless told otherwise."""

Verifier = Callable[[Program], Sequence[StepEvent]]
"""Runs a plan on a shadow environment; returns its failed actions in order (empty when all succeed)."""


def simulator_verifier(env: Environment, *, limits: Limits | None = None) -> Verifier:
    """A verifier that resets `env` (a private copy of the scene, never the one the episode runs on) and runs
    the plan on it with symbolic assertion checks."""
    limits = replace(limits or Limits(), stop_on_failure=False)

    def verify(program: Program) -> list[StepEvent]:
        env.reset()
        return [e for e in run(program, env, limits=limits).steps if not e.ok]

    return verify


def rejection_comment(call: str, reason: str) -> str:
    """The comment that tells the model a call it wrote is not possible, and why."""
    return f"{call} is not possible: {reason}".replace("\n", " ")

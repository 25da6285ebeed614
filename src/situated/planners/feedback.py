"""What a planner is told when its plan does not work: grounded decoding's rejections and replanning's failures.

Grounded decoding (beyond the paper) checks each generated plan on a private copy of the scene before it is
accepted: a `Verifier` runs the plan there and returns its failed actions; the planner keeps the statements
before the first failure, shows the model a comment `# grab('salmon') is not possible: <reason>` and has it
write a replacement (the grammar forbidding the rejected call there), at most `max_repairs` times per plan.
Replanning happens after a real failure: the lines run so far plus `# the action grab('salmon') failed:
<reason>` start the function again and the model writes a new remainder. The episode runner (eval/) makes
the verifier and drives replanning; planners only turn this feedback into prompts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..program import Condition, Program
from ..trace import StepEvent

DEFAULT_REPAIRS = 5
"""Rewrites per plan that `situated plan` and `situated eval progprompt` allow unless told otherwise."""

class Verifier(Protocol):
    """Runs a plan on a shadow environment (a private copy of the scene)."""

    def __call__(self, program: Program) -> Sequence[StepEvent]:
        """The plan's failed actions in order (empty when all succeed)."""

    def unmet(self, goals: Sequence[Condition]) -> list[Condition]:
        """Of `goals`, those that do not hold where the last plan run left the copy of the scene."""

    def steps(self, program: Program) -> Sequence[StepEvent]:
        """Every attempted action of the plan on the copy of the scene, in order, with its changes."""


def goal_comment(goal: str) -> str:
    """The comment that tells the model a goal it stated does not hold at the end of its plan."""
    return f"the goal {goal} does not hold yet"


def rejection_comment(call: str, reason: str) -> str:
    """The comment that tells the model a call it wrote is not possible, and why."""
    return f"{call} is not possible: {reason}".replace("\n", " ")


def failure_comment(call: str, reason: str) -> str:
    """The comment that tells the model which action failed and why."""
    return f"the action {call} failed: {reason}".replace("\n", " ")

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

from collections.abc import Callable, Sequence

from ..program import Program
from ..trace import StepEvent

DEFAULT_REPAIRS = 5
"""Rewrites per plan that `situated plan` and `situated eval progprompt` allow unless told otherwise."""

Verifier = Callable[[Program], Sequence[StepEvent]]
"""Runs a plan on a shadow environment; returns its failed actions in order (empty when all succeed)."""


def rejection_comment(call: str, reason: str) -> str:
    """The comment that tells the model a call it wrote is not possible, and why."""
    return f"{call} is not possible: {reason}".replace("\n", " ")


def failure_comment(call: str, reason: str) -> str:
    """The comment that tells the model which action failed and why."""
    return f"the action {call} failed: {reason}".replace("\n", " ")

"""Replanning after a failed action (beyond the paper): stop at the failure, tell the model, run its new
remainder.

The plan runs with `stop_on_failure=True`. When an action fails, the lines run so far plus a comment `# the
action grab('salmon') failed: <reason>` become the start of the function, the model writes a revised
remainder, and execution continues on the same environment from the comment on. At most `replan` times per
episode; the last remainder runs to its end whatever fails. The episode's trace is the concatenation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, replace
from typing import Protocol

from situated.envs.base import Environment
from situated.interpreter import ConditionCheck, Limits, run, symbolic_check
from situated.planners.grounded import Verifier
from situated.planners.progprompt import PlanResult
from situated.program import Program
from situated.trace import Trace

DEFAULT_LIMITS = Limits()


class Replanner(Protocol):
    def replan(self, task_name: str, objects: Sequence[str], done: str, failure: str, *,
               affordances: Mapping[str, Set[str]] | None = None, verify: Verifier | None = None) -> PlanResult: ...


@dataclass(frozen=True)
class Execution:
    """What running a plan (with replanning) produced: the trace, the final text and every plan asked."""

    trace: Trace
    text: str
    plans: tuple[PlanResult, ...]

    @property
    def replans(self) -> int:
        return len(self.plans) - 1

    @property
    def dropped(self) -> int:
        return sum(p.dropped for p in self.plans)

    @property
    def repairs(self) -> int:
        return sum(p.repairs for p in self.plans)


def failure_comment(call: str, reason: str) -> str:
    """The comment that tells the model which action failed and why."""
    return f"the action {call} failed: {reason}".replace("\n", " ")


def execute(first: PlanResult, env: Environment, *, planner: Replanner | None = None, task_name: str = "",
            objects: Sequence[str] = (), replan: int = 0, check: ConditionCheck = symbolic_check,
            limits: Limits = DEFAULT_LIMITS, affordances: Mapping[str, Set[str]] | None = None,
            verify: Verifier | None = None) -> Execution:
    """Run `first.program` on `env` (already reset), replanning up to `replan` times after failed actions;
    `verify` is passed on to the replanner (grounded decoding of each revised remainder)."""
    if replan > 0 and planner is None:
        raise ValueError("replanning needs a planner")
    events = []
    plans = [first]
    program, text = first.program, first.text
    for attempt in range(replan + 1):
        last = attempt == replan
        trace = run(program, env, limits=replace(limits, stop_on_failure=not last), check=check)
        events += trace.events
        failure = trace.first_failure
        if last or failure is None or planner is None:
            break
        done = "\n".join(text.split("\n")[: failure.line])
        result = planner.replan(task_name, objects, done, failure_comment(failure.call, failure.reason),
                                affordances=affordances, verify=verify)
        plans.append(result)
        first_new = done.count("\n") + 2  # the line of the failure comment
        program = Program(tuple(s for s in result.program.body if s.line >= first_new), result.program.name)
        text = result.text
    return Execution(Trace(events), text, tuple(plans))

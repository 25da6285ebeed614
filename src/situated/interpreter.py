"""Run a Program against an Environment: the only place that drives an environment from a plan.

Nothing here executes model output: statements are data, each Call becomes one `env.step`. ProgPrompt's rules:
a comment opens a sub-goal with a cap on attempted steps; an assertion is checked and its recovery calls run only
when it fails; a failed action is recorded with its reason and execution continues (or stops, for replanning).
An operation budget bounds every run, whatever the program.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .envs.base import ConditionCheck, Environment, symbolic_check
from .program import (
    Assert,
    Call,
    Comment,
    Condition,
    For,
    If,
    Program,
    Statement,
    Var,
    call_text,
    condition_text,
)
from .trace import CheckEvent, Event, SkipEvent, StepEvent, StopEvent, SubgoalEvent, Trace


@dataclass(frozen=True)
class Limits:
    """Bounds of one run: attempted steps per sub-goal (ProgPrompt: 10) and total operations."""

    subgoal_steps: int = 10
    operations: int = 2000
    stop_on_failure: bool = False


class _Stop(Exception):
    def __init__(self, reason: str, line: int) -> None:
        self.reason = reason
        self.line = line


class _Run:
    def __init__(self, env: Environment, limits: Limits, check: ConditionCheck,
                 on_event: Callable[[Event], None] | None) -> None:
        self.env, self.limits, self.check, self.on_event = env, limits, check, on_event
        self.trace = Trace()
        self.subgoal = 0
        self.subgoal_steps = 0
        self.operations = 0

    def emit(self, event: Event) -> None:
        self.trace.add(event)
        if self.on_event is not None:
            self.on_event(event)

    def tick(self, line: int) -> None:
        self.operations += 1
        if self.operations > self.limits.operations:
            raise _Stop(f"operation budget of {self.limits.operations} spent", line)

    def block(self, body: tuple[Statement, ...], env_vars: Mapping[str, str]) -> None:
        for stmt in body:
            self.statement(stmt, env_vars)

    def statement(self, stmt: Statement, bound: Mapping[str, str]) -> None:
        if isinstance(stmt, Comment):
            self.tick(stmt.line)
            self.subgoal += 1
            self.subgoal_steps = 0
            self.emit(SubgoalEvent(self.subgoal, stmt.text, stmt.line))
        elif isinstance(stmt, Call):
            self.call(stmt, bound, recovery=False)
        elif isinstance(stmt, Assert):
            if not self.condition(stmt.condition, bound, stmt.line, "assert"):
                for call in stmt.recovery:
                    self.call(call, bound, recovery=True)
        elif isinstance(stmt, If):
            held = self.condition(stmt.condition, bound, stmt.line, "if")
            self.block(stmt.then if held else stmt.otherwise, bound)
        elif isinstance(stmt, For):
            for item in stmt.items:
                self.tick(stmt.line)
                self.block(stmt.body, {**bound, stmt.var: item})
        else:  # pragma: no cover - the AST is closed
            raise TypeError(f"unknown statement {stmt!r}")

    def condition(self, cond: Condition, bound: Mapping[str, str], line: int, statement: str) -> bool:
        self.tick(line)
        grounded = Condition(cond.kind, _bind(cond.args, bound, line), cond.negated)
        held = bool(self.check(grounded, self.env))
        self.emit(CheckEvent(condition_text(grounded), held, line, statement))
        return held

    def call(self, call: Call, bound: Mapping[str, str], *, recovery: bool) -> None:
        self.tick(call.line)
        grounded = Call(call.action, _bind(call.args, bound, call.line), call.line, call.col)
        text = call_text(grounded)
        if self.subgoal_steps >= self.limits.subgoal_steps:
            self.emit(SkipEvent(text, f"sub-goal step cap of {self.limits.subgoal_steps} reached",
                                call.line, self.subgoal))
            return
        self.subgoal_steps += 1
        result = self.env.step(grounded)
        self.emit(StepEvent(text, result.ok, result.reason, tuple(result.changes), call.line, self.subgoal, recovery))
        if not result.ok and self.limits.stop_on_failure:
            raise _Stop(f"stopped at failed action {text}: {result.reason}", call.line)


def _bind(args: tuple, bound: Mapping[str, str], line: int) -> tuple[str, ...]:
    out = []
    for arg in args:
        if isinstance(arg, Var):
            if arg.name not in bound:
                raise _Stop(f"unbound loop variable {arg.name!r}", line)
            out.append(bound[arg.name])
        else:
            out.append(arg)
    return tuple(out)


def interpret(program: Program, env: Environment, *, limits: Limits = Limits(),
              condition_check: ConditionCheck = symbolic_check,
              on_event: Callable[[Event], None] | None = None) -> Trace:
    """Interpret `program` on `env` (already reset) and return its Trace; `condition_check` judges assertions
    and `if` conditions; `on_event` sees each event as it happens."""
    state = _Run(env, limits, condition_check, on_event)
    try:
        state.block(program.body, {})
    except _Stop as stop:
        state.emit(StopEvent(stop.reason, stop.line))
    return state.trace

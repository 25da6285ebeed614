"""The Environment conformance kit: what every world must do to be driven by the interpreter and the episodes.

`check_environment(env, calls=..., condition=...)` raises `NonConformance` (an AssertionError) naming the first
broken rule. It checks the protocol's members and their types, that `reset` rewinds (the same calls after a reset
give the same results and state), that a refused call says why and changes nothing (unknown action, one argument
too many, an unbound loop variable), that `snapshot` is JSON data, and that `holds` honours negation.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from situated.envs.base import Environment, StepResult
from situated.program import Call, Condition, Var

UNKNOWN_ACTION = "no_such_action_xyz"


class NonConformance(AssertionError):
    """An environment breaks the protocol; the message names the rule."""


def _require(ok: bool, rule: str) -> None:
    if not ok:
        raise NonConformance(rule)


def _json(snapshot: Any) -> Any:
    """The snapshot as JSON data (a round trip), or NonConformance."""
    _require(isinstance(snapshot, dict), f"snapshot() must return a dict, got {type(snapshot).__name__}")
    try:
        return json.loads(json.dumps(snapshot, sort_keys=True))
    except (TypeError, ValueError) as exc:
        raise NonConformance(f"snapshot() must be JSON data: {exc}") from None


def _same(a: Any, b: Any, tolerance: float) -> bool:
    """Equal JSON data, numbers within `tolerance`."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], tolerance) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y, tolerance) for x, y in zip(a, b, strict=True))
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        return abs(a - b) <= tolerance
    return a == b


def _step(env: Environment, call: Call) -> StepResult:
    result = env.step(call)
    _require(isinstance(result, StepResult), f"step({call.action}) must return a StepResult, got {result!r:.60}")
    _require(isinstance(result.ok, bool) and isinstance(result.reason, str), "StepResult.ok/reason: bool/str")
    _require(all(isinstance(c, str) for c in result.changes), "StepResult.changes must be strings")
    _require(result.ok or bool(result.reason), f"a failed step must say why: step({call.action}) gave no reason")
    return result


def _refused(env: Environment, call: Call, what: str, task: Any) -> None:
    env.reset(task)
    before = _json(env.snapshot())
    result = _step(env, call)
    _require(not result.ok, f"{what} must be refused: step({call}) succeeded")
    _require(_json(env.snapshot()) == before, f"{what} must leave the state as it was")


def check_environment(env: Environment, *, calls: Sequence[Call], condition: Condition, task: Any = None,
                      corrects_unknown: bool = False, tolerance: float = 0.0) -> None:
    """Check `env` against the Environment protocol; `calls` is a short valid episode (at least one call with
    objects unless the world takes none), `condition` one it can judge, `task` what `reset` takes.
    `corrects_unknown`: the world turns an unknown action into a known one (VELMA's streets) instead of refusing.
    `tolerance`: how far numbers in the state of a repeated episode may drift (a physics engine's contact caches
    are not part of its saved state: pybullet's repeated episodes agree to about 1e-3, not exactly)."""
    _require(isinstance(env, Environment), "must implement reset, step, holds, describe and snapshot")
    first = env.reset(task)
    _require(isinstance(first, str), f"reset() must return the first observation as text, got {first!r:.60}")
    start = _json(env.snapshot())
    _require(isinstance(env.describe(), str), "describe() must return text")
    results = [_step(env, call) for call in calls]
    _require(any(r.ok for r in results), "the valid calls given must run")
    after = _json(env.snapshot())
    _require(isinstance(env.holds(condition), bool), "holds() must return a bool")
    negated = Condition(condition.kind, condition.args, not condition.negated)
    _require(env.holds(negated) != env.holds(condition), "holds() must honour negation")

    env.reset(task)
    _require(_json(env.snapshot()) == start, "reset() must restore the initial state")
    again = [_step(env, call) for call in calls]
    _require(again == results, "the same calls after reset() must give the same results")
    _require(_same(_json(env.snapshot()), after, tolerance), "the same calls after reset() must reach the same state")

    if not corrects_unknown:
        _refused(env, Call(UNKNOWN_ACTION, calls[0].args), "an unknown action", task)
    _refused(env, Call(calls[0].action, (*calls[0].args, "extra")), "a call with one argument too many", task)
    with_objects = next((c for c in calls if c.args), None)
    if with_objects is not None:
        unbound = Call(with_objects.action, (Var("item"), *with_objects.args[1:]))
        _refused(env, unbound, "a call with an unbound loop variable", task)

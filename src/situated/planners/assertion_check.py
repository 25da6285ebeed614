"""Checking a plan's assertions: exactly against the scene (`symbolic`) or by asking the LLM (`llm`, the
paper's way).

The LLM check is a few-shot True/False prompt: a "You see: ..." description of what is around the agent (for
`'close' to` and `in 'hands'`) or of the asserted object (states, `in`, `on`), then the assertion. The answer
is constrained to `True` or `False` by a one-line grammar.
"""

from __future__ import annotations

from ..envs.base import ConditionCheck, Environment, symbolic_check
from ..errors import SituatedError
from ..llm.base import LLM
from ..program import Condition, condition_text

BOOL_GRAMMAR = 'root ::= " "? ("True" | "False")\n'
"""GBNF for a one-word True/False answer, optionally after a space."""

ASSERT_CHECKS: tuple[str, ...] = ("symbolic", "llm")

_SHOTS = """\
Decide whether each assertion about a household robot's situation is true, given what the robot sees.

You see: remotecontrol (on sofa), tv (off, on tvstand). You are in the livingroom, holding nothing.
assert('close' to 'tv')
Answer: True

You see: bed (on floor), pillow (on bed). You are in the bedroom, holding book.
assert('close' to 'bookshelf')
Answer: False

You see: garbagecan (closed); inside garbagecan: paper.
assert('garbagecan' is 'opened')
Answer: False

You see: stove (off); on stove: fryingpan.
assert('stove' is 'switchoff')
Answer: True

You see: sink (on bathroomcounter). You are in the bathroom, holding toothbrush, toothpaste.
assert('toothbrush' in 'hands')
Answer: True

You see: kitchentable (on floor). You are in the kitchen, holding nothing.
assert('plate' in 'hands')
Answer: False

You see: fridge (open); inside fridge: milk, salmon.
assert('salmon' in 'fridge')
Answer: True

You see: plate (on kitchencounter).
assert('plate' on 'kitchentable')
Answer: False

"""


def llm_check_prompt(condition: Condition, env: Environment) -> str:
    """The few-shot prompt asking whether `condition` holds in `env`'s current state."""
    if condition.kind in ("close", "holds"):
        seen = env.describe()
    else:
        first = condition.args[0]
        seen = env.describe(near=first if isinstance(first, str) else None)
    return f"{_SHOTS}{seen}\nassert({condition_text(condition)})\nAnswer:"


class LLMAssertionCheck:
    """An interpreter condition check that asks an LLM (True/False under a grammar); counts its calls."""

    def __init__(self, llm: LLM, *, constrained: bool = True) -> None:
        self.llm = llm
        self.constrained = constrained
        self.calls = 0

    def __call__(self, condition: Condition, env: Environment) -> bool:
        self.calls += 1
        completion = self.llm.complete(llm_check_prompt(condition, env), stop=("\n",), max_tokens=3,
                                       temperature=0.0, grammar=BOOL_GRAMMAR if self.constrained else None)
        return completion.text.strip().lower().startswith("true")


def assertion_check(kind: str, llm: LLM | None = None) -> ConditionCheck:
    """The check called `kind`: `symbolic` (exact, the default) or `llm` (needs `llm`)."""
    if kind == "symbolic":
        return symbolic_check
    if kind == "llm":
        if llm is None:
            raise SituatedError("the llm assertion check needs a model")
        return LLMAssertionCheck(llm)
    raise SituatedError(f"unknown assertion check {kind!r} (choose from {', '.join(ASSERT_CHECKS)})")

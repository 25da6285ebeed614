"""Plan programs: the statements a planner may write, as plain data that is interpreted, never executed.

Statements: `Call` (an action on object names), `Comment` (a `# n: sub-goal` line), `Assert` (a condition with
recovery calls run when it fails), and the bounded extensions `If` and `For` (a loop over a literal list).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

HANDS = "hands"
"""The word that stands for the agent's hands in `X in 'hands'`; never an object name."""


@dataclass(frozen=True)
class Var:
    """A reference to the loop variable of an enclosing `For` (e.g. `grab(item)`)."""

    name: str


Arg = str | Var

# close:  ('close' to X)          args = (X,)
# state:  (X is 'opened')          args = (X, state)  state: opened/closed/switchon/switchoff/... (lower case)
# holds:  (X in 'hands')           args = (X,)
# inside: (X in Y)                 args = (X, Y)
# on:     (X on Y)                 args = (X, Y)
ConditionKind = Literal["close", "state", "holds", "inside", "on"]


@dataclass(frozen=True)
class Condition:
    """A checkable fact about the scene, written by a plan in an `assert` or `if`."""

    kind: ConditionKind
    args: tuple[Arg, ...]
    negated: bool = False


@dataclass(frozen=True)
class Call:
    """One action with its object arguments; `line`/`col` locate it in the source (1-based; 0: synthetic)."""

    action: str
    args: tuple[Arg, ...] = ()
    line: int = 0
    col: int = 0


@dataclass(frozen=True)
class Comment:
    """A comment line; in ProgPrompt each comment opens a new sub-goal."""

    text: str
    line: int = 0


@dataclass(frozen=True)
class Assert:
    """Check `condition`; when it does not hold, run `recovery` (the `else:` lines) in order."""

    condition: Condition
    recovery: tuple[Call, ...] = ()
    line: int = 0


@dataclass(frozen=True)
class If:
    """Run `then` when `condition` holds, else `otherwise` (extension beyond ProgPrompt)."""

    condition: Condition
    then: tuple[Statement, ...]
    otherwise: tuple[Statement, ...] = ()
    line: int = 0


@dataclass(frozen=True)
class For:
    """Run `body` once per literal item, binding `var` (extension beyond ProgPrompt; bounded by design)."""

    var: str
    items: tuple[str, ...]
    body: tuple[Statement, ...]
    line: int = 0


Statement = Call | Comment | Assert | If | For


@dataclass(frozen=True)
class Program:
    """A parsed plan: an optional function name (`def name():`) and its statements."""

    body: tuple[Statement, ...]
    name: str | None = None

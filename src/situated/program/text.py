"""Canonical text of plan programs: what formatting writes and every message quotes."""

from __future__ import annotations

from .syntax import Arg, Assert, Call, Comment, Condition, For, If, Program, Statement, Var


def _arg_text(arg: Arg) -> str:
    return arg.name if isinstance(arg, Var) else f"'{arg}'"


def call_text(call: Call) -> str:
    """One call in canonical form: `putin('lime', 'garbagecan')`."""
    return f"{call.action}({', '.join(_arg_text(a) for a in call.args)})"


def condition_text(cond: Condition) -> str:
    """A condition in canonical form, without outer parentheses: `'close' to 'lime'`, `not 'x' in 'hands'`."""
    args = [_arg_text(a) for a in cond.args]
    if cond.kind == "close":
        text = f"'close' to {args[0]}"
    elif cond.kind == "state":
        text = f"{args[0]} is {args[1]}"
    elif cond.kind == "holds":
        text = f"{args[0]} in 'hands'"
    elif cond.kind == "inside":
        text = f"{args[0]} in {args[1]}"
    else:
        text = f"{args[0]} on {args[1]}"
    return f"not {text}" if cond.negated else text


def format_program(program: Program, *, indent: str = "\t") -> str:
    """Canonical text of `program`: parsing it gives the same program back (line numbers aside)."""
    lines: list[str] = []
    depth = 0
    if program.name is not None:
        lines.append(f"def {program.name}():")
        depth = 1
    _format_block(program.body, depth, indent, lines, allow_empty=True)
    return "\n".join(lines) + "\n"


def _format_block(body: tuple[Statement, ...], depth: int, indent: str, lines: list[str],
                  allow_empty: bool = False) -> None:
    pad = indent * depth
    if not body and not allow_empty:
        lines.append(f"{pad}pass")
    for statement in body:
        if isinstance(statement, Comment):
            lines.append(f"{pad}# {statement.text}".rstrip())
        elif isinstance(statement, Call):
            lines.append(pad + call_text(statement))
        elif isinstance(statement, Assert):
            lines.append(f"{pad}assert({condition_text(statement.condition)})")
            lines.extend(f"{pad}{indent}else: {call_text(c)}" for c in statement.recovery)
        elif isinstance(statement, If):
            lines.append(f"{pad}if {condition_text(statement.condition)}:")
            _format_block(statement.then, depth + 1, indent, lines)
            if statement.otherwise:
                lines.append(f"{pad}else:")
                _format_block(statement.otherwise, depth + 1, indent, lines)
        elif isinstance(statement, For):
            items = ", ".join(f"'{item}'" for item in statement.items)
            lines.append(f"{pad}for {statement.var} in [{items}]:")
            _format_block(statement.body, depth + 1, indent, lines)
        else:
            raise TypeError(f"not a plan statement: {statement!r}")

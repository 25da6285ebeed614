"""The plan language: syntax tree, parser, canonical text, validation, decoding grammar, and reading model text.

Plans are data that the interpreter walks; nothing here (or anywhere) executes, evaluates or compiles them.
"""

from .parser import DANGEROUS_NAMES, parse
from .syntax import HANDS, Arg, Assert, Call, Comment, Condition, ConditionKind, For, If, Program, Statement, Var
from .text import call_text, condition_text, format_program
from .validation import require_valid, validate

__all__ = [
    "DANGEROUS_NAMES",
    "HANDS",
    "Arg",
    "Assert",
    "Call",
    "Comment",
    "Condition",
    "ConditionKind",
    "For",
    "If",
    "Program",
    "Statement",
    "Var",
    "call_text",
    "condition_text",
    "format_program",
    "parse",
    "require_valid",
    "validate",
]

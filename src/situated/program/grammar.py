"""Decoding grammars (llama.cpp GBNF) built from an ActionSpace and a scene's objects.

Under `plan_grammar` every generated line is a valid ProgPrompt plan line: a known action with the right
number of known objects, a `# ...` comment, or an assertion followed by tab-tab-indented `else: action(...)`
recovery lines. The grammar starts right after an open function header (`def task():\n\t`, so the first
statement carries no tab of its own), every line ends with a newline, and the function ends either where the
model stops (end of generation is allowed after any complete line) or with one blank line, after which nothing
but the end may follow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set

from ..actions import ActionSpace
from .syntax import HANDS

ASSERT_STATES: tuple[str, ...] = ("switchoff", "switchon", "opened", "closed")
"""The states an `is` assertion may name (those of ProgPrompt's examples)."""


def gbnf_literal(text: str) -> str:
    """`text` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def _alternatives(words: Sequence[str]) -> str:
    # Longest first, then alphabetical: no alternative is a prefix of one tried before it.
    ordered = sorted(dict.fromkeys(words), key=lambda w: (-len(w), w))
    return " | ".join(gbnf_literal(w) for w in ordered)


def plan_objects(objects: Sequence[str]) -> list[str]:
    """The object names a plan may quote: non-empty, without quotes or line breaks, not the word 'hands'."""
    return [o for o in dict.fromkeys(objects)
            if o and not any(c in o for c in "'\"\\\n\t") and o != HANDS]


def _object_rule(affords: tuple[str, ...]) -> str:
    return "obj" if not affords else "obj-" + "-".join(a.lower().replace("_", "") for a in sorted(affords))


def plan_grammar(space: ActionSpace, objects: Sequence[str], *, comments: bool = True, asserts: bool = True,
                 affordances: Mapping[str, Set[str]] | None = None,
                 one_statement: bool = False, exclude: Sequence[tuple[str, tuple[str, ...]]] = (),
                 exclude_actions: Set[str] = frozenset()) -> str:
    """GBNF for the body of one plan function over `space`'s actions and the given `objects`.

    `comments=False` / `asserts=False` leave comment lines / assertions out (the ablations of the prompt).
    With `affordances` (object name -> its properties, e.g. the scene's), a parameter that needs a property
    (`grab` needs GRABBABLE, `open` CAN_OPEN, ...) only admits objects that have it, and an action no object
    affords is left out: the plan cannot ask for what the scene cannot do.
    ValueError when there is no object while some action needs one.
    """
    names = plan_objects(objects)
    if not names and any(action.arity > 0 for action in space):
        raise ValueError("a plan grammar needs at least one object for actions that take objects")

    object_rules: dict[str, list[str]] = {"obj": names}
    by_signature: dict[tuple[str, ...], list[str]] = {}
    for action in space:
        signature = []
        for param in action.params:
            rule = _object_rule(param.affords) if affordances is not None else "obj"
            if rule not in object_rules:
                object_rules[rule] = [n for n in names if set(param.affords) & set(affordances.get(n, ()))]
            signature.append(rule)
        if all(object_rules[r] for r in signature):
            by_signature.setdefault(tuple(signature), []).append(action.name)

    rules: list[str] = []
    calls: list[str] = []
    groups = sorted(by_signature.items(), key=lambda kv: (len(kv[0]), kv[0]))
    for k, (signature, actions) in enumerate(groups):
        args = ' ", " '.join(signature)
        rules.append(f"call{k} ::= ({_alternatives(actions)}) \"(\" {args} \")\"")
        calls.append(f"call{k}")
    comment = '"#" [^\\n]* "\\n"'
    stmts = ["call eol"]
    if comments:
        stmts.append(comment)
    if asserts:
        stmts.append("assert eol recovery+")
    head = [
        "root ::= stmt (\"\\t\" stmt)* \"\\n\"?",
        f"stmt ::= {' | '.join(stmts)}",
        f"call ::= {' | '.join(calls)}",
    ]
    if one_statement:
        firsts = ["callfirst eol"] + (["assert eol recovery"] if asserts else [])
        head[0] = "root ::= first | \"\\n\""
        head.insert(1, f"first ::= {' | '.join(firsts)}")
        first_calls, extra = _calls_excluding(groups, object_rules, exclude, exclude_actions)
        head.insert(2, f"callfirst ::= {' | '.join(first_calls) or gbnf_literal('')}")
        rules += extra
    if asserts:
        states = _alternatives([f"'{s}'" for s in ASSERT_STATES])
        head += [
            "recovery ::= \"\\t\\telse: \" call eol",
            "assert ::= \"assert(\" cond \" \"? \")\"",
            "cond ::= \"'close' to \" obj | obj \" is \" state | obj \" in 'hands'\" | obj \" in \" obj"
            " | obj \" on \" obj",
            f"state ::= {states}",
        ]
    tail = ['eol ::= (" " " "?)? "\\n"']
    used = {"obj"} | {r for signature in by_signature for r in signature}
    for rule in sorted(used):
        words = object_rules[rule]
        tail.append(f"{rule} ::= \"'\" ({_alternatives(words)}) \"'\"" if words else f"{rule} ::= \"''\"")
    return "\n".join(head + rules + tail) + "\n"


def _calls_excluding(groups: Sequence[tuple[tuple[str, ...], list[str]]], object_rules: Mapping[str, list[str]],
                     excluded: Sequence[tuple[str, tuple[str, ...]]],
                     excluded_actions: Set[str]) -> tuple[list[str], list[str]]:
    """Alternatives for one call that is none of `excluded` nor uses `excluded_actions`, and the extra rules
    they need."""
    banned: dict[str, set[tuple[str, ...]]] = {}
    for action, args in excluded:
        banned.setdefault(action, set()).add(tuple(args))
    alternatives: list[str] = []
    extra: list[str] = []
    for k, (signature, all_actions) in enumerate(groups):
        actions = [a for a in all_actions if a not in excluded_actions]
        free = [a for a in actions if a not in banned]
        if free:
            args = ' ", " '.join(signature)
            alternatives.append(f"({_alternatives(free)}) \"(\" {args} \")\"")
        for action in sorted(set(actions) & banned.keys()):
            sets = [object_rules[r] for r in signature]
            body = _tuples_excluding(sets, banned[action])
            if body:
                name = f"ex{k}-{len(extra)}"
                extra.append(f"{name} ::= {body}")
                alternatives.append(f"{gbnf_literal(action + '(')} {name} \")\"")
    return alternatives, extra


def _tuples_excluding(sets: Sequence[Sequence[str]], banned: Set[tuple[str, ...]]) -> str:
    """GBNF for quoted, comma-separated tuples from `sets[0] × sets[1] × ...` that are not in `banned`
    (empty when none is left)."""
    if not sets:
        return "" if () in banned else '""'
    quoted = [f"'{w}'" for w in sets[0]]
    heads = {t[0] for t in banned if t}
    sep = ' ", " ' if len(sets) > 1 else " "
    rest_all = _tuples_excluding(sets[1:], set()) if len(sets) > 1 else ""
    parts = []
    free = [q for w, q in zip(sets[0], quoted, strict=True) if w not in heads]
    if free:
        parts.append(f"({_alternatives(free)})" + (sep + f"({rest_all})" if len(sets) > 1 else ""))
    for w in sorted(heads & set(sets[0])):
        rest = _tuples_excluding(sets[1:], {t[1:] for t in banned if t and t[0] == w})
        if rest:
            parts.append(gbnf_literal(f"'{w}'") + (sep + f"({rest})" if len(sets) > 1 else ""))
    return " | ".join(parts)

"""EAI's decoding grammars: GBNF that admits only a JSON dictionary of the prompt's actions (those EAI's evaluator
accepts), each with its number of objects, over the objects the prompt lists (with their ids for 1.0.5), never the
character. With `typed=True` a parameter that VirtualHome's executor checks for a property only admits objects the
prompt shows with it; `approach_grammar` also tracks where the character is (what VirtualHome's executor checks
before an action), and grounded rewrites exclude the calls rejected at their place.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence

from situated.actions import VIRTUALHOME_SPACE
from situated.datasets.eai_actions import (
    CHARACTER,
    EaiAction,
    EaiObject,
    EaiTask,
    check_protocol,
    supported_actions,
)
from situated.planners.eai_answers import Call, args_text
from situated.program.grammar import gbnf_literal

DEFAULT_MAX_STEPS = 40
"""Steps per answer the grammar admits: a cost guard against small models repeating one step to the token cap."""


# ---------------------------------------------------------------------------------------------- grammar

def task_actions(task: EaiTask, protocol: str) -> tuple[EaiAction, ...]:
    """The actions an answer may use: the prompt's list, less those EAI's evaluator does not accept."""
    return supported_actions(task.prompt(protocol))


_MORE_NEEDS: dict[str, tuple[tuple[str, ...], ...]] = {"greet": (("PERSON",),)}
"""Checks of VirtualHome's executor that `VIRTUALHOME_SPACE` does not type: GreetExecutor requires PERSON."""


def _needs(action: str) -> tuple[tuple[str, ...], ...]:
    """The property each parameter needs (any of them; empty: any object), as VirtualHome's executor checks."""
    name = action.lower()
    if name in _MORE_NEEDS:
        return _MORE_NEEDS[name]
    if name in VIRTUALHOME_SPACE:
        return tuple(p.affords for p in VIRTUALHOME_SPACE.get(name).params)
    return ()


def _candidates(task: EaiTask, protocol: str) -> list[EaiObject]:
    """Objects an answer may name: the listed ones but the character; for 1.0.4 one per name (the last listed)."""
    objects = [o for o in task.objects if o.name != CHARACTER and not any(c in o.name for c in '"\\\n')]
    if protocol == "1.0.4":
        last = {o.name: o for o in objects}
        objects = [o for o in objects if last[o.name] is o]
    return objects


def _literal(obj: EaiObject, protocol: str) -> str:
    return gbnf_literal(args_text((obj.name,), (obj.id,), protocol))


def _params(task: EaiTask, protocol: str, action: EaiAction, typed: bool) -> list[tuple[EaiObject, ...]]:
    objects = _candidates(task, protocol)
    needs = _needs(action.name) if typed else ()
    params = []
    for k in range(action.arity):
        need = needs[k] if k < len(needs) else ()
        params.append(tuple(o for o in objects if not need or set(need) & set(o.properties)))
    return params


def _alternatives(literals: Sequence[str]) -> str:
    return "(" + " | ".join(sorted(dict.fromkeys(literals), key=lambda s: (-len(s), s))) + ")"


def _call_bodies(task: EaiTask, protocol: str, actions: Sequence[EaiAction], typed: bool,
                 exclude: Collection[Call], exclude_actions: Collection[str]) -> list[str]:
    """GBNF bodies of `"ACTION": [args]`, one per action, leaving out excluded calls and actions."""
    bodies = []
    for action in actions:
        if action.name in exclude_actions:
            continue
        head = gbnf_literal(f"{json.dumps(action.name)}: [")
        params = _params(task, protocol, action, typed)
        if any(not p for p in params):
            continue   # an action no listed object affords
        banned = {ids for name, ids in exclude if name == action.name}
        if action.arity == 0:
            if () not in banned:
                bodies.append(f'{head} "]"')
            continue
        if action.arity == 1:
            allowed = [o for o in params[0] if (o.id,) not in banned]
            if allowed:
                bodies.append(f'{head} {_alternatives([_literal(o, protocol) for o in allowed])} "]"')
            continue
        # two objects: per first object, the seconds not banned with it
        free_first = [o for o in params[0] if not any(b[0] == o.id for b in banned)]
        seconds = _alternatives([_literal(o, protocol) for o in params[1]])
        if free_first:
            bodies.append(f'{head} {_alternatives([_literal(o, protocol) for o in free_first])} ", " {seconds} "]"')
        for first in params[0]:
            if first in free_first:
                continue
            rest = [o for o in params[1] if (first.id, o.id) not in banned]
            if rest:
                options = _alternatives([_literal(o, protocol) for o in rest])
                bodies.append(f'{head} {_literal(first, protocol)} ", " {options} "]"')
    return bodies


def answer_grammar(task: EaiTask, protocol: str, *, typed: bool = True, max_steps: int = DEFAULT_MAX_STEPS,
                   continuation: bool = False, exclude: Collection[Call] = (), exclude_actions: Collection[str] = (),
                   may_end: bool = True, approach: bool = False) -> str:
    """GBNF of an answer for `task` under `protocol`.

    Whole answer: `{`, newline, 1 to `max_steps` entries separated by `,` newline, newline `}`.
    `continuation=True`: the rest of an answer whose text so far ends with a line break (after kept entries and
    a `//` feedback line), at most `max_steps` entries: its first entry leaves out the `exclude`d calls and
    `exclude_actions`, and with `may_end` the answer may also end right there (`}`).
    `approach=True`: the prompt's own rule (walk to an object before acting on it) as a state machine over what
    the character is near (`approach_grammar`); whole answers only, the step count bounded by `max_tokens`.
    """
    check_protocol(protocol)
    actions = task_actions(task, protocol)
    if approach:
        if continuation:
            raise ValueError("approach=True writes whole answers only (open loop), not continuations")
        return approach_grammar(task, protocol, actions, typed=typed)
    entries = _call_bodies(task, protocol, actions, typed, (), ())
    if not entries:
        raise ValueError(f"task {task.task_id}: no action can be written over its objects")
    rules = ["entry ::= " + " | ".join(f"e{k}" for k in range(len(entries)))]
    rules += [f"e{k} ::= {body}" for k, body in enumerate(entries)]
    more = f'("," "\\n  " entry){{0,{max_steps - 1}}}' if max_steps > 1 else ""
    if not continuation:
        root = f'root ::= "{{\\n  " entry {more} "\\n}}"'
        return "\n".join([root, *rules]) + "\n"
    firsts = _call_bodies(task, protocol, actions, typed, exclude, exclude_actions)
    options = []
    if firsts and max_steps > 0:
        rules.append("first ::= " + " | ".join(f"f{k}" for k in range(len(firsts))))
        rules += [f"f{k} ::= {body}" for k, body in enumerate(firsts)]
        options.append(f'"  " first {more} "\\n}}"')
    if may_end or not options:
        options.append('"}"')
    return "\n".join(["root ::= " + " | ".join(options), *rules]) + "\n"


# ---------------------------------------------------------------------------------------------- approach

MOVES = frozenset({"WALK", "RUN", "FIND"})
"""Actions that bring the character close to their object (WalkExecutor; FindExecutor walks there first)."""
TURNS = frozenset({"TURNTO"})
"""Makes the character face its object (TurnToExecutor), without coming close."""
LOOKS = frozenset({"LOOKAT", "POINTAT", "WATCH"})
"""Need the character to FACE the object (`_is_character_face_to`), not to be close: only TURNTO (or sitting on
a seat that faces it) gives FACING; WALK deletes it."""
SEATS = frozenset({"SIT", "LIE"})
"""Need closeness, then the character is sitting/lying: WalkExecutor refuses to walk, and EAI's parser drops the
zero-argument STANDUP (docs/eai.md, trap 2), so under EAI a seated character never moves again."""
NEAR = frozenset({"GRAB", "OPEN", "CLOSE", "SWITCHON", "SWITCHOFF", "WIPE", "TOUCH", "TYPE", "PUSH", "PULL", "MOVE",
                  "WASH", "RINSE", "SCRUB", "SQUEEZE", "CUT", "EAT", "PLUGIN", "PLUGOUT"}) | SEATS
"""Check `_is_character_close_to(object)` in VirtualHome's executor (virtualhome_eval's evolving graph)."""
NEAR_DESTINATION = frozenset({"PUTBACK", "PUTIN", "POUR"})
"""Check closeness to the destination (second object); the first must be held (`_find_holding_hand`)."""
APPROACH = "near+held"
"""What `approach_grammar` tracks, as a results store records it (stores of the first grammar, which did not
track holding, recorded `true`)."""
APPROACH_FIRST = APPROACH + ", first answer"
"""A grounded run's record of the approach grammar: it writes the first answer; rewrites use the plain grammar."""
HOLDING = frozenset({"DRINK", "READ", "DROP", "PUTON"})
"""Need their object in a hand (`_find_holding_hand`, `check_drop`, `check_puton`), as NEAR_DESTINATION's first
object does; no EAI task starts with the character holding anything, so only what the answer grabbed."""
_MANY = -1
"""`approach_grammar`'s copy for more than one object grabbed."""
ROOMS = frozenset({"bathroom", "bedroom", "kitchen", "living_room", "livingroom", "dining_room", "home_office"})
"""Walking to a room brings the character close to nothing (WalkExecutor adds CLOSE only for non-room nodes)."""


def approach_grammar(task: EaiTask, protocol: str, actions: Sequence[EaiAction] | None = None, *,
                     typed: bool = True) -> str:
    """GBNF of a whole answer that acts only on what the character has approached or grabbed (EAI's notes 5, 8).

    A regular state machine, one pair of rules per state (`q ::= steps allowed there`, `q-next ::= end | , q`):
    `start` (standing, close to nothing known, also after walking to a room), `n<i>` (standing, close to object
    i: after WALK/RUN/FIND to it), `f<i>` (standing, facing i: after TURNTO; where it was close is forgotten),
    `s<i>` (sitting/lying on i: no more movement, see SEATS), `t<i>` / `tnone` (seated, facing i / facing
    nothing lookable). NEAR actions take only the object close by, NEAR_DESTINATION only it as destination,
    LOOKS only the object faced. What was grabbed is a second component, one copy of the states each: nothing
    (no suffix; no HOLDING action, no NEAR_DESTINATION), one object g (`-g<g>`: those take g only), or more than
    one (`-gm`: they take any object, as typed). GRAB on a close object moves between the copies. Releases are
    not tracked (a dropped cup still counts as grabbed), so the grammar never refuses a plan the executor could
    run. GREET and PUTOFF (nothing checked) take any object. STANDUP is left out: EAI's parser drops it. Shared
    rules (`go`, `turn`, per copy) keep each copy linear in the objects; the step count is bounded by
    `max_tokens` only.
    """
    check_protocol(protocol)
    actions = [a for a in (task_actions(task, protocol) if actions is None else actions) if a.arity > 0]
    objects = _candidates(task, protocol)
    literal = {o.id: _literal(o, protocol) for o in objects}
    admits = {a.name: [{o.id for o in p} for p in _params(task, protocol, a, typed)] for a in actions}

    def heads(names: Collection[str], k: int, i: int) -> list[str]:
        return [gbnf_literal(f"{json.dumps(a.name)}: [") for a in actions
                if a.name in names and a.arity == k + 1 and i in admits[a.name][k]]

    rules: dict[str, str] = {}
    shared: dict[str, str] = {}   # alternatives of action heads -> the rule that spells them (h0, h1, ...)

    def head_rule(found: list[str]) -> str:
        return shared.setdefault(_alternatives(found), f"h{len(shared)}")

    def on(names: Collection[str], i: int) -> str | None:
        found = heads(names, 0, i)
        return f'{head_rule(found)} {literal[i]} "]"' if found else None

    bodies: dict[str, list[str]] = {}   # state -> options (each: a step, then the state's continuation)
    ids = [o.id for o in objects]
    rooms = {o.id for o in objects if o.name in ROOMS}
    look = {i: on(LOOKS, i) for i in ids}
    grabbable = [i for i in ids if heads({"GRAB"}, 0, i)]
    free_names = {a.name for a in actions} - MOVES - TURNS - LOOKS - NEAR - NEAR_DESTINATION - HOLDING
    free = _call_bodies(task, protocol, [a for a in actions if a.name in free_names], typed, (), ())
    if free:
        rules["free"] = " | ".join(f"({b})" for b in free)

    def copy(held: int | None) -> None:
        """The states (and their shared rules) while nothing (None), object `held`, or more (_MANY) was grabbed."""
        k = "" if held is None else "-gm" if held == _MANY else f"-g{held}"

        def holdable(candidates: Collection[int]) -> list[int]:
            return [] if held is None else [i for i in ids if i in candidates and held in (_MANY, i)]

        def grabbed(i: int) -> str:
            """The copy after GRAB i."""
            return f"-g{i}" if held is None else k if held in (_MANY, i) else "-gm"

        go = [f"({move}) {'start' if i in rooms else f'n{i}'}{k}-next" for i in ids
              if (move := on(MOVES, i)) is not None]
        faces = [(i, face) for i in ids if (face := on(TURNS, i)) is not None]
        turn = [f"({face}) {f'f{i}' if look[i] else 'start'}{k}-next" for i, face in faces]
        turn_seated = [f"({face}) {f't{i}' if look[i] else 'tnone'}{k}-next" for i, face in faces]
        use = [body for i in holdable(ids) if (body := on(HOLDING, i)) is not None]
        for name, options in ((f"go{k}", go), (f"turn{k}", turn), (f"turnseated{k}", turn_seated),
                              (f"use{k}", [f"({b})" for b in use])):
            if options:
                rules[name] = " | ".join(options)

        def common(state: str, seated: bool) -> list[str]:
            options = [] if seated else [r for r in (f"go{k}", f"turn{k}") if r in rules]
            if seated and f"turnseated{k}" in rules:
                options.append(f"turnseated{k}")
            options += [f"{r} {state}-next" for r in ("free", f"use{k}") if r in rules]
            return options

        def here(i: int, state: str) -> list[str]:
            """Steps on object i while close to it (`state`: where they leave the character)."""
            act = on(NEAR - SEATS - {"GRAB"}, i)
            dest = [f'{h} {_alternatives([literal[j] for j in firsts])} ", " {literal[i]} "]"'
                    for a in sorted(NEAR_DESTINATION) for h in heads({a}, 1, i)
                    if (firsts := holdable(admits[a][0] - {i}))]
            steps = [f"({b}) {state}{k}-next" for b in (act, *dest) if b is not None]
            if (grab := on({"GRAB"}, i)) is not None:
                steps.append(f"({grab}) {state}{grabbed(i)}-next")
            return steps

        bodies[f"start{k}"] = common(f"start{k}", False)
        bodies[f"tnone{k}"] = common(f"tnone{k}", True)
        for i in ids:
            seat = on(SEATS, i)
            if i not in rooms:
                bodies[f"n{i}{k}"] = [*common(f"n{i}{k}", False), *here(i, f"n{i}"),
                                      *([f"({seat}) s{i}{k}-next"] if seat else [])]
            if seat:
                bodies[f"s{i}{k}"] = [*common(f"s{i}{k}", True), *here(i, f"s{i}")]
            if look[i]:
                bodies[f"f{i}{k}"] = [*common(f"f{i}{k}", False), f"({look[i]}) f{i}{k}-next"]
                bodies[f"t{i}{k}"] = [*common(f"t{i}{k}", True), f"({look[i]}) t{i}{k}-next"]

    for held in [None, *grabbable, *([_MANY] if len(grabbable) > 1 else [])]:
        copy(held)
    if not bodies["start"]:
        raise ValueError(f"task {task.task_id}: no action can be written over its objects")
    lines = ['root ::= "{\\n  " start']
    for name, options in bodies.items():
        if options:
            lines.append(f"{name} ::= " + " | ".join(options))
            lines.append(f'{name}-next ::= "\\n}}" | ",\\n  " {name}')
        else:
            lines.append(f'{name}-next ::= "\\n}}"')
    lines += [f"{name} ::= {body}" for name, body in rules.items()]
    lines += [f"{name} ::= {body}" for body, name in shared.items()]
    return "\n".join(lines) + "\n"


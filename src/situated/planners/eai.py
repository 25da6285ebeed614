"""EAI action sequencing: EAI's prompt → grammar-constrained JSON action list, open loop or grounded.

The prompt is EAI's own (`EaiTask.prompt(protocol)`): that is the benchmark. The answer is decoded under a GBNF
grammar that admits only a JSON dictionary of the prompt's actions (those EAI's evaluator accepts), each with
its number of objects, over the objects the prompt lists (with their ids for the 1.0.5 protocol), never the
character (the prompt forbids it). So an answer cannot be unparsable, hallucinate an action or object, or have
the wrong number of arguments. With `typed=True` (default) a parameter that VirtualHome's executor checks for a
property (GRAB needs GRABBABLE, OPEN CAN_OPEN, ..., `situated.actions.VIRTUALHOME_SPACE`) only admits objects
the prompt shows with that property.

Layout: `{`, one `  "ACTION": [args]` entry per line (keys repeat: order is execution order, as EAI's
order-preserving parser reads it), `}`. 1.0.5 args are `"name", "id"` (the id quoted, as in the prompt's example
`["sink", "sink_id"]` and as the models write it unconstrained; EAI's evaluator reads `name_id` either way);
1.0.4 args are `"name"` (a bare name means the last listed object of that name, as the 1.0.4 evaluator maps it).

Zero-argument actions (STANDUP) are written `[]` as the prompt says, although EAI's parser then drops them
(docs/eai.md, traps).

The prompt goes to the model in its chat template when the model has one we know (`template`, default
`default_template(llm.uri)`: ChatML for the embedded Qwen models), as EAI sends it to chat models: one user
message; the answer is then the start of the assistant's turn.

Grounded variant (beyond the benchmark; `plan_grounded`): the answer runs on a private copy of the task's
initial graph in our VirtualHome-faithful simulator, with the task's goals (part of its input) checked after
each step. On the first failing step (the simulator says no, the step has no objects, or it repeats the step
before without effect), or when the plan ends with goals unmet, the model rewrites the plan from there: the
steps before are kept, a `// ... is not possible: <reason>` line tells it why, and the grammar excludes every
call rejected at that place (an action rejected twice there altogether). Rewrites are written in checked
pieces; the plan ends as soon as every goal holds. At most `repairs` rewrites; the last plan is the answer
whatever it does. A checker with hints (`eval.eai_check`) also names enabling steps, which are put before the
failing step without a model call (`enable`), and the action that makes each unmet goal hold.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from situated.actions import VIRTUALHOME_SPACE
from situated.datasets.eai_actions import (
    CHARACTER,
    EaiAction,
    EaiObject,
    EaiTask,
    check_protocol,
    fill_template,
    supported_actions,
    template_of,
)
from situated.errors import ParseError
from situated.llm.base import LLM, Completion
from situated.planners.eai_examples import EXAMPLES, EaiExample
from situated.program.grammar import gbnf_literal

DEFAULT_MAX_STEPS = 40
"""Steps per answer the grammar admits: a cost guard against small models repeating one step to the token cap."""
DEFAULT_MAX_TOKENS = 768
"""Tokens per answer (40 steps with ids take 500-800); a longer answer is cut back to its complete steps."""

DEFAULT_REPAIRS = 5
GROUNDED = "grounded"
OPEN_LOOP = "open-loop"

RAW = "{prompt}"
"""The prompt as is (a completion model)."""
CHATML = ("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
          "<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n")
"""The embedded Qwen models' own chat template (their GGUF's), with the prompt as the one user message."""


TURN_BREAKS = {CHATML: "<|im_end|>\n<|im_start|>user\n", RAW: "\n\n"}
"""What follows an example's answer before the next prompt, per template (`shots`); other templates take none."""


def default_template(uri: str) -> str:
    """CHATML for an embedded Qwen model (`llamacpp:qwen...`), RAW otherwise (an OpenAI-compatible server that
    lacks `/completions` wraps the prompt as a user message itself)."""
    return CHATML if uri.startswith("llamacpp:") and "qwen" in uri.lower() else RAW


_ENTRY = re.compile(r'"(\w+)"\s*:\s*(\[[^\]]*\])')
Call = tuple[str, tuple[int, ...]]
"""An action call by object ids: ("GRAB", (1002,))."""


@dataclass(frozen=True)
class Step:
    """One action of an answer: the EAI action name and its objects (names and node ids)."""

    action: str
    names: tuple[str, ...] = ()
    ids: tuple[int, ...] = ()

    @property
    def call(self) -> Call:
        return (self.action, self.ids)

    def script(self) -> str:
        """The line EAI's evaluator executes for it: `[WALK] <sink> (1001)`."""
        return " ".join([f"[{self.action}]", *(f"<{n}> ({i})" for n, i in zip(self.names, self.ids, strict=True))])


@dataclass(frozen=True)
class EaiPlan:
    """A task's answer in EAI's format (`text`, the evaluator's `llm_output`), its steps and what it cost."""

    task_id: str
    protocol: str
    mode: str
    text: str
    steps: tuple[Step, ...]
    completions: tuple[Completion, ...] = ()
    rejected: tuple[str, ...] = ()
    """Grounded: the rejections, `step N: <call or "end">: reason`, one per rewrite."""
    truncated: bool = False
    """The (last) answer hit `max_tokens` and was cut back to its complete steps."""
    checked_ok: bool | None = None
    """Grounded: whether the final plan ran and met every goal on the private scene (None: not checked)."""
    inserted: tuple[str, ...] = ()
    """Grounded with hints: the steps the checker put before a failing step, `step N: <steps> before <step>`."""
    prompt: str = field(default="", repr=False)

    @property
    def calls(self) -> int:
        return len(self.completions)

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.completions)

    @property
    def completion_tokens(self) -> int:
        return sum(c.completion_tokens for c in self.completions)

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.completions)

    @property
    def repairs(self) -> int:
        return len(self.rejected)

    def cost(self) -> dict[str, float | int]:
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "seconds": round(self.seconds, 3)}


# ---------------------------------------------------------------------------------------------- answer format

def format_answer(steps: Sequence[Step], protocol: str) -> str:
    """Steps as EAI's answer text for `protocol` (a JSON dictionary whose keys may repeat)."""
    check_protocol(protocol)
    if not steps:
        return "{}"
    return "{\n" + ",\n".join("  " + _entry_text(s, protocol) for s in steps) + "\n}"


def _entry_text(step: Step, protocol: str) -> str:
    return f"{json.dumps(step.action)}: [{_args_text(step.names, step.ids, protocol)}]"


def _args_text(names: Sequence[str], ids: Sequence[int], protocol: str) -> str:
    if protocol == "1.0.4":
        return ", ".join(json.dumps(n) for n in names)
    return ", ".join(f"{json.dumps(n)}, {json.dumps(str(i))}" for n, i in zip(names, ids, strict=True))


def parse_answer(text: str, task: EaiTask, protocol: str) -> tuple[Step, ...]:
    """Read an answer (model text, as data) into steps with ids; ParseError for what EAI could not score.

    Entries are found as EAI's parser finds them (`"KEY": [...]` in order, repeated keys kept), but `[]` is kept
    as a zero-argument step (EAI's parser skips it). Names must be listed objects; 1.0.5 ids must match them;
    a 1.0.4 bare name takes the last listed object of that name.
    """
    check_protocol(protocol)
    steps = []
    flat = re.sub(r"\s+", " ", text.replace("'", '"'))
    for match in _ENTRY.finditer(flat):
        action = match[1].upper()
        try:
            args = json.loads(match[2])
        except ValueError:
            raise ParseError(f"task {task.task_id}: cannot read the arguments of {action}: {match[2]!r}") from None
        steps.append(_step(action, args, task, protocol))
    if not steps and flat.strip(" {}"):
        raise ParseError(f"task {task.task_id}: no '\"ACTION\": [...]' entry in the answer {text[:80]!r}")
    return tuple(steps)


def _step(action: str, args: list, task: EaiTask, protocol: str) -> Step:
    where = f"task {task.task_id}: {action} {args!r}"
    if protocol == "1.0.4":
        if not all(isinstance(a, str) for a in args):
            raise ParseError(f"{where}: 1.0.4 answers name objects only")
        try:
            return Step(action, tuple(args), tuple(task.names_only_id(a) for a in args))
        except KeyError as exc:
            raise ParseError(f"{where}: {exc.args[0]!r} is not a listed object") from None
    if len(args) % 2:
        raise ParseError(f"{where}: 1.0.5 answers give each object as name, id")
    names, ids = tuple(args[0::2]), args[1::2]
    try:
        ids = tuple(int(i) for i in ids)
    except (TypeError, ValueError):
        raise ParseError(f"{where}: object ids must be numbers") from None
    for name, i in zip(names, ids, strict=True):
        listed = [o for o in task.objects if o.id == i]
        if not listed or listed[0].name != name:
            raise ParseError(f"{where}: {name!r} with id {i} is not a listed object")
    return Step(action, names, ids)


def convert_answer(text: str, task: EaiTask, source: str, target: str) -> str:
    """An answer in `source` format rewritten for `target` ("1.0.4" names only ↔ "1.0.5" name+id)."""
    return format_answer(parse_answer(text, task, source), target)


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
    return gbnf_literal(_args_text((obj.name,), (obj.id,), protocol))


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


# ---------------------------------------------------------------------------------------------- open loop

def model_prompt(llm: LLM, task: EaiTask, protocol: str, template: str | None = None, shots: int = 0) -> str:
    """EAI's prompt for `protocol` in `template` (default: `default_template(llm.uri)`).

    `shots=N`: the first N project examples (`eai_examples.EXAMPLES`) go first, each as an earlier exchange --
    EAI's prompt text with the example's fields, then its answer in the protocol's format -- and the task's
    prompt last, so the examples are a prefix shared by every task."""
    wrapper = default_template(llm.uri) if template is None else template
    if "{prompt}" not in wrapper:
        raise ValueError("a prompt template needs a '{prompt}' placeholder")
    if not 0 <= shots <= len(EXAMPLES):
        raise ValueError(f"shots must be between 0 and {len(EXAMPLES)}, got {shots}")
    if shots and wrapper not in TURN_BREAKS:
        raise ValueError("shots need a known prompt template (CHATML or RAW)")
    head, _, tail = wrapper.partition("{prompt}")
    prompt = task.prompt(protocol)
    turns = [example_prompt(example, prompt) + tail + example_answer(example, protocol) + TURN_BREAKS[wrapper]
             for example in EXAMPLES[:shots]]
    return head + "".join(turns) + prompt + tail


def example_prompt(example: EaiExample, task_prompt: str) -> str:
    """EAI's prompt text (the same template as `task_prompt`) with the example's five fields."""
    return fill_template(template_of(task_prompt), example.field_map())


def example_answer(example: EaiExample, protocol: str) -> str:
    """The example's answer in `protocol`'s format, written as the grammar writes answers."""
    steps = [Step(action, tuple(n for n, _ in args), tuple(i for _, i in args)) for action, args in example.answer]
    return format_answer(steps, protocol)


def _read(completion: Completion, task: EaiTask, protocol: str) -> tuple[tuple[Step, ...], bool]:
    """Steps of a grammar-constrained text; when cut by `max_tokens`, only its complete entries."""
    text = completion.text
    truncated = completion.finish_reason == "length"
    if truncated:
        cut = text.rfind("],")
        text = text[: cut + 1] if cut >= 0 else ""
    return parse_answer(text, task, protocol), truncated


def plan_task(llm: LLM, task: EaiTask, protocol: str = "1.0.5", *, typed: bool = True, grammar: bool = True,
              template: str | None = None, max_steps: int = DEFAULT_MAX_STEPS, max_tokens: int = DEFAULT_MAX_TOKENS,
              seed: int = 0, approach: bool = False, shots: int = 0) -> EaiPlan:
    """Open loop (the benchmark): one greedy, grammar-constrained answer to EAI's prompt.

    Without `grammar` the model's text is the answer as is (EAI's evaluator scores whatever it is).
    `approach=True`: the grammar only lets the model act on an object it walked to first (`approach_grammar`).
    `shots=N`: N project-written examples before the task (`model_prompt`).
    """
    check_protocol(protocol)
    if approach and not grammar:
        raise ValueError("approach=True needs the grammar")
    prompt = model_prompt(llm, task, protocol, template, shots)
    gbnf = (answer_grammar(task, protocol, typed=typed, max_steps=max_steps, approach=approach)
            if grammar else None)
    done = llm.complete(prompt, max_tokens=max_tokens, temperature=0.0, grammar=gbnf, seed=seed)
    if gbnf is None:
        try:
            steps = parse_answer(done.text, task, protocol)
        except ParseError:
            steps = ()
        return EaiPlan(task.task_id, protocol, OPEN_LOOP, done.text, steps, (done,),
                       truncated=done.finish_reason == "length", prompt=prompt)
    steps, truncated = _read(done, task, protocol)
    return EaiPlan(task.task_id, protocol, OPEN_LOOP, format_answer(steps, protocol), steps, (done,),
                   truncated=truncated, prompt=prompt)


# ---------------------------------------------------------------------------------------------- grounded

DEFAULT_PIECE_TOKENS = 128
"""Rewrites are written in pieces of this many tokens, each checked before the next is asked for."""


@dataclass(frozen=True)
class Check:
    """What the private scene says about a plan: the first failing step and why; the goals left unmet at the
    end; `done_at`, the first number of steps after which every goal holds (the plan may end there)."""

    failed_at: int | None = None
    reason: str = ""
    unmet: tuple[str, ...] = ()
    done_at: int | None = None
    enabler: tuple[Step, ...] = ()
    """Steps after which the failing step would run (a checker with hints; `plan_grounded` inserts them)."""

    @property
    def ok(self) -> bool:
        return self.done_at is not None or (self.failed_at is None and not self.unmet)


def _feedback(lines: Sequence[str]) -> str:
    """`  // line` comment lines (no line breaks inside) where the rewrite starts."""
    return "".join("  // " + " ".join(line.split()) + "\n" for line in lines)


@dataclass(frozen=True)
class _Rejection:
    """What was rejected at a place: a call (None: ending the plan there) and the feedback line for the model."""

    call: Call | None
    said: str


def _rewrite_grammar(task: EaiTask, protocol: str, place: Sequence[_Rejection], kept: int, *, typed: bool,
                     max_steps: int) -> str:
    """The grammar of a rewrite at a place: no call rejected there, no action rejected there twice, no ending
    there if ending was rejected (or nothing is kept)."""
    calls = [r.call for r in place if r.call is not None]
    per_action: dict[str, int] = {}
    for action, _ in calls:
        per_action[action] = per_action.get(action, 0) + 1
    return answer_grammar(task, protocol, typed=typed, max_steps=max_steps - kept, continuation=True,
                          exclude=set(calls), exclude_actions={a for a, n in per_action.items() if n >= 2},
                          may_end=kept > 0 and len(calls) == len(place))


Checker = Callable[[Sequence[Step]], Check]
"""Runs a plan's steps on a private copy of the task's scene and says where it fails and which goals it leaves
unmet (`situated.eval.eai_check.scene_checker` for VirtualHome)."""


@dataclass
class _Writer:
    """Writes the rest of a grounded plan in checked pieces and keeps the bill."""

    llm: LLM
    task: EaiTask
    protocol: str
    check: Checker
    typed: bool
    max_steps: int
    max_tokens: int
    piece_tokens: int
    seed: int
    prompt: str
    completions: list[Completion] = field(default_factory=list)
    truncated: bool = False

    def text(self, steps: Sequence[Step]) -> str:
        return self.prompt + "{\n" + "".join(
            f"  {_entry_text(s, self.protocol)},\n" for s in steps)

    def rewrite(self, kept: tuple[Step, ...], feedback: str, grammar: str) -> tuple[Step, ...]:
        """`kept` plus what the model writes after the feedback lines, piece by piece, until it ends the plan,
        a piece has a failing step or reaches every goal, the step cap, or `max_tokens` in all."""
        steps, prompt, budget = kept, self.text(kept) + feedback, self.max_tokens
        while True:
            done = self.llm.complete(prompt, max_tokens=min(self.piece_tokens, budget), temperature=0.0,
                                     grammar=grammar, seed=self.seed)
            self.completions.append(done)
            budget -= done.completion_tokens
            tail, cut = _read(done, self.task, self.protocol)
            steps = steps + tail
            self.truncated = cut and budget <= 0
            if not cut or budget <= 0 or len(steps) >= self.max_steps:
                return steps
            check = self.check(steps)
            if check.failed_at is not None or check.done_at is not None:
                return steps
            prompt = self.text(steps)
            grammar = answer_grammar(self.task, self.protocol, typed=self.typed, continuation=True,
                                     max_steps=self.max_steps - len(steps))


def enable(steps: tuple[Step, ...], verdict: Check, check: Checker, max_steps: int,
           inserted: list[str]) -> tuple[tuple[Step, ...], Check]:
    """Put the checker's `enabler` before each failing step that has one (no model call), until none is left,
    `max_steps` insertions are made or the plan would grow beyond `max_steps`; each insertion is appended to
    `inserted` as `step N: <steps> before <step>`. Returns the steps and their verdict."""
    while verdict.failed_at is not None and verdict.enabler and len(inserted) < max_steps \
            and len(steps) + len(verdict.enabler) <= max_steps:
        k, bad = verdict.failed_at, steps[verdict.failed_at]
        inserted.append(f"step {k + 1}: {', '.join(s.script() for s in verdict.enabler)} before {bad.script()}")
        steps = (*steps[:k], *verdict.enabler, *steps[k:])
        verdict = check(steps)
    return steps, verdict


def checked_steps(steps: Sequence[Step], check: Checker, max_steps: int = DEFAULT_MAX_STEPS
                  ) -> tuple[tuple[Step, ...], tuple[str, ...], Check]:
    """The grounded check without a rewrite (no model call): a plan's steps with the checker's enabling steps
    inserted (`enable`) and cut where every goal holds; returns them, the insertions and the last verdict."""
    inserted: list[str] = []
    done, verdict = enable(tuple(steps), check(steps), check, max_steps, inserted)
    return (done[: verdict.done_at] if verdict.done_at is not None else done), tuple(inserted), verdict


def plan_grounded(llm: LLM, task: EaiTask, protocol: str = "1.0.5", *, check: Checker,
                  repairs: int = DEFAULT_REPAIRS, typed: bool = True, template: str | None = None,
                  max_steps: int = DEFAULT_MAX_STEPS, max_tokens: int = DEFAULT_MAX_TOKENS,
                  piece_tokens: int = DEFAULT_PIECE_TOKENS, seed: int = 0, shots: int = 0,
                  approach: bool = False) -> EaiPlan:
    """Grounded variant: the open-loop answer, checked by `check` on a private scene and rewritten from its
    first failing step (or its end, while goals are unmet) at most `repairs` times; it ends as soon as every
    goal holds.

    The first answer is written whole (it is the open-loop answer; `approach=True`: under `approach_grammar`);
    rewrites in checked pieces of `piece_tokens`, under the plain grammar with the rejected calls left out.
    The last plan is kept whatever it does.

    A failing step for which the checker names an `enabler` (a checker with hints) is not rewritten: the
    enabling steps are put before it, without a model call and without counting as a rewrite, and listed in
    `EaiPlan.inserted` (at most `max_steps` insertions, never beyond `max_steps` steps).
    """
    first = plan_task(llm, task, protocol, typed=typed, template=template, max_steps=max_steps,
                      max_tokens=max_tokens, seed=seed, shots=shots, approach=approach)
    writer = _Writer(llm, task, protocol, check, typed, max_steps, max_tokens, piece_tokens, seed, first.prompt,
                     list(first.completions), first.truncated)
    steps = first.steps
    rejected: list[str] = []
    places: dict[tuple[Step, ...], list[_Rejection]] = {}
    inserted: list[str] = []
    steps, verdict = enable(steps, check(steps), check, max_steps, inserted)
    while not verdict.ok and len(rejected) < repairs:
        if verdict.failed_at is not None:
            kept, bad = steps[: verdict.failed_at], steps[verdict.failed_at]
            rejection = _Rejection(bad.call, f"{_entry_text(bad, protocol)} is not possible: {verdict.reason}")
            rejected.append(f"step {verdict.failed_at + 1}: {_entry_text(bad, protocol)}: {verdict.reason}")
        elif len(steps) < max_steps:
            kept = steps
            rejection = _Rejection(None, "the plan cannot end here, these goals do not hold yet: "
                                   + "; ".join(verdict.unmet))
            rejected.append(f"step {len(steps) + 1}: end: {'; '.join(verdict.unmet)}")
        else:
            break   # goals unmet, but no room left for another step
        place = places.setdefault(tuple(kept), [])
        place.append(rejection)
        grammar = _rewrite_grammar(task, protocol, place, len(kept), typed=typed, max_steps=max_steps)
        steps = writer.rewrite(tuple(kept), _feedback([r.said for r in place]), grammar)
        steps, verdict = enable(steps, check(steps), check, max_steps, inserted)
    if verdict.done_at is not None:
        steps = steps[: verdict.done_at]
    return EaiPlan(task.task_id, protocol, GROUNDED, format_answer(steps, protocol), steps,
                   tuple(writer.completions), tuple(rejected), writer.truncated, verdict.ok, prompt=first.prompt,
                   inserted=tuple(inserted))

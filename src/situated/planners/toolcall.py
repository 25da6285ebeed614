"""Vocal Sandbox's planner: a spoken utterance becomes calls over an API that grows as the user teaches it.

The prompt follows the paper (PROTOCOLS.md §3), written anew: a system prompt that describes the collaboration,
asks for tolerance of speech-to-text errors and says what to do about unknown objects and behaviours; the known
objects rendered as a Python `Enum` class with a docstring (comment) per member; the functions as tool
specifications with docstrings (`ActionSpace.tool_schemas`); a few fixed in-context examples built from the
scene's own objects; then the running memory — every exchange of this session, appended as it happens.

The answer is decoded under a JSON schema regenerated from the API at every call: function names and object
arguments are enums, so the model cannot name a function or object that does not exist. An utterance that needs
something the API lacks has its own answers in the schema, ``{"unknown_behaviour": "pack", "objects": [...]}``
and ``{"unknown_object": "marker"}``, never a made-up call. Answers are read as data (`read_answer`); nothing
a model writes is executed.

`teach` is the paper's forced `teach_function` step: from the utterance that asked for an unknown behaviour
and the calls the user then showed, the model writes the new behaviour's parameter names and docstring (its
name is the unknown behaviour's word), again under a JSON schema.

Decoding is greedy (temperature 0); the paper used gpt-3.5-turbo at temperature 0.2.
"""

from __future__ import annotations

import json
import keyword
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..actions import ActionSpace, Behaviour
from ..errors import BackendError
from ..llm.base import LLM
from ..program import DANGEROUS_NAMES, Call

WORD_PATTERN = "^[a-z][a-z0-9_]{0,39}$"
"""A new behaviour's or object's name as the model may write it (snake_case, at most 40 characters)."""
PARAM_PATTERN = "^[a-z][a-z0-9_]{0,19}$"
MAX_CALLS = 16
"""Most calls in one answer."""
MAX_OBJECTS = 4
"""Most objects named with an unknown behaviour."""
MAX_DOC = 160
MEMORY_LIMIT = 40
"""Exchanges kept in the running memory (the oldest are dropped first; the paper kept every one)."""
_WORD = re.compile(WORD_PATTERN[1:-1])
_RESERVED_PARAMS = frozenset({"to", "on", "hands", "def", "assert", "pass", "not", "is", "in"})


# -------------------------------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True)
class ObjectEntry:
    """One member of the `Object` enum: its plan name (`gift_bag`) and docstring."""

    name: str
    doc: str = ""

    @property
    def member(self) -> str:
        """The enum member's name, as the model writes it: `GIFT_BAG`."""
        return self.name.upper()


@dataclass(frozen=True)
class PlannedCalls:
    """The utterance maps to these calls of the API (object arguments are plan names: `'gift_bag'`)."""

    calls: tuple[Call, ...]


@dataclass(frozen=True)
class UnknownBehaviour:
    """The utterance asks for an action no function performs; `objects` are the objects it named."""

    name: str
    objects: tuple[str, ...] = ()


@dataclass(frozen=True)
class UnknownObject:
    """The utterance names a thing that is not a known object."""

    name: str


Answer = PlannedCalls | UnknownBehaviour | UnknownObject


@dataclass(frozen=True)
class Usage:
    """What model calls cost: calls, tokens (prompt: the messages' text; the chat template's few tokens are not
    counted) and wall-clock seconds."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.calls + other.calls, self.prompt_tokens + other.prompt_tokens,
                     self.completion_tokens + other.completion_tokens, self.seconds + other.seconds)


@dataclass(frozen=True)
class PlannerReply:
    """One planning step: the answer read as data, the model's JSON answer, and its cost."""

    answer: Answer
    raw: dict[str, Any]
    usage: Usage


@dataclass(frozen=True)
class Exchange:
    """One turn of the running memory: what the user said and the planner's JSON answer."""

    utterance: str
    answer: dict[str, Any]


@dataclass
class Memory:
    """The running memory of one session: every exchange, appended as it happens (at most `limit` kept)."""

    exchanges: list[Exchange] = field(default_factory=list)
    limit: int = MEMORY_LIMIT

    def append(self, exchange: Exchange) -> None:
        self.exchanges.append(exchange)
        del self.exchanges[:-self.limit]

    def replace(self, utterance: str, answer: dict[str, Any]) -> bool:
        """Give the newest exchange of `utterance` another answer (e.g. the call of a behaviour taught since)."""
        for i in range(len(self.exchanges) - 1, -1, -1):
            if self.exchanges[i].utterance == utterance:
                self.exchanges[i] = Exchange(utterance, answer)
                return True
        return False

    def drop_last(self, utterance: str) -> bool:
        """Forget the newest exchange, if it is about `utterance` (a cancelled or corrected plan)."""
        if self.exchanges and self.exchanges[-1].utterance == utterance:
            self.exchanges.pop()
            return True
        return False

    def __len__(self) -> int:
        return len(self.exchanges)


@dataclass(frozen=True)
class Signature:
    """A taught behaviour's name, parameter names (one per generalized object, in order) and docstring."""

    name: str
    params: tuple[str, ...]
    doc: str
    synthesized: bool = True
    """False when the model's answer was unusable and the fallback names were used."""


# -------------------------------------------------------------------------------------------------------------
# Prompt


SYSTEM_PROMPT = """\
You are the planner of a robot arm that works at a table together with a person. The person talks to the robot; \
a speech-to-text engine writes down what they say, and you turn each utterance into calls of the robot's Python \
API below. The robot shows your calls to the person, who confirms, corrects or cancels them before they run. \
The person can also teach the robot: new objects (by pointing at them) and new behaviours (by showing the steps \
one at a time), which then join the API.

The speech-to-text engine makes mistakes. Read each utterance for what the person meant, for example:
- "put the candie in the gift back" means the CANDY and the GIFT_BAG;
- "go to the tree" may mean the TRAY; "the duk" means the DUCK.
Always write an object as the name of its `Object` member.

Answer with one JSON object in one of three forms:
1. {"calls": [{"function": "<function>", "args": {"<parameter>": "<OBJECT>"}}, ...]}: the calls that do what \
the person asked, in order.
2. {"unknown_behaviour": "<word>", "objects": ["<OBJECT>", ...]}: the person asked for an action that is none of \
the functions (a new verb, such as "wave" or "stack"). Give the action's name in snake_case, as the person said \
it ("wave at me": wave; "make a sandwich with the bread": make_sandwich), and the objects the person named. \
Do not imitate the action with other functions: the person will teach it. A behaviour the person \
taught is one of the functions: call it.
3. {"unknown_object": "<word>"}: the person named a thing that is no `Object` member, even allowing for \
speech-to-text errors. Give its name in snake_case. Do not use another object instead: the person will point at it.
Never invent a function or an object.

The objects:
```python
{objects}
```

The functions:
{functions}
"""


def render_objects(objects: Sequence[ObjectEntry]) -> str:
    """The known objects as a Python `Enum` class, one member per object with its docstring as a comment."""
    lines = ["from enum import Enum, auto", "", "", "class Object(Enum):",
             '    """The objects the robot knows, at the table or taught by the person."""', ""]
    for entry in objects:
        doc = " ".join(entry.doc.split())
        lines.append(f"    {entry.member} = auto()" + (f"  # {doc}" if doc else ""))
    if not objects:
        lines.append("    pass")
    return "\n".join(lines)


def render_functions(space: ActionSpace) -> str:
    """The API's functions as tool specifications (one JSON object a line), object parameters typed as members
    of `Object` and taught behaviours marked as such."""
    lines = []
    for action, tool in zip(space.actions, space.with_objects(()).tool_schemas(), strict=True):
        spec = tool["function"]
        if isinstance(action, Behaviour):
            spec["description"] = f"{spec['description']} (a behaviour the person taught)".strip()
        for param, prop in zip(action.params, spec["parameters"]["properties"].values(), strict=True):
            if param.kind == "object":
                prop["description"] = f"{prop.get('description', '') or param.name}: a member of Object"
        lines.append(json.dumps(tool, ensure_ascii=False))
    return "\n".join(lines)


def system_prompt(space: ActionSpace, objects: Sequence[ObjectEntry]) -> str:
    """The system message: collaboration, speech errors, the three answer forms, the objects, the functions."""
    return SYSTEM_PROMPT.replace("{objects}", render_objects(objects)).replace(
        "{functions}", render_functions(space))


def _call(function: str, **args: str) -> dict[str, Any]:
    return {"function": function, "args": {k: v.upper() for k, v in args.items()}}


def example_exchanges(space: ActionSpace, objects: Sequence[ObjectEntry],
                      containers: Iterable[str] = ()) -> list[Exchange]:
    """Fixed in-context examples over the seed skills, naming this scene's own objects (a container and two
    items where it has them), plus one example of each unknown answer."""
    names = [o.name for o in objects]
    holders = [n for n in names if n in set(containers)]
    items = [n for n in names if n not in set(holders)]
    box = "gift_bag" if "gift_bag" in holders else (holders[0] if holders else None)
    item = "candy" if "candy" in items else (items[0] if items else None)
    other = next((n for n in items if n != item), None)
    seed = {"go_home", "goto", "grasp", "release", "pickup"}
    out = []
    if seed <= set(space.names):
        out += [Exchange("let go of it", {"calls": [_call("release")]}),
                Exchange("close the gripper", {"calls": [_call("grasp")]}),
                Exchange("go back home", {"calls": [_call("go_home")]})]
        if box:
            out.append(Exchange(f"move over to the {box.replace('_', ' ')}", {"calls": [_call("goto", obj=box)]}))
        if item:
            out.append(Exchange(f"grab the {item.replace('_', ' ')}", {"calls": [_call("pickup", obj=item)]}))
        if other:
            out.append(Exchange(f"pick up the {other.replace('_', ' ')} and then go home",
                                {"calls": [_call("pickup", obj=other), _call("go_home")]}))
    out.append(Exchange("wave at me", {"unknown_behaviour": "wave", "objects": []}))
    if item:
        out.append(Exchange(f"polish the {item.replace('_', ' ')}",
                            {"unknown_behaviour": "polish", "objects": [item.upper()]}))
    out.append(Exchange("go to the stapler", {"unknown_object": "stapler"}))
    return [e for e in out if not _names_unknown(e.answer, space, names)]


def _names_unknown(answer: dict[str, Any], space: ActionSpace, names: Sequence[str]) -> bool:
    """Whether an example answer calls a function or names an object this API lacks (such examples are left out)."""
    members = {n.upper() for n in names}
    for call in answer.get("calls", ()):
        if call["function"] not in space or not set(call["args"].values()) <= members:
            return True
    return not set(answer.get("objects", ())) <= members


def dumps(answer: dict[str, Any]) -> str:
    """An answer as the assistant's message text (the same form in examples and memory)."""
    return json.dumps(answer, ensure_ascii=False)


# -------------------------------------------------------------------------------------------------------------
# Schema and reading


def answer_schema(space: ActionSpace, objects: Sequence[ObjectEntry], *, max_calls: int = MAX_CALLS,
                  unknown_behaviour: bool = True, unknown_object: bool = True) -> dict:
    """The JSON schema of an answer, regenerated from the API: each function is one alternative whose `function`
    is that name and whose `args` are exactly its parameters, each an enum of the known objects; or one of the
    two unknown answers (each can be left out)."""
    members = [o.member for o in objects]
    call_forms = []
    for action in space.actions:
        props: dict[str, dict] = {}
        for p in action.params:
            props[p.name] = {"enum": members} if p.kind == "object" else {"type": "string", "maxLength": 60}
        call_forms.append({
            "type": "object",
            "properties": {"function": {"const": action.name},
                           "args": {"type": "object", "properties": props, "required": [p.name for p in action.params],
                                    "additionalProperties": False}},
            "required": ["function", "args"], "additionalProperties": False,
        })
    forms: list[dict] = []
    if call_forms:
        forms.append({"type": "object",
                      "properties": {"calls": {"type": "array", "minItems": 1, "maxItems": max_calls,
                                               "items": {"anyOf": call_forms}}},
                      "required": ["calls"], "additionalProperties": False})
    named: dict = {"type": "array", "maxItems": MAX_OBJECTS, "items": {"enum": members}} if members else {
        "type": "array", "maxItems": 0}
    if unknown_behaviour or not forms:
        forms.append({"type": "object",
                      "properties": {"unknown_behaviour": {"type": "string", "pattern": WORD_PATTERN},
                                     "objects": named},
                      "required": ["unknown_behaviour", "objects"], "additionalProperties": False})
    if unknown_object:
        forms.append({"type": "object",
                      "properties": {"unknown_object": {"type": "string", "pattern": WORD_PATTERN}},
                      "required": ["unknown_object"], "additionalProperties": False})
    return {"anyOf": forms}


def read_answer(value: Any, space: ActionSpace, objects: Sequence[ObjectEntry]) -> Answer:
    """The model's JSON answer as data; BackendError naming the problem when it does not fit the API (a backend
    that ignored the schema)."""
    by_member = {o.member: o.name for o in objects}

    def bad(problem: str) -> BackendError:
        return BackendError(f"planner answer {json.dumps(value)[:160]}: {problem}")

    def member(item: Any) -> str:
        if not isinstance(item, str) or item not in by_member:
            raise bad(f"{item!r} is not a known object")
        return by_member[item]

    def word(item: Any) -> str:
        if not isinstance(item, str) or not _WORD.fullmatch(item):
            raise bad(f"{item!r} is not a snake_case name")
        return item

    if not isinstance(value, dict) or len(value) not in (1, 2):
        raise bad("expected an object with 'calls', 'unknown_behaviour' or 'unknown_object'")
    if set(value) == {"unknown_object"}:
        return UnknownObject(word(value["unknown_object"]))
    if set(value) == {"unknown_behaviour", "objects"}:
        named = value["objects"]
        if not isinstance(named, list) or len(named) > MAX_OBJECTS:
            raise bad(f"'objects' must be a list of at most {MAX_OBJECTS} objects")
        return UnknownBehaviour(word(value["unknown_behaviour"]), tuple(dict.fromkeys(member(o) for o in named)))
    if set(value) != {"calls"}:
        raise bad(f"unexpected keys {sorted(value)}")
    raw_calls = value["calls"]
    if not isinstance(raw_calls, list) or not 1 <= len(raw_calls) <= MAX_CALLS:
        raise bad(f"'calls' must be a list of 1 to {MAX_CALLS} calls")
    calls = []
    for raw in raw_calls:
        if not isinstance(raw, dict) or set(raw) != {"function", "args"} or not isinstance(raw["args"], dict):
            raise bad("each call must be {'function': ..., 'args': {...}}")
        name = raw["function"]
        if not isinstance(name, str) or name not in space:
            raise bad(f"unknown function {name!r}")
        action = space.get(name)
        if set(raw["args"]) != {p.name for p in action.params}:
            raise bad(f"{name} takes {[p.name for p in action.params]}, got {sorted(raw['args'])}")
        calls.append(Call(name, tuple(member(raw["args"][p.name]) for p in action.params)))
    return PlannedCalls(tuple(calls))


def answer_of_calls(calls: Sequence[Call], space: ActionSpace) -> dict[str, Any]:
    """The JSON answer that stands for `calls` (what the memory keeps for an utterance once a behaviour it asked
    for has been taught)."""
    out = []
    for call in calls:
        params = space.get(call.action).params
        out.append({"function": call.action, "args": {p.name: str(a).upper() for p, a in zip(params, call.args,
                                                                                            strict=True)}})
    return {"calls": out}


# -------------------------------------------------------------------------------------------------------------
# Teaching


TEACH_PROMPT = """\
You write the signature of a new behaviour of a robot arm. The person asked for the behaviour, the robot did not \
know it, and the person then showed the steps one at a time. In the steps, the objects that become the \
behaviour's parameters are written X, Y, Z. Answer with JSON:
- "name": the behaviour's name, as given;
- "params": a short snake_case name for each of X, Y, Z (in that order) that says what the object is to the \
behaviour, such as "item", "toy" or "container";
- "doc": one sentence that says what the behaviour does, speaking of its parameters by their names, not of the \
objects in the example.
"""
PLACEHOLDERS = ("X", "Y", "Z", "W")

TEACH_EXAMPLE = (
    "Request: wash the apple\nNew behaviour: wash\nSteps shown:\npickup(X)\ngoto(SINK)\nrelease()\n"
    "Parameters: X (the APPLE in the request)",
    {"name": "wash", "params": ["item"], "doc": "Pick up the item and drop it into the sink."},
)


def teach_schema(name: str, n_params: int) -> dict:
    """The schema of the teach step's answer: the name (fixed: the unknown behaviour's word), exactly
    `n_params` parameter names, a one-sentence docstring."""
    return {"type": "object",
            "properties": {"name": {"enum": [name]},
                           "params": {"type": "array", "minItems": n_params, "maxItems": n_params,
                                      "items": {"type": "string", "pattern": PARAM_PATTERN}},
                           "doc": {"type": "string", "minLength": 1, "maxLength": MAX_DOC}},
            "required": ["name", "params", "doc"], "additionalProperties": False}


def teach_messages(name: str, utterance: str, steps: Sequence[Call], generalized: Sequence[str]) -> list[dict]:
    """The teach step's messages: one worked example, then the request, the steps shown (objects as members,
    the generalized ones as X, Y, ...) and which object each placeholder stands for."""
    marks = dict(zip(generalized, PLACEHOLDERS, strict=False))
    shown = "\n".join(f"{c.action}({', '.join(marks.get(str(a), str(a).upper()) for a in c.args)})" for c in steps)
    params = ", ".join(f"{marks[o]} (the {o.upper()} in the request)" for o in generalized) or "none"
    user = f"Request: {utterance}\nNew behaviour: {name}\nSteps shown:\n{shown}\nParameters: {params}"
    return [{"role": "system", "content": TEACH_PROMPT}, {"role": "user", "content": TEACH_EXAMPLE[0]},
            {"role": "assistant", "content": dumps(TEACH_EXAMPLE[1])}, {"role": "user", "content": user}]


def fallback_params(n: int) -> tuple[str, ...]:
    """Parameter names used when the model's are unusable: obj, obj2, obj3, ..."""
    return tuple("obj" if i == 0 else f"obj{i + 1}" for i in range(n))


def usable_params(params: Sequence[str], taken: Iterable[str] = ()) -> bool:
    """Distinct snake_case names that are no keyword, dangerous builtin, plan-language word or taken name."""
    bad = _RESERVED_PARAMS | DANGEROUS_NAMES | set(taken)
    return (len(set(params)) == len(params)
            and all(re.fullmatch(PARAM_PATTERN[1:-1], p) and not keyword.iskeyword(p) and p not in bad
                    for p in params))


# -------------------------------------------------------------------------------------------------------------
# Planner


class ToolCallPlanner:
    """Maps utterances to calls over a growing API with one constrained JSON answer per utterance."""

    def __init__(self, llm: LLM, *, temperature: float = 0.0, max_tokens: int = 384, seed: int = 0,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.llm = llm
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.clock = clock

    def messages(self, utterance: str, space: ActionSpace, objects: Sequence[ObjectEntry], memory: Memory,
                 containers: Iterable[str] = ()) -> list[dict]:
        """System prompt, in-context examples, running memory, then the utterance."""
        out = [{"role": "system", "content": system_prompt(space, objects)}]
        for exchange in (*example_exchanges(space, objects, containers), *memory.exchanges):
            out.append({"role": "user", "content": exchange.utterance})
            out.append({"role": "assistant", "content": dumps(exchange.answer)})
        out.append({"role": "user", "content": utterance})
        return out

    def plan(self, utterance: str, space: ActionSpace, objects: Sequence[ObjectEntry], memory: Memory, *,
             containers: Iterable[str] = ()) -> PlannerReply:
        """One utterance → calls, or an explicit unknown answer. The exchange is not added to `memory`: the
        caller does that once it knows what became of the plan.

        An unknown answer that names something the API has contradicts it, and the model is asked again with
        the schema narrowed: `{"unknown_object": "duck"}` with a DUCK member leaves out the unknown-object
        form; `{"unknown_behaviour": "pack"}` with a `pack` function leaves only calls."""
        messages = self.messages(utterance, space, objects, memory, containers)
        allow = {"unknown_behaviour": True, "unknown_object": True}
        value, usage = self._ask(messages, answer_schema(space, objects, **allow))
        answer = read_answer(value, space, objects)
        for _ in range(len(allow)):
            if isinstance(answer, UnknownObject) and answer.name in {o.name for o in objects}:
                allow["unknown_object"] = False
            elif isinstance(answer, UnknownBehaviour) and answer.name in space:
                allow = dict.fromkeys(allow, False)  # it names a function: the utterance is a call of it
            else:
                break
            value, again = self._ask(messages, answer_schema(space, objects, **allow))
            answer, usage = read_answer(value, space, objects), usage + again
        return PlannerReply(answer, value, usage)

    def teach(self, name: str, utterance: str, steps: Sequence[Call], generalized: Sequence[str],
              taken: Iterable[str] = ()) -> tuple[Signature, Usage]:
        """The teach step: parameter names and a docstring for behaviour `name`, whose parameters stand for the
        `generalized` objects. Unusable model output (or a failing backend) falls back to obj, obj2, ... and a
        docstring listing the steps; `Signature.synthesized` says which happened."""
        if len(generalized) > len(PLACEHOLDERS):
            raise ValueError(f"at most {len(PLACEHOLDERS)} parameters, got {len(generalized)}")
        messages = teach_messages(name, utterance, steps, generalized)
        try:
            value, usage = self._ask(messages, teach_schema(name, len(generalized)))
        except BackendError:
            value, usage = None, Usage(calls=1)
        if isinstance(value, dict):
            params, doc = tuple(value.get("params", ())), " ".join(str(value.get("doc", "")).split())
            if len(params) == len(generalized) and usable_params(params, taken) and doc and value.get("name") == name:
                return Signature(name, params, doc[:MAX_DOC]), usage
        params = fallback_params(len(generalized))
        marks = dict(zip(generalized, params, strict=True))
        shown = "; ".join(f"{c.action}({', '.join(marks.get(str(a), str(a).upper()) for a in c.args)})"
                          for c in steps)
        return Signature(name, params, f"Does {shown}."[:MAX_DOC], synthesized=False), usage

    def _ask(self, messages: list[dict], schema: dict) -> tuple[Any, Usage]:
        start = self.clock()
        value = self.llm.json(messages, schema, max_tokens=self.max_tokens, temperature=self.temperature,
                              seed=self.seed)
        seconds = self.clock() - start
        prompt = "\n".join(m["content"] for m in messages)
        usage = Usage(1, self.llm.count_tokens(prompt), self.llm.count_tokens(json.dumps(value, ensure_ascii=False)),
                      seconds)
        return value, usage

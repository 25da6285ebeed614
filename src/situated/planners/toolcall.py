"""Vocal Sandbox's planner: a spoken utterance becomes calls over an API that grows as the user teaches it.

The prompt follows the paper (PROTOCOLS.md §3), written anew: a system prompt that describes the collaboration,
asks for tolerance of speech-to-text errors and says what to do about unknown objects and behaviours; the known
objects rendered as a Python `Enum` class with a docstring (comment) per member; the functions (the paper's tool
specifications) as one-line Python stubs with their docstrings (`render_functions`); a few fixed in-context
examples built from the scene's own objects; then the running memory — every exchange of this session, appended
as it happens.

The answer is decoded under a JSON schema regenerated from the API at every call. Calls are written as terse
strings (`"pickup(CANDY)"`, `"release()"`) whose function names and object arguments the schema spells out, so
the model cannot name a function or object that does not exist; the goal's pairs likewise (`"CANDY in GIFT_BAG"`).
The terse form costs about half the tokens of `{"function": ..., "args": {...}}` objects (measured: 19 against
37 tokens for one pickup, 33 against 73 for a put), which is most of each turn's model time on 2 cores.
An utterance that needs something the API lacks has its own answers in the schema,
``{"unknown_behaviour": "pack", "objects": [...]}`` and ``{"unknown_object": "marker"}``, never a made-up
call. Answers are read as data (`read_answer`); nothing a model writes is executed.

`teach` is the paper's forced `teach_function` step: from the utterance that asked for an unknown behaviour
and the calls the user then showed, the model writes the new behaviour's parameter names and docstring (its
name is the unknown behaviour's word), again under a JSON schema.

Decoding is greedy (temperature 0); the paper used gpt-3.5-turbo at temperature 0.2.
"""

from __future__ import annotations

import itertools
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
from ..program import DANGEROUS_NAMES, Call, Condition
from .action_word import action_messages, action_schema
from .item_meant import ITEM
from .lesson_end import (
    ANNOUNCE_SCHEMA,
    LESSON_END,
    LESSON_SCHEMA,
    START_SCHEMA,
    STEP_SCHEMA,
    announce_messages,
    last_step_messages,
    lesson_messages,
    start_messages,
    step_messages,
)
from .let_go import HOLD, LET_GO_SCHEMA, let_go_messages
from .naming import naming_messages, naming_schema
from .one_of_two import OneOfTwo
from .place_meant import PLACE
from .request_kind import REQUEST_SCHEMA, request_messages
from .taught_reading import READING_SCHEMA, STATED, reading_messages
from .verb_kind import NEW as NEW_VERB
from .verb_kind import VERB_SCHEMA, verb_messages
from .verb_slip import slip_verb_messages, slip_verb_schema

WORD_PATTERN = "^[a-z][a-z0-9_]{0,39}$"
"""A new behaviour's or object's name as the model may write it (snake_case, at most 40 characters)."""
PARAM_PATTERN = "^[a-z][a-z0-9_]{0,19}$"
MAX_CALLS = 16
"""Most calls in one answer."""
MAX_OBJECTS = 4
"""Most objects named with an unknown behaviour."""
MAX_DOC = 160
MAX_GOAL = 4
"""Most item–place pairs in a goal."""
MEMORY_LIMIT = 30
"""Most exchanges in the running memory (the paper kept every one). Past it the oldest half is dropped at once,
so the prompt's prefix changes once every `MEMORY_LIMIT // 2` turns rather than at every turn."""
_WORD = re.compile(WORD_PATTERN[1:-1])
_RESERVED_PARAMS = frozenset({"to", "on", "hands", "def", "assert", "pass", "not", "is", "in"})


# -------------------------------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True)
class ObjectEntry:
    """One member of the `Object` enum: its plan name (`gift_bag`) and docstring."""

    name: str
    doc: str = ""
    kind: str = "item"
    """"item" (can be picked up), "container" (holds items) or "place" (the table, a taught spot)."""

    @property
    def member(self) -> str:
        """The enum member's name, as the model writes it: `GIFT_BAG`."""
        return self.name.upper()


@dataclass(frozen=True)
class PlannedCalls:
    """The utterance maps to these calls of the API (object arguments are plan names: `'gift_bag'`)."""

    calls: tuple[Call, ...]
    goal: tuple[Condition, ...] = ()
    """What the request should make true, as the model stated it (`'candy' in 'gift_bag'`)."""


@dataclass(frozen=True)
class UnknownBehaviour:
    """The utterance asks for an action no function performs; `objects` are the objects it named."""

    name: str
    objects: tuple[str, ...] = ()


@dataclass(frozen=True)
class UnknownObject:
    """The utterance names a thing that is not a known object."""

    name: str


@dataclass(frozen=True)
class UnknownSkill:
    """The utterance asks for a motion of the arm no function makes (to be demonstrated); `objects` as named."""

    name: str
    objects: tuple[str, ...] = ()


Answer = PlannedCalls | UnknownBehaviour | UnknownObject | UnknownSkill


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
    context: str = ""
    """The turn's context (state, newly taught names) the utterance was asked in."""
    announces: tuple[str, ...] = ()


@dataclass(frozen=True)
class Exchange:
    """One turn of the running memory: what the user said, the planner's JSON answer, and the context the turn
    was asked in (the robot's state then, functions and objects taught since the prompt began)."""

    utterance: str
    answer: dict[str, Any]
    context: str = ""
    announces: tuple[str, ...] = ()
    """Names of functions and objects this turn's context introduced."""

    @property
    def message(self) -> str:
        """The user message of this turn."""
        return f"{self.context}\nRequest: {self.utterance}" if self.context else self.utterance


@dataclass
class Memory:
    """The running memory of one session: every exchange, appended as it happens (at most `limit` kept)."""

    exchanges: list[Exchange] = field(default_factory=list)
    limit: int = MEMORY_LIMIT
    base: tuple[ActionSpace, tuple[ObjectEntry, ...]] | None = None
    """The API the system prompt was written with (fixed at the first turn, so the prompt only grows)."""

    def announced(self) -> set[str]:
        """Functions and objects the prompt already shows: the system prompt's, and those turns introduced."""
        if self.base is None:
            return set()
        space, objects = self.base
        return {*space.names, *(o.name for o in objects), *(n for e in self.exchanges for n in e.announces)}

    def append(self, exchange: Exchange) -> None:
        self.exchanges.append(exchange)
        if len(self.exchanges) > self.limit:
            del self.exchanges[:len(self.exchanges) - self.limit // 2]

    def replace(self, utterance: str, answer: dict[str, Any]) -> bool:
        """Give the newest exchange of `utterance` another answer (e.g. the call of a behaviour taught since)."""
        for i in range(len(self.exchanges) - 1, -1, -1):
            if self.exchanges[i].utterance == utterance:
                old = self.exchanges[i]
                self.exchanges[i] = Exchange(utterance, answer, old.context, old.announces)
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
a speech-to-text engine writes down what they say, and you turn each request into calls of the robot's Python \
API below. The robot tries your calls on a copy of the table, shows them to the person, who confirms, corrects \
or cancels them, and then runs them. The person can also teach the robot new objects (by pointing at them) and \
new behaviours (by showing the steps one at a time), which then join the API.

Each request comes after the robot's state: what the gripper holds and where every object is. Plan from that \
state: an object already in the gripper needs no pickup (another one needs a release first), and "it" or "that" \
is usually the object in the gripper or the one just mentioned. Things are moved by composing the functions: \
pickup(the item), goto(where it should go), release(). The TABLE is a place: put an item on it with \
goto(TABLE) and release().

The speech-to-text engine makes mistakes. Read each request for what the person meant, for example:
- "put the candie in the gift back" means the CANDY and the GIFT_BAG;
- "go to the tree" may mean the TRAY; "the duk" means the DUCK.
Always write an object as the name of its `Object` member.

Answer with one JSON object in one of three forms:
1. {"goal": ["<ITEM> in <CONTAINER>", "<ITEM> on <PLACE>", "<ITEM> in GRIPPER", ...], "calls": \
["<function>(<OBJECT>, ...)", ...]}: the goal says where each item the request moves should end up (in a \
container, on the TABLE, or in the GRIPPER when it should be held); it is empty when the request only moves the \
arm or the gripper. The calls do it, in order, each written as a Python call with objects as `Object` members.
2. {"unknown_behaviour": "<word>", "objects": ["<OBJECT>", ...]}: the person asked for an action that is none of \
the functions (a new verb, such as "wave" or "stack"). Give the action's name in snake_case, as the person said \
it ("wave at me": wave; "make a sandwich with the bread": make_sandwich), and the objects the person named. \
Do not imitate the action with other functions: the person will teach it. A behaviour the person \
taught is one of the functions: call it.
3. {"unknown_object": "<word>"}: the person named a thing that is no `Object` member, even allowing for \
speech-to-text errors. Give its name in snake_case. Do not use another object instead: the person will point at it.
{motions}Never invent a function or an object.

The objects:
```python
{objects}
```

The functions:
```python
{functions}
```
"""
MOTION_FORM = """\
One more form: {"unknown_skill": "<word>", "objects": ["<OBJECT>", ...]}: the person asked for a movement of \
the arm that none of the functions makes, a gesture or a motion done at or with an object rather than a task of \
several steps. Give the motion's name in snake_case and the objects the person named: the person will show the motion \
by moving the arm. A motion the person showed is one of the functions: call it.
"""
"""The missing-motion answer form, offered when the person can demonstrate motions (`ToolCallPlanner(motions=True)`)."""
MOTION_WORDS = ("tap", "nudge", "circle", "shake")
"""Verbs for the in-context example of a missing motion (the first that the API does not have)."""
GRIPPER = "GRIPPER"
"""The goal's word for "held by the robot"."""
GRIPPER_NAMES = ("gripper", "hand", "hands")
"""What people call the robot's gripper ("open your hand"): never an unknown object to point at."""


def render_objects(objects: Sequence[ObjectEntry]) -> str:
    """The known objects as a Python `Enum` class, one member per object with its docstring as a comment."""
    lines = ["from enum import Enum, auto", "", "", "class Object(Enum):",
             '    """The objects the robot knows, at the table or taught by the person."""', ""]
    lines += [_object_line(entry) for entry in objects]
    if not objects:
        lines.append("    pass")
    return "\n".join(lines)


def _object_line(entry: ObjectEntry) -> str:
    doc = " ".join(entry.doc.split())
    return f"    {entry.member} = auto()" + (f"  # {doc}" if doc else "")


def render_functions(space: ActionSpace) -> str:
    """The API's functions as Python stubs, one a line (`def goto(obj: Object): \"\"\"...\"\"\"`): object parameters
    typed as `Object`, each parameter's meaning and a taught behaviour's steps in the docstring."""
    return "\n".join(_function_line(action) for action in space.actions)


def _function_line(action: Any) -> str:
    params = ", ".join(f"{p.name}: {'Object' if p.kind == 'object' else 'str'}" for p in action.params)
    words = [" ".join(action.doc.split())]
    words += [f"{p.name}: {' '.join(p.doc.split())}." for p in action.params if p.doc]
    if isinstance(action, Behaviour):
        words += [behaviour_steps(action), "(A behaviour the person taught.)"]
    doc = " ".join(w for w in words if w).replace('"""', "'")  # a taught docstring cannot end the stub's
    return f'def {action.name}({params}): """{doc}"""'


def behaviour_steps(action: Behaviour) -> str:
    """What a taught behaviour runs, in the words the prompt uses (`Steps: pickup(item); goto(GIFT_BAG);
    release().`), so it reads the same just taught and after a library reload."""
    lines = [" ".join(line.split()) for line in action.body.splitlines() if line.strip()]
    steps = "; ".join(re.sub(r"'([a-z0-9_]+)'", lambda m: m.group(1).upper(), line) for line in lines)
    return f"Steps: {steps}." if steps else ""


def system_prompt(space: ActionSpace, objects: Sequence[ObjectEntry], motions: bool = False) -> str:
    """The system message: collaboration, state, speech errors, the answer forms (with the missing-motion form
    when `motions`), the objects, the functions."""
    return SYSTEM_PROMPT.replace("{motions}", MOTION_FORM if motions else "").replace(
        "{objects}", render_objects(objects)).replace("{functions}", render_functions(space))


# -------------------------------------------------------------------------------------------------------------
# The robot's state, as each turn states it


@dataclass(frozen=True)
class TableState:
    """What each turn tells the planner: what the gripper holds, what is in or on each place, and what became of
    the last plan. Names are plan names (`gift_bag`); `places` lists containers and places in order."""

    held: str | None
    where: dict[str, str]
    places: tuple[str, ...]
    last: str = ""
    lesson: tuple[str, ...] = ()
    """During a lesson: the behaviour's name, then the objects the request named (plan names)."""

    def text(self) -> str:
        """`State: the gripper holds CANDY. In GIFT_BAG: BALL. In TRAY: nothing. On TABLE: CUBE, DUCK.`, then
        the last plan's outcome and the lesson under way, if any."""
        parts = [f"the gripper holds {self.held.upper() if self.held else 'nothing'}"]
        for place in self.places:
            inside = sorted(i.upper() for i, p in self.where.items() if p == place)
            word = "On" if place == "table" else "In"
            parts.append(f"{word} {place.upper()}: {', '.join(inside) or 'nothing'}")
        others = sorted(f"{i.upper()} on {p.upper()}" for i, p in self.where.items() if p not in self.places)
        parts += others
        out = "State: " + ". ".join(parts) + "."
        if self.last:
            out += f"\nLast plan: {self.last}"
        if self.lesson:  # what "it" stands for while the steps are shown (measured: "grab it" took the first item)
            name, *named = self.lesson
            what = " and ".join(o.upper() for o in named)
            out += f"\nLesson: the person is showing how to {_words(name)}{' ' + what if what else ''}, one step " \
                   "at a time."
        return out


def turn_context(state: TableState | None, space: ActionSpace, objects: Sequence[ObjectEntry],
                 memory: Memory) -> tuple[str, tuple[str, ...]]:
    """The context of a new turn: functions and objects taught since the prompt was written (each announced once)
    and the state. Returns the text and the names it announces."""
    known = memory.announced()
    lines, names = [], []
    for action in space.actions:
        if action.name not in known:
            lines.append(f"New function: {_function_line(action)}")
            names.append(action.name)
    for entry in objects:
        if entry.name not in known:
            lines.append(f"New object: {_object_line(entry).strip()}")
            names.append(entry.name)
    if state is not None:
        lines.append(state.text())
    return "\n".join(lines), tuple(names)


# -------------------------------------------------------------------------------------------------------------
# In-context examples, generated from the API and the scene


def answer_call(function: str, *args: str) -> str:
    """A call as the answer writes it: `pickup(CANDY)`, `release()` (objects as members)."""
    return f"{function}({', '.join(a.upper() for a in args)})"


def goal_text(item: str, place: str, kind: str) -> str:
    """One goal pair as the answer writes it: `CANDY in GIFT_BAG` (a container, or the GRIPPER), `BALL on TABLE`
    (any other place)."""
    word = "in" if kind == "container" or place.upper() == GRIPPER else "on"
    return f"{item.upper()} {word} {place.upper()}"


def _words(name: str) -> str:
    return name.replace("_", " ")


def slip(name: str) -> str:
    """A speech-to-text slip of an object's name, made from its spelling (the last vowel doubled or dropped)."""
    words = _words(name)
    for i in range(len(words) - 1, 0, -1):
        if words[i] in "aeiouy" and words[i - 1].isalpha():
            return words[:i] + ("" if i < len(words) - 1 else "ie") + words[i + 1:]
    return words + "e"


def example_exchanges(space: ActionSpace, objects: Sequence[ObjectEntry],
                      containers: Iterable[str] = (), motions: bool = False) -> list[Exchange]:
    """In-context examples built from this API and scene: requests composed of several seed skills (a misspelled
    one among them), an item handed to the person and one grabbed to be held (both held), moves of the arm alone
    while holding it ("go to", "hold it over": no goal), a pronoun for the held item, the table as a place, two
    items at once, a correction, a taught behaviour if there is one, arm-only requests, and each unknown answer.
    Each shows a state made of the scene's own objects. With `motions`, a missing motion too (`motion_example`)."""
    if motions:  # a gesture is a motion to be shown, not a behaviour: the "wave at me" lesson is left out
        plain = [e for e in example_exchanges(space, objects, containers) if e.utterance != "wave at me"]
        return [*plain, *motion_example(space, objects, plain[-1].context if plain else "")]
    held_in = set(containers)
    holders = [o.name for o in objects if o.kind == "container" or o.name in held_in]
    items = [o.name for o in objects if o.kind == "item" and o.name not in held_in]
    if not holders or len(items) < 2:
        return _unknown_examples(items, "")
    box, other_box = holders[0], holders[-1]
    kinds = {o.name: "container" if o.name in held_in else o.kind for o in objects}
    a, b = items[0], items[1]
    c = items[2] if len(items) > 2 else items[0]
    places = (*holders, "table")

    def state(held: str | None = None, **moved: str) -> str:
        where = {i: moved.get(i, "table") for i in items if i != held}
        return TableState(held, where, places).text()

    def _goal(*pairs: tuple[str, str]) -> list[str]:
        return [goal_text(item, place, kinds.get(place, "")) for item, place in pairs]

    def ex(text: str, ctx: str, goal: list, *calls: str) -> Exchange:
        return Exchange(text, {"goal": goal, "calls": list(calls)}, ctx)

    put = (answer_call("goto", box), answer_call("release"))
    out = [
        ex(f"could you put the {slip(a)} in the {_words(box)} please", state(), _goal((a, box)),
           answer_call("pickup", a), *put),
        ex(f"hand me the {_words(c)}", state(**{a: box}), _goal((c, GRIPPER)), answer_call("pickup", c)),
        ex(f"grab the {_words(b)} and hold it", state(**{a: box}), _goal((b, GRIPPER)), answer_call("pickup", b)),
        ex(f"go to the {_words(box)}", state(b, **{a: box}), [], answer_call("goto", box)),
        ex(f"hold it over the {_words(other_box)}", state(b, **{a: box}), [], answer_call("goto", other_box)),
        ex(f"now drop it in the {_words(other_box)}", state(b, **{a: box}), _goal((b, other_box)),
           answer_call("goto", other_box), answer_call("release")),
        ex(f"put the {_words(c)} and the {_words(a)} in the {_words(box)}", state(**{b: other_box}),
           _goal((c, box), (a, box)), answer_call("pickup", c), *put, answer_call("pickup", a), *put),
        ex(f"pick up the {_words(b)}. Correction: no, the {_words(c)}", state(), _goal((c, GRIPPER)),
           answer_call("pickup", c)),
        ex("go back home", state(a), [], answer_call("go_home")),
    ]
    if "table" in {o.name for o in objects}:
        out.insert(5, ex(f"take the {_words(a)} out and put it on the table", state(**{a: box, b: other_box}),
                         _goal((a, "table")), answer_call("pickup", a), answer_call("goto", "table"),
                         answer_call("release")))
    behaviour = next((x for x in space.actions if isinstance(x, Behaviour) and len(x.params) == 1), None)
    if behaviour is not None:
        out.append(ex(f"{_words(behaviour.name)} the {_words(b)}", state(), [],
                      answer_call(behaviour.name, b)))
    return out + _unknown_examples(items, state())


def _unknown_examples(items: Sequence[str], context: str) -> list[Exchange]:
    out = [Exchange("wave at me", {"unknown_behaviour": "wave", "objects": []}, context)]
    if items:
        out.append(Exchange(f"polish the {_words(items[-1])}",
                            {"unknown_behaviour": "polish", "objects": [items[-1].upper()]}, context))
    stranger = next(n for n in ("stapler", "teapot", "scissors") if n not in items)
    out.append(Exchange(f"go to the {stranger}", {"unknown_object": stranger}, context))
    return out


def _call_of(answer: UnknownBehaviour, space: ActionSpace) -> Call | None:
    """The call an unknown-behaviour answer stands for when its name is a function of the API whose object
    parameters match the objects it named, one to one (`{"unknown_behaviour": "pack", "objects": ["DUCK"]}`
    with `pack(item)` taught: `pack('duck')`); None otherwise."""
    if answer.name not in space:
        return None
    params = space.get(answer.name).params
    if len(params) != len(answer.objects) or any(p.kind != "object" for p in params):
        return None
    return Call(answer.name, answer.objects)


def shown_words(examples: Iterable[Exchange]) -> frozenset[str]:
    """The words of the example requests answered with calls: an unknown behaviour named by one of them
    contradicts the prompt's own examples (the model answered "put" unknown though an example puts with
    pickup, goto and release). Read against the model's answer, never the person's utterance."""
    return frozenset(w for e in examples if "calls" in e.answer for w in _tokens(e.utterance))


def doc_verbs(space: ActionSpace) -> frozenset[str]:
    """The verb each seed skill's documentation starts with (release: "Open the gripper and let go ..."): an
    unknown behaviour named by one of them is a word the API itself uses for one of its functions ("open your
    gripper" answered as the unknown behaviour `open`). Taught behaviours' docstrings, written by the model, are
    left out."""
    return frozenset(_tokens(a.doc)[0] for a in space.actions if not isinstance(a, Behaviour) and _tokens(a.doc))


def grounded(name: str, utterance: str, stems: bool = False) -> bool:
    """Whether an unknown object's name is something the person said: each of its words is a word of the
    request, or one edit from one (a slip the model copied or mended). A name the request never says is the
    model's invention (measured: "stow the apple" answered as the unknown object "stapler" from an example).
    `stems`: a word also counts when it shares all but its last letter with one ("serve" said as "serving")."""
    words = _tokens(utterance)

    def near(part: str, word: str) -> bool:
        if part == word or (len(part) >= 3 and _one_edit(part, word)):
            return True
        return stems and len(part) >= 3 and word.startswith(part[:max(3, len(part) - 1)])

    return all(any(near(part, w) for w in words) for part in name.split("_"))


def verb_said(name: str, utterance: str) -> bool:
    """Whether an unknown behaviour's name is the person's (`grounded`, stems allowed: "tidy" said as
    "tidying"). A behaviour the person never named is the model's guess, copied from an example (measured: "Hi
    there! Could you put the candy into the gift bag?" answered as the example's `wave`)."""
    return grounded(name, utterance, stems=True)


def as_said(name: str, utterance: str) -> str:
    """A name from the model's unknown answer in the person's own words: each of its words that the request does
    not say, but says one edit away (the only such word), becomes the word said ("blick the bottle" answered
    `blink`: `blick`)."""
    words = _tokens(utterance)
    parts = []
    for part in name.split("_"):
        near = [] if part in words or len(part) < 3 else list(dict.fromkeys(w for w in words if _one_edit(part, w)))
        parts.append(near[0] if len(near) == 1 else part)
    return "_".join(parts)


def said(name: str, utterance: str, besides: str = "") -> bool:
    """Whether a known object's name is something the person said: one of its words (three letters or more) is
    a word of the request, or close to one (one edit for short words, two for words of five letters or more:
    "candie" for the CANDY, "toys" for the TOY_CAR), or sounds like one ("apel", `sounds_like`). Read against the
    model's answer: an object an unknown behaviour's answer lists that the request never names is the model's
    guess ("clear away the toys" came back with the cube too), and a lesson's parameters must be what the person
    asked about. `besides`: a name (the model's unknown behaviour, `make_gift`) whose words do not count ("make a
    gift with the duck" does not name the GIFT_BAG)."""
    return bool(said_words(name, utterance, besides))


def said_words(name: str, utterance: str, besides: str = "") -> list[str]:
    """The words of the request that say a known object's name, as `said` reads them ("gift" of "make a gift
    with the duck" for the GIFT_BAG). Two neighbouring words count as one too: speech-to-text splits names
    ("straw berry" for the STRAWBERRY)."""
    skip = besides.split("_") if besides else []
    words = [w for w in _tokens(utterance) if not any(_close(p, w) for p in skip)]
    parts = [part for part in name.split("_") if len(part) >= 3]
    out = [w for w in words if any(_heard_as(part, w) for part in parts)]
    # joined words match by spelling only, and only long parts: by sound, "the ball" would say TABLE
    joined = [a + b for a, b in itertools.pairwise(words) if min(len(a), len(b)) >= 3]
    return out + [w for w in joined if any(len(part) >= 6 and _close(part, w) for part in parts)]


def _close(a: str, b: str) -> bool:
    if a == b:
        return True
    if min(len(a), len(b)) < 3:
        return False
    return _edits(a, b, 2 if min(len(a), len(b)) >= 5 else 1)


def _edits(a: str, b: str, limit: int) -> bool:
    """Whether `a` becomes `b` by at most `limit` substitutions, insertions or deletions."""
    if abs(len(a) - len(b)) > limit:
        return False
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1] <= limit


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def motion_example(space: ActionSpace, objects: Sequence[ObjectEntry], context: str = "") -> list[Exchange]:
    """The missing-motion answer, for a verb of `MOTION_WORDS` the API lacks, done at the scene's first item."""
    items = [o.name for o in objects if o.kind == "item"]
    verb = next((w for w in MOTION_WORDS if w not in space and w not in items), None)
    if verb is None or not items:
        return []
    return [Exchange(f"{verb} the {_words(items[0])}", {"unknown_skill": verb, "objects": [items[0].upper()]},
                     context)]


def names_known(name: str, known: Iterable[str], *, parts: bool = True) -> bool:
    """Whether a name in an unknown answer (the model's output, not the utterance) stands for a known name: the
    same, one edit away (for names of three letters or more), a name's start of four letters or more
    (`pick`: `pickup`), or — with `parts` — one of a name's words (`gift`: `gift_bag`)."""
    for other in known:
        if name == other or (len(name) >= 4 and other.startswith(name)) or (len(name) >= 3 and _one_edit(name, other)):
            return True
        if parts and name in other.split("_"):
            return True
    return False


def _head_known(name: str, objects: Sequence[str]) -> bool:
    """Whether an unknown object's name of several words ends in a known object's name, or a slip of one: the
    known object described ("rubber_ducky" for the DUCK, "tennis_ball" for the BALL), not a new thing."""
    parts = name.split("_")
    return len(parts) > 1 and (names_known(parts[-1], objects, parts=False) or misheard(parts[-1], objects))


def misheard(name: str, objects: Iterable[str], *, parts: bool = True, alike: bool = True) -> bool:
    """Whether a name in the model's unknown answer is a speech-to-text slip of a known object's name: within
    `_close`'s edits of the whole name or (with `parts`) of one of its words of four letters or more, or sounding
    the same (`sounds_like`: "apel" for the APPLE, "plait" for the PLATE), or (with `alike`: for names of
    things, not verbs, which "pour" and "pear" would confuse) short words sounding alike (`_homophones`: "pair" for
    the PEAR)."""
    for other in objects:
        words = [w for w in other.split("_") if len(w) >= 4 and w != other] if parts else []
        for target in (other, *words):
            if _heard_as(name, target) or (alike and _homophones(name, target)):
                return True
    return False


def alike_said(name: str, utterance: str) -> list[str]:
    """The words of the request that sound like one of a name's words of four letters or more (`_homophones`:
    "pair" for the PEAR). Read only where the model's calls are about items the request never names."""
    parts = [part for part in name.split("_") if len(part) >= 4]
    return [w for w in _tokens(utterance) if any(_homophones(w, part) for part in parts)]


def _homophones(a: str, b: str) -> bool:
    """Whether two words of four letters or more, two edits apart at most, have the same consonants in the same
    order ("pair" and "pear", "bole" and "bowl"; not "desk" and "duck"): short words that sound alike, which
    `sounds_like` leaves out. Read of a name the model gave as unknown, and of a request's words only where the
    model's calls are about items it never names (`alike_said`)."""
    return min(len(a), len(b)) >= 4 and _consonants(a) == _consonants(b) and _edits(a, b, 2)


def _consonants(word: str) -> str:
    """The consonants of a word in order, a doubled one once ("ball": bl)."""
    letters = [c for c in word.lower() if c.isalpha() and c not in "aeiouhwy"]
    return "".join(c for i, c in enumerate(letters) if i == 0 or c != letters[i - 1])


def _heard_as(a: str, b: str) -> bool:
    """Whether speech-to-text may have written one word for the other: a few edits apart, or the same sound."""
    return _close(a, b) or sounds_like(a, b)


_SOUNDS = {**dict.fromkeys("bfpv", "1"), **dict.fromkeys("cgjkqsxz", "2"), **dict.fromkeys("dt", "3"), "l": "4",
           **dict.fromkeys("mn", "5"), "r": "6"}


def sounds_like(a: str, b: str) -> bool:
    """Whether two words share a Soundex-like key: the first letter, then the consonants by sound class (repeats
    and vowels dropped). Only keys with two classes or more count: shorter ones collide too often."""
    key_a, key_b = _sound_key(a), _sound_key(b)
    return key_a is not None and key_a == key_b


def _sound_key(word: str) -> str | None:
    letters = [c for c in word.lower() if c.isalpha()]
    if not letters:
        return None
    codes, last = [], _SOUNDS.get(letters[0], "0")
    for c in letters[1:]:
        code = _SOUNDS.get(c, "0")
        if code != last and code != "0":
            codes.append(code)
        if c not in "hw":
            last = code
    return letters[0] + "".join(codes) if len(codes) >= 2 else None


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` becomes `b` by one substitution, insertion, deletion or swap of two neighbouring letters (a
    typing slip: "bni" for `bin`, "pakc" for `pack`)."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b) and (i := next(k for k, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)) < len(a) - 1 \
            and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2:] == b[i + 2:]:
        return True
    if len(a) > len(b):
        a, b = b, a
    i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(a))
    return a[i + (len(a) == len(b)):] == b[i + 1:]


def dumps(answer: dict[str, Any]) -> str:
    """An answer as the assistant's message text (the same form in examples and memory). With JSON's spaces: the
    compact form (16 tokens against 19 for one pickup; tried with compact function specifications) met 141 of 167
    expectations of examples/sandbox against 153 with spaces (1.5B, greedy, one run each, docs/sandbox.md)."""
    return json.dumps(answer, ensure_ascii=False)


# -------------------------------------------------------------------------------------------------------------
# Schema and reading


def goal_schema(objects: Sequence[ObjectEntry]) -> dict:
    """A goal: at most `MAX_GOAL` pairs of an item and where it should end up (a container, a place, or the
    GRIPPER), each a string `ITEM in PLACE` or `ITEM on PLACE`. Both words are offered for every container and
    place, as people say them ("on the plate", "in the tray"): a word the schema lacked would force the model onto
    another place (measured: "put the apple on the plate" became the goal `APPLE on TABLE`)."""
    items = [o.member for o in objects if o.kind == "item"]
    places = [o.member for o in objects if o.kind != "item"]
    if not items:
        return {"type": "array", "maxItems": 0}
    pairs = [f"{i} {word} {p}" for i in items for p in places for word in ("in", "on")]
    pairs += [f"{i} in {GRIPPER}" for i in items]
    return {"type": "array", "maxItems": MAX_GOAL, "items": {"enum": pairs}}


def call_schema(action: Any, members: Sequence[str]) -> dict:
    """One function's calls as `answer_call` writes them: a constant for a function without parameters, else a
    pattern whose arguments are alternations of the known members (an enum of every combination would grow as
    members ** parameters)."""
    if not action.params:
        return {"const": f"{action.name}()"}
    one = "(" + "|".join(re.escape(m) for m in members) + ")"
    return {"type": "string", "pattern": f"^{re.escape(action.name)}\\({', '.join([one] * len(action.params))}\\)$"}


def answer_schema(space: ActionSpace, objects: Sequence[ObjectEntry], *, max_calls: int = MAX_CALLS,
                  unknown_behaviour: bool = True, unknown_object: bool = True, unknown_skill: bool = False,
                  behaviour_names: Sequence[str] = ()) -> dict:
    """The JSON schema of an answer, regenerated from the API: a goal over the known objects and calls, each
    function one alternative whose `function` is that name and whose `args` are exactly its parameters, each an
    enum of the known objects; or one of the two unknown answers (each can be left out). `behaviour_names`: the
    only names the unknown-behaviour answer may give (any word when empty)."""
    members = [o.member for o in objects]
    call_forms = [call_schema(action, members) for action in space.actions if members or not action.params]
    forms: list[dict] = []
    if call_forms:
        forms.append({"type": "object",
                      "properties": {"goal": goal_schema(objects),
                                     "calls": {"type": "array", "minItems": 1, "maxItems": max_calls,
                                               "items": {"anyOf": call_forms}}},
                      "required": ["goal", "calls"], "additionalProperties": False})
    named: dict = {"type": "array", "maxItems": MAX_OBJECTS, "items": {"enum": members}} if members else {
        "type": "array", "maxItems": 0}
    if unknown_behaviour or not forms:
        forms.append({"type": "object",
                      "properties": {"unknown_behaviour": {"enum": list(behaviour_names)} if behaviour_names else {
                                         "type": "string", "pattern": WORD_PATTERN}, "objects": named},
                      "required": ["unknown_behaviour", "objects"], "additionalProperties": False})
    if unknown_object:
        forms.append({"type": "object",
                      "properties": {"unknown_object": {"type": "string", "pattern": WORD_PATTERN}},
                      "required": ["unknown_object"], "additionalProperties": False})
    if unknown_skill:
        forms.append({"type": "object",
                      "properties": {"unknown_skill": {"type": "string", "pattern": WORD_PATTERN}, "objects": named},
                      "required": ["unknown_skill", "objects"], "additionalProperties": False})
    return {"anyOf": forms}


_GOAL_TEXT = re.compile(r"([A-Z][A-Z0-9_]*) (in|on) ([A-Z][A-Z0-9_]*)")
_CALL_TEXT = re.compile(r"([a-z][a-z0-9_]*)\(([A-Z0-9_, ]*)\)")


def read_goal(value: Any, by_member: dict[str, str], kinds: dict[str, str]) -> tuple[Condition, ...]:
    """The goal's pairs as plan-language conditions: `'candy' in 'gift_bag'`, `'ball' on 'table'`,
    `'ball' in 'hands'`; ValueError naming the problem."""
    if not isinstance(value, list) or len(value) > MAX_GOAL:
        raise ValueError(f"'goal' must be a list of at most {MAX_GOAL} pairs")
    out = []
    for pair in value:
        match = _GOAL_TEXT.fullmatch(pair) if isinstance(pair, str) else None
        if match is None:
            raise ValueError(f"goal {pair!r} is not '<ITEM> in <PLACE>' or '<ITEM> on <PLACE>'")
        item, word, place = match.groups()
        if item not in by_member or kinds[item] != "item":
            raise ValueError(f"{item!r} is not a known item")
        if place == GRIPPER and word == "in":
            out.append(Condition("holds", (by_member[item],)))
        elif place in by_member and place != item and kinds[place] != "item":
            kind = "inside" if kinds[place] == "container" else "on"
            out.append(Condition(kind, (by_member[item], by_member[place])))
        else:
            raise ValueError(f"{place!r} is not a known place")
    return tuple(dict.fromkeys(out))


def read_call(text: Any, space: ActionSpace, member: Callable[[str], str]) -> Call:
    """One call of the answer (`pickup(CANDY)`) as a `Call` over plan names; ValueError naming the problem.
    `member` maps an `Object` member to its plan name (ValueError when it is none)."""
    match = _CALL_TEXT.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"call {text!r} is not '<function>(<OBJECT>, ...)'")
    name, inside = match.groups()
    if name not in space:
        raise ValueError(f"unknown function {name!r}")
    args = inside.split(", ") if inside else []
    params = space.get(name).params
    if len(args) != len(params):
        raise ValueError(f"{name} takes {[p.name for p in params]}, got {len(args)} arguments")
    return Call(name, tuple(member(a) for a in args))


def read_answer(value: Any, space: ActionSpace, objects: Sequence[ObjectEntry]) -> Answer:
    """The model's JSON answer as data; BackendError naming the problem when it does not fit the API (a backend
    that ignored the schema). A calls answer without a goal is read with an empty goal."""
    by_member = {o.member: o.name for o in objects}
    kinds = {o.member: o.kind for o in objects}

    def bad(problem: str) -> BackendError:
        return BackendError(f"planner answer {json.dumps(value)[:160]}: {problem}")

    def member(item: Any) -> str:
        if not isinstance(item, str) or item not in by_member:
            raise ValueError(f"{item!r} is not a known object")
        return by_member[item]

    def word(item: Any) -> str:
        if not isinstance(item, str) or not _WORD.fullmatch(item):
            raise bad(f"{item!r} is not a snake_case name")
        return item

    if not isinstance(value, dict) or len(value) not in (1, 2):
        raise bad("expected an object with 'calls', 'unknown_behaviour' or 'unknown_object'")
    if set(value) == {"unknown_object"}:
        return UnknownObject(word(value["unknown_object"]))
    try:
        if set(value) in ({"unknown_behaviour", "objects"}, {"unknown_skill", "objects"}):
            named = value["objects"]
            if not isinstance(named, list) or len(named) > MAX_OBJECTS:
                raise ValueError(f"'objects' must be a list of at most {MAX_OBJECTS} objects")
            unknown = UnknownSkill if "unknown_skill" in value else UnknownBehaviour
            return unknown(word(value.get("unknown_skill", value.get("unknown_behaviour"))),
                           tuple(dict.fromkeys(member(o) for o in named)))
        if set(value) not in ({"calls"}, {"goal", "calls"}):
            raise ValueError(f"unexpected keys {sorted(value)}")
        goal = read_goal(value.get("goal", []), by_member, kinds)
        raw_calls = value["calls"]
        if not isinstance(raw_calls, list) or not 1 <= len(raw_calls) <= MAX_CALLS:
            raise ValueError(f"'calls' must be a list of 1 to {MAX_CALLS} calls")
        calls = tuple(read_call(raw, space, member) for raw in raw_calls)
    except ValueError as err:
        raise bad(str(err)) from None
    return PlannedCalls(calls, goal)


def goal_answer(goal: Sequence[Condition]) -> list[str]:
    """The answer's goal that stands for conditions (the inverse of `read_goal`): `CANDY in GIFT_BAG`."""
    out = []
    for c in goal:
        if c.kind == "holds":
            out.append(goal_text(str(c.args[0]), GRIPPER, ""))
        else:
            out.append(goal_text(str(c.args[0]), str(c.args[1]), "container" if c.kind == "inside" else "place"))
    return out


def answer_of_calls(calls: Sequence[Call], goal: Sequence[Condition] = ()) -> dict[str, Any]:
    """The JSON answer that stands for `calls` and `goal` (what the memory keeps for an utterance once a
    behaviour it asked for has been taught, or once its plan was repaired)."""
    return {"goal": goal_answer(goal), "calls": [answer_call(c.action, *(str(a) for a in c.args)) for c in calls]}


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
# Is an unknown object's name a thing?


TALK = "talk"
"""The unknown-object question's answer for a word only mentioned in passing ("I've got tickets piling up")."""

WORD_PROMPT = """\
A person asked a robot arm for something. Say what one word of the request is to the person: "thing" if it \
names an object or a place the robot should find, "action" if it is part of what the person asks the robot to \
do or to learn (a verb, what is to be made or done, the name of a new behaviour, or the kind of thing a new \
behaviour is for). Answer with JSON.
"""
WORD_EXAMPLES = (
    ("go to the stapler", "stapler", "thing", ()),
    ("wave at me", "wave", "action", ()),
    ("put the marker in the tray", "marker", "thing", ()),
    ("make a sandwich with the bread", "sandwich", "action", ()),
    ("I'll teach you how to polish a shoe", "shoe", "action", ()),
    ('a new trick for you, it is called "flip"', "flip", "action", ()),
)
"""The side question's worked examples (request, word, answer, known objects: none offered): the system prompt's
own unknown examples, and two words of a lesson's announcement (its kind of thing, its name: measured on a
held-out session, "teach you how to hide a fruit, first grab the strawberry" asked the person to point at the
fruit)."""

SLIP_PROMPT = """\
A person asked a robot arm for something; a speech-to-text engine wrote the request down and sometimes \
mishears a name. Say what one word of the request is to the person: the name of one of the robot's known \
objects if the engine misheard that name or if the word only describes that object (its size, colour, look or \
state, as in "the tall mug"), "thing" if it names another object or place the robot should find, "action" if it \
is part of what the person asks the robot to do or to learn (a verb, what is to be made or done, the name of a \
new behaviour, or the kind of thing a new behaviour is for), "talk" if the person only mentions it in passing and \
asks the robot nothing about it. Answer with JSON.
"""
SLIP_EXAMPLES = (
    ("go to the stapler", "stapler", "thing", ("MUG", "SHELF")),
    ("wave at me", "wave", "action", ("MUG", "SHELF")),
    ("put the mug on the shelve", "shelve", "SHELF", ("MUG", "SHELF")),
    ("put the marker in the tray", "marker", "thing", ("CUP", "TRAY")),
    ("hand me the cop", "cop", "CUP", ("CUP", "TRAY")),
    ("pass me the spoon", "spoon", "thing", ("FORK", "MUG")),
    ("make a sandwich with the bread", "sandwich", "action", ("BREAD", "PLATE")),
    ("I'll teach you how to polish a shoe", "shoe", "action", ("BRUSH", "SHELF")),
    ('a new trick for you, it is called "flip"', "flip", "action", ("CUP", "TRAY")),
    ("could you grab the tall mug for me", "tall", "MUG", ("MUG", "SHELF")),
    ("put the stale bread on the plate", "stale", "BREAD", ("BREAD", "PLATE")),
    ("the kitchen is a mess, so put the cup on the shelf", "kitchen", "talk", ("CUP", "SHELF")),
    ("I'm late for my train, quick, hand me the fork", "train", "talk", ("FORK", "MUG")),
)
"""The second side question's worked examples (request, word, answer, known objects): the first's, with the
objects (a lesson's kind of thing and name among them), two misheard names, a thing of the same kind as a known
one, two words that describe a known object and two things only mentioned in passing."""


def word_messages(word: str, utterance: str, known: Sequence[str] | None = None) -> list[dict]:
    """A side question's messages about `word` of `utterance`: is it a thing or part of the action (`known`
    None), or, offered the `Object` members in `known`, also a known object misheard (`SLIP_PROMPT`)?"""
    prompt, examples = (WORD_PROMPT, WORD_EXAMPLES) if known is None else (SLIP_PROMPT, SLIP_EXAMPLES)
    out = [{"role": "system", "content": prompt}]
    for text, name, kind, names in (*examples, (utterance, word, "", tuple(known or ()))):
        offered = "" if known is None else f"Known objects: {', '.join(names)}\n"
        out.append({"role": "user", "content": f"{offered}Request: {text}\nWord: {name}"})
        if kind:
            out.append({"role": "assistant", "content": dumps({"word": name, "is": kind})})
    return out


def word_schema(word: str, known: Sequence[str] = ()) -> dict:
    """A side question's answer: "thing", "action", one of the members offered or (with them) "talk"."""
    kinds = ["thing", "action", *known, *([TALK] if known else [])]
    return {"type": "object", "properties": {"word": {"enum": [word]}, "is": {"enum": kinds}},
            "required": ["word", "is"], "additionalProperties": False}


# -------------------------------------------------------------------------------------------------------------
# Planner


class ToolCallPlanner:
    """Maps utterances to calls over a growing API with one constrained JSON answer per utterance."""

    def __init__(self, llm: LLM, *, temperature: float = 0.0, max_tokens: int = 384, seed: int = 0,
                 clock: Callable[[], float] = time.perf_counter, motions: bool = False) -> None:
        self.llm = llm
        self.motions = motions
        """Whether the person can demonstrate motions: the prompt and schema then offer `unknown_skill`."""
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.clock = clock

    def messages(self, utterance: str, space: ActionSpace, objects: Sequence[ObjectEntry], memory: Memory,
                 containers: Iterable[str] = (), context: str = "") -> list[dict]:
        """System prompt (with the API as it was at the session's first turn), in-context examples, running
        memory, then the utterance after its context. The prompt only grows from turn to turn, so a backend
        that reuses its cache of the prompt's prefix recomputes only the new turn."""
        out = [{"role": "system", "content": system_prompt(*self._base(space, objects, memory), self.motions)}]
        for exchange in (*self.examples(space, objects, memory, containers), *memory.exchanges):
            out.append({"role": "user", "content": exchange.message})
            out.append({"role": "assistant", "content": dumps(exchange.answer)})
        out.append({"role": "user", "content": Exchange(utterance, {}, context).message})
        return out

    @staticmethod
    def _base(space: ActionSpace, objects: Sequence[ObjectEntry],
              memory: Memory) -> tuple[ActionSpace, tuple[ObjectEntry, ...]]:
        if memory.base is None:
            memory.base = (space, tuple(objects))
        return memory.base

    def examples(self, space: ActionSpace, objects: Sequence[ObjectEntry], memory: Memory,
                 containers: Iterable[str] = ()) -> list[Exchange]:
        """The in-context examples, made from the API the system prompt was written with."""
        return example_exchanges(*self._base(space, objects, memory), containers, self.motions)

    def call_words(self, space: ActionSpace, objects: Sequence[ObjectEntry], memory: Memory,
                   containers: Iterable[str] = ()) -> frozenset[str]:
        """Words the prompt itself answers with calls: those of the example requests answered with calls
        (`shown_words`) and the seed skills' first documentation words (`doc_verbs`), objects' words aside."""
        return (shown_words(self.examples(space, objects, memory, containers)) | doc_verbs(space)) - {
            w for o in objects for w in o.name.split("_")}

    def plan(self, utterance: str, space: ActionSpace, objects: Sequence[ObjectEntry], memory: Memory, *,
             containers: Iterable[str] = (), state: TableState | None = None,
             feedback: tuple[dict[str, Any], str] | None = None, lesson: bool = False,
             teaching: bool = True, unknown_object: bool = True, exclude: Iterable[str] = (),
             feedback_unknown: bool = False, behaviour_names: Sequence[str] = ()) -> PlannerReply:
        """One utterance → calls with the goal they should reach, or an explicit unknown answer. The exchange is
        not added to `memory`: the caller does that once it knows what became of the plan (the reply carries
        the turn's context for it). `feedback`: an earlier answer to this utterance and why it fails on the copy
        of the table; the model answers again after it (a bounded rewrite). `lesson`: the person is showing a
        lesson's steps, which are made of what the robot knows, so the unknown-behaviour answer is left out.
        `teaching=False`: the study's no-teaching baseline; no unknown answer is in the schema, so the grammar
        can only produce calls of what the API has. `unknown_object=False` leaves that form out (its word was
        found to be part of the action or a misheard known object, `word_kind`). `exclude`: functions a rewrite
        may not call (the copy showed they fail from this state). `feedback_unknown`: the answer after `feedback`
        may also be the unknown-behaviour form (the earlier calls asked for nothing that was not so already).
        `behaviour_names`: the only names an unknown-behaviour answer may give (the person's word for the action,
        `action_word`; or the words of a lesson named by the dialogue's own word, `teach`).

        An unknown answer that names something the API has contradicts it, and the model is asked again with the
        schema narrowed: `{"unknown_object": "duck"}` with a DUCK member (or a slip of it within `_close`'s edits:
        "candie" for the CANDY) leaves out the unknown-object form; `{"unknown_behaviour": "pack"}` with a `pack`
        function leaves only calls. "Names" is read loosely (`names_known`): the model copies the person's
        speech-to-text slips into its unknown answers ("trey", "gift" for the GIFT_BAG, "pick" for `pickup`). So are
        an unknown object whose name the request never says (`grounded`), an unknown behaviour named by a verb
        the examples answer with calls (`shown_words`) or a seed skill's documentation starts with (`doc_verbs`:
        "open your gripper", release), and one named by the word an unknown-object answer just
        used for a known thing ("put the banana in the bole": `bole`, the BOWL, then the behaviour `bole`)."""
        self._base(space, objects, memory)
        context, announces = turn_context(state, space, objects, memory)
        messages = self.messages(utterance, space, objects, memory, containers, context)
        allow = {"unknown_behaviour": not lesson, "unknown_object": unknown_object}
        if self.motions:
            allow["unknown_skill"] = not lesson
        if not teaching:
            allow = dict.fromkeys(allow, False)
        if feedback is not None:
            messages += [{"role": "assistant", "content": dumps(feedback[0])}, {"role": "user", "content": feedback[1]}]
            allow = {k: feedback_unknown and k == "unknown_behaviour" and teaching and not lesson for k in allow}
        offered = space
        if exclude:
            offered = ActionSpace(tuple(a for a in space.actions if a.name not in set(exclude)), space.objects)
        value, usage = self._ask(messages, answer_schema(offered, objects, **allow, behaviour_names=behaviour_names))
        answer = read_answer(value, space, objects)
        composed = self.call_words(space, objects, memory, containers)
        things: set[str] = set()  # unknown-object names refused (a known thing, a slip of one, or never said)
        for _ in range(len(allow)):
            if isinstance(answer, UnknownBehaviour) and (call := _call_of(answer, space)) is not None:
                # the function it names exists and takes exactly the objects named: that call, no second ask
                answer = PlannedCalls((call,))
                value = answer_of_calls([call])
                break
            if isinstance(answer, UnknownObject) and (
                    names_known(answer.name, [*(o.name for o in objects), *GRIPPER_NAMES]) or answer.name in space
                    or misheard(answer.name, [o.name for o in objects]) or not grounded(answer.name, utterance)
                    or _head_known(answer.name, [o.name for o in objects])):
                allow["unknown_object"] = False
                things.add(answer.name)
            elif isinstance(answer, UnknownBehaviour | UnknownSkill) and names_known(answer.name, space.names,
                                                                                     parts=False):
                allow = dict.fromkeys(allow, False)  # it names a function: the utterance is a call of it
            elif isinstance(answer, UnknownBehaviour) and answer.name in composed:
                allow["unknown_behaviour"] = False  # the examples (or the API's docs) use that verb for functions
            elif isinstance(answer, UnknownBehaviour) and "_" not in answer.name and misheard(
                    answer.name, [o.name for o in objects], parts=False, alike=False):
                allow["unknown_behaviour"] = False  # its "verb" is a slip of an object's name ("pick up the qube")
            elif isinstance(answer, UnknownBehaviour) and answer.name in things:
                allow["unknown_behaviour"] = False  # the word just refused as an object's name ("... in the bole")
            elif isinstance(answer, UnknownBehaviour) and (not verb_said(answer.name, utterance) or answer.name in {
                    w for o in answer.objects for w in o.split("_")}):
                # a verb the person never said (an example's `wave` for "hi there, put the candy ..."), or a word of
                # the very object it names ("soup can too": `soup` with the SOUP_CAN)
                allow["unknown_behaviour"] = False
            else:
                break
            value, again = self._ask(messages, answer_schema(offered, objects, **allow,
                                                             behaviour_names=behaviour_names))
            answer, usage = read_answer(value, space, objects), usage + again
        if isinstance(answer, UnknownBehaviour | UnknownSkill):
            held = state.held if state is not None else None
            kept = tuple(o for o in answer.objects if o == held or said(o, utterance))
            if kept != answer.objects:  # objects the person never named are the model's guess: left out
                answer = type(answer)(answer.name, kept)
                value = {**value, "objects": [o.upper() for o in kept]}
        return PlannerReply(answer, value, usage, context, announces)

    def is_action_word(self, word: str, utterance: str) -> tuple[bool, Usage]:
        """The first side question alone: is the person's `word` part of the action asked for ("make a gift with
        the duck": gift) rather than a thing? False when the backend fails or answers out of form."""
        try:
            value, usage = self._ask(word_messages(word, utterance), word_schema(word))
        except BackendError:
            return False, Usage(calls=1)
        return isinstance(value, dict) and value.get("is") == "action", usage

    def word_kind(self, word: str, utterance: str, objects: Sequence[ObjectEntry] = ()) -> tuple[str, Usage]:
        """Short side questions for an unknown-object answer: is the person's `word` part of the action asked
        for ("tidy the table": tidy; "do a present": present; "action"), and if it names a thing, a known object
        the speech-to-text engine misheard ("the bole": the BOWL; its plan name is returned) or a "thing" to point
        at? The second question (offered the objects too) is asked only when the first finds a thing: alone, it
        took verbs that are also nouns ("bin the soup can") for things; an "action" it answers stays a thing. It
        may also answer `TALK`: a word only mentioned in passing ("I've got tickets piling up"). "thing" when the
        backend fails or answers out of form, so the person is asked to point, as before."""
        action, usage = self.is_action_word(word, utterance)
        if action:
            return "action", usage
        known = {o.member: o.name for o in objects}
        if not known:
            return "thing", usage
        try:
            value, more = self._ask(word_messages(word, utterance, list(known)), word_schema(word, list(known)))
        except BackendError:
            return "thing", usage + Usage(calls=1)
        kind = value.get("is") if isinstance(value, dict) else None
        if kind == TALK:
            return TALK, usage + more
        return (known[kind] if isinstance(kind, str) and kind in known else "thing"), usage + more

    def named_as(self, word: str, utterance: str, objects: Sequence[ObjectEntry]) -> tuple[str | None, Usage]:
        """The naming side question (`naming`): does `utterance` give one of `objects` (known objects it names) the
        new name `word`? That object's plan name, or None (also when the backend fails or answers out of form)."""
        known = {o.member: o.name for o in objects}
        try:
            value, usage = self._ask(naming_messages(word, utterance, list(known)), naming_schema(word, list(known)))
        except BackendError:
            return None, Usage(calls=1)
        names = value.get("names") if isinstance(value, dict) else None
        return (known[names] if isinstance(names, str) and names in known else None), usage

    def action_word(self, utterance: str) -> tuple[str | None, Usage]:
        """The action side question (`action_word`): which of the person's words names what they want done or
        taught? `action_word.NO_ACTION` when none does; None when the request has no word, or the backend fails
        or answers out of form."""
        schema = action_schema(utterance)
        if schema is None:
            return None, Usage()
        try:
            value, usage = self._ask(action_messages(utterance), schema)
        except BackendError:
            return None, Usage(calls=1)
        word = value.get("action") if isinstance(value, dict) else None
        return (word if isinstance(word, str) and word in schema["properties"]["action"]["enum"] else None), usage

    def lesson_talk(self, name: str, utterance: str) -> tuple[bool, Usage]:
        """The first-words question (`lesson_end.start_messages`), asked before a lesson's first step: do the
        person's words only talk about the lesson of `name` ("I'll show you how to quarantine the cube") rather
        than give a step? False when the backend fails or answers out of form: the words are planned."""
        return self._is(start_messages(name, utterance), START_SCHEMA, "talk")

    def lesson_announced(self, name: str, utterance: str) -> tuple[bool, Usage]:
        """The announcement question (`lesson_end.announce_messages`): do the words of `utterance` announce a
        lesson of the new behaviour `name` ("I'm going to teach you what it means to present something. Step
        one: pick up the duck")? False when the backend fails or answers out of form: the action word decides."""
        return self._is(announce_messages(name, utterance), ANNOUNCE_SCHEMA, "teach")

    def first_step(self, name: str, utterance: str) -> tuple[str, Usage]:
        """The first-step question (`lesson_end.step_messages`), asked of the words that began the lesson of
        `name`: the words of a first step they give too ("... is called collect. First you take the banana"),
        "" for none, also when the backend fails or answers out of form: the lesson begins as before."""
        return self._copied_step(step_messages(name, utterance))

    def last_step(self, name: str, utterance: str) -> tuple[str, Usage]:
        """The last-step question (`lesson_end.last_step_messages`), asked of words read as the end of the lesson
        of `name`: the words of one more step they ask for ("Drop it. Congrats."), "" for none, also when the
        backend fails or answers out of form: the lesson ends as read."""
        return self._copied_step(last_step_messages(name, utterance))

    def _copied_step(self, messages: list[dict]) -> tuple[str, Usage]:
        """A step question's answer: the step's words copied, spaces collapsed; "" when the backend fails."""
        try:
            value, usage = self._ask(messages, STEP_SCHEMA)
        except BackendError:
            return "", Usage(calls=1)
        step = value.get("step") if isinstance(value, dict) else None
        return (" ".join(step.split()) if isinstance(step, str) else ""), usage

    def verb_is_new(self, verb: str, utterance: str) -> tuple[bool, Usage]:
        """The verb question (`verb_kind`): does the word `verb` of `utterance` name a behaviour of its own, to be
        taught, rather than something the seed skills do as they are ("give me the cup")? False when the backend
        fails or answers out of form: the first answer stands."""
        return self._is(verb_messages(verb, utterance), VERB_SCHEMA, NEW_VERB)

    def only_talk(self, utterance: str) -> tuple[bool, Usage]:
        """The request question (`request_kind`): do the person's words only talk, asking the robot nothing? False
        when the backend fails or answers out of form: the words are read as a request, as before."""
        return self._is(request_messages(utterance), REQUEST_SCHEMA, "talk")

    def only_carries(self, step: str) -> tuple[bool, Usage]:
        """The let-go question (`let_go`): does a lesson's `step` only move the held item somewhere, still holding
        it? False when the backend fails or answers out of form: the step's calls stand as planned."""
        return self._is(let_go_messages(step), LET_GO_SCHEMA, HOLD)

    def taught_verb(self, verb: str, utterance: str, taught: Sequence[str]) -> tuple[str | None, Usage]:
        """The misheard-verb question (`verb_slip`): is the word `verb` of `utterance` one of the `taught`
        behaviours, misheard or misspelt? Its name, or None (a new behaviour; also when the backend fails or
        answers out of form: the lesson begins as before)."""
        try:
            value, usage = self._ask(slip_verb_messages(verb, utterance, taught), slip_verb_schema(taught))
        except BackendError:
            return None, Usage(calls=1)
        name = value.get("is") if isinstance(value, dict) else None
        return (name if isinstance(name, str) and name in taught else None), usage

    def place_meant(self, utterance: str, places: tuple[str, str]) -> tuple[str | None, Usage]:
        """The place question (`place_meant`): which of the two `places` (plan names) the words of `utterance`
        mean in the end; None when the backend fails or answers out of form: the plan stands as it is."""
        return self._one_of_two(PLACE, utterance, places)

    def item_meant(self, utterance: str, items: tuple[str, str]) -> tuple[str | None, Usage]:
        """The item question (`item_meant`): which of the two `items` (plan names) the words of `utterance` mean
        in the end; None when the backend fails or answers out of form: the plan stands as it is."""
        return self._one_of_two(ITEM, utterance, items)

    def _one_of_two(self, question: OneOfTwo, utterance: str, names: tuple[str, str]) -> tuple[str | None, Usage]:
        """Ask `question` about two plan `names` (said with `_` read as a space); the plan name it answers."""
        said_as = {name: name.replace("_", " ") for name in names}
        pair = tuple(sorted(said_as.values()))
        try:
            value, usage = self._ask(question.messages(utterance, pair), question.schema(pair))
        except BackendError:
            return None, Usage(calls=1)
        answer = value.get(question.key) if isinstance(value, dict) else None
        return next((n for n, w in said_as.items() if w == answer), None), usage

    def asks_stated(self, utterance: str, name: str, does: str, outcome: Sequence[str],
                    stated: Sequence[str]) -> tuple[bool, Usage]:
        """The reading question (`taught_reading`): do the words of `utterance` ask for the `stated` result
        rather than the taught behaviour `name` (what it `does`, its `outcome`)? False when the backend fails or
        answers out of form: the taught behaviour stands, as before the question."""
        return self._is(reading_messages(utterance, name, does, outcome, stated), READING_SCHEMA, STATED)

    def lesson_over(self, name: str, utterance: str) -> tuple[bool, Usage]:
        """The lesson side question (`lesson_end`): do the person's words say the lesson of `name` is over rather
        than give another step? False when the backend fails or answers out of form: the words are planned."""
        return self._is(lesson_messages(name, utterance), LESSON_SCHEMA, LESSON_END)

    def _is(self, messages: list[dict], schema: dict, answer: str) -> tuple[bool, Usage]:
        """Whether a side question of form `{"is": ...}` is answered `answer`; False when the backend fails."""
        try:
            value, usage = self._ask(messages, schema)
        except BackendError:
            return False, Usage(calls=1)
        return isinstance(value, dict) and value.get("is") == answer, usage

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

"""The one test kit: paths of the project's examples and recordings, a scripted stand-in for a language model,
a small household scene and a small street dataset built in code, and a matcher that says whether a
decoding grammar accepts a text.

`ScriptedLLM` stands in for a model only where a test needs exact, chosen answers (a grammar path, a failing
plan); tests of real behaviour use the embedded model or replay its recorded calls from `CASSETTES`.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from situated.llm.base import Completion
from situated.llm.chat_template import chat_template_for
from situated.planners.lesson_end import ANNOUNCE_SCHEMA, LESSON_SCHEMA, START_SCHEMA, STEP_SCHEMA
from situated.planners.let_go import LET_GO_SCHEMA
from situated.planners.request_kind import REQUEST_SCHEMA
from situated.planners.taught_reading import READING_SCHEMA, TAUGHT
from situated.planners.toolcall import answer_call
from situated.planners.verb_kind import VERB_SCHEMA
from situated.planners.verb_slip import NOT_TAUGHT, is_slip_verb_schema

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
APARTMENT = EXAMPLES / "scenes" / "apartment.json"
CASSETTES = Path(__file__).resolve().parent / "cassettes"
CASSETTE_MODE = os.environ.get("SITUATED_CASSETTE_MODE", "replay")
"""How the recorded tests use their cassettes: "replay" (the default, and CI's), or "auto"/"record" to record
them again with the real model (after a prompt change: delete the cassette, then run its tests in "auto")."""


class ScriptedLLM:
    """Answers `complete` from a list (a text, or `(text, finish_reason)`), then `default` when the list is
    spent (an error if there is none), and `json` from the same list (JSON values); remembers every request in
    `calls`."""

    def __init__(self, answers: Sequence[str | tuple[str, str]] = (), *, default: str | None = None,
                 uri: str = "scripted", prompt_tokens: int = 100, completion_tokens: int = 10,
                 seconds: float = 0.0) -> None:
        self.answers = list(answers)
        self.default = default
        self.uri = uri
        self.chat_template = chat_template_for(uri)
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.seconds = seconds
        self.calls: list[dict[str, Any]] = []
        self.side_calls: list[dict[str, Any]] = []
        """Side questions the script had no answer for: a lesson's ("step"), the action word's (the last
        unknown behaviour's name: the first answer stands), the verb's ("other": the first answer stands) and the
        misheard taught verb's ("new"), the request question's ("request"), the reading question's
        ("taught": the behaviour stands), the place and item questions' (no answer: the calls stand), the first-step
        question's (no step: the lesson begins as before), the announcement question's ("other": the action
        word decides) and the let-go question's ("release": the step's calls stand)."""
        self.named = ""

    @property
    def prompts(self) -> list[str]:
        return [c["prompt"] for c in self.calls if "prompt" in c]

    def complete(self, prompt: str, **options: Any) -> Completion:
        self.calls.append({"prompt": prompt, **options})
        if self.answers:
            answer = self.answers.pop(0)
        elif self.default is not None:
            answer = self.default
        else:
            raise AssertionError(f"ScriptedLLM has no answer left for call {len(self.calls)}")
        text, finish = answer if isinstance(answer, tuple) else (answer, "stop")
        return Completion(text, finish, self.prompt_tokens, self.completion_tokens, seconds=self.seconds)

    def json(self, messages: list[dict], schema: dict, **options: Any) -> Any:
        is_side = schema in (LESSON_SCHEMA, START_SCHEMA, VERB_SCHEMA, REQUEST_SCHEMA, READING_SCHEMA,
                             ANNOUNCE_SCHEMA, LET_GO_SCHEMA) or \
            is_slip_verb_schema(schema)
        props = set(schema.get("properties", {}))
        side = "is" if is_side else "action" if props == {"action"} else "place" if props == {"place"} else \
            "item" if props == {"item"} else "step" if schema is STEP_SCHEMA else None
        allowed = schema.get("properties", {}).get(side or "", {}).get("enum")
        if side is not None and not (self.answers and isinstance(self.answers[0], dict)
                                     and set(self.answers[0]) == {side}
                                     and (allowed is None or self.answers[0][side] in allowed)):
            # a side question, unscripted: another step, or the unknown behaviour's own name (kept apart from
            # `calls`, so scripts and the indices of their calls stay as they were before the question existed)
            self.side_calls.append({"messages": messages, "schema": schema, **options})
            if schema is VERB_SCHEMA:  # the verb names a behaviour of its own: the first answer stands
                return {"is": "other"}
            if is_slip_verb_schema(schema):  # the verb is none of the taught ones: the lesson begins
                return {"is": NOT_TAUGHT}
            if schema is READING_SCHEMA:  # the taught behaviour is what was asked: its effect stands
                return {"is": TAUGHT}
            if schema is ANNOUNCE_SCHEMA:  # no lesson announced: the action word decides, as before
                return {"is": "other"}
            if schema is LET_GO_SCHEMA:  # the step lets go: its calls stand as planned
                return {"is": "release"}
            if schema is REQUEST_SCHEMA:  # the words ask for something: the lesson begins
                return {"is": "request"}
            if side in ("place", "item"):  # the place or item question, unscripted: no answer, the calls stand
                return {}
            if side == "step":  # the first-step question, unscripted: no step, the lesson begins as before
                return {"step": ""}
            return {"is": "step"} if side == "is" else {"action": self.named}
        self.calls.append({"messages": messages, "schema": schema, **options})
        if not self.answers:
            raise AssertionError(f"ScriptedLLM has no answer left for call {len(self.calls)}")
        answer = self.answers.pop(0)
        if isinstance(answer, dict) and isinstance(answer.get("unknown_behaviour"), str):
            self.named = answer["unknown_behaviour"]
        return answer

    def count_tokens(self, text: str) -> int:
        return len(text) // 4


def node(i: int, cls: str, cat: str = "Props", props: tuple[str, ...] = (), states: tuple[str, ...] = ()) -> dict:
    """One VirtualHome graph node."""
    return {"id": i, "class_name": cls, "category": cat, "properties": list(props), "states": list(states)}


def kitchen() -> dict:
    """Kitchen (1) and living room (2); a character in the kitchen; fridge, microwave, stove with a frying pan,
    sink and faucet, two plates (one per room), salmon on the counter, a phone, a sofa and a tv."""
    nodes = [
        node(1, "kitchen", "Rooms"), node(2, "livingroom", "Rooms"),
        node(10, "character", "Characters"),
        node(20, "kitchencounter", "Furniture", ("SURFACES",)),
        node(21, "fridge", "Appliances", ("CAN_OPEN", "CONTAINERS", "HAS_SWITCH"), ("CLOSED", "ON")),
        node(22, "microwave", "Appliances", ("CAN_OPEN", "CONTAINERS", "HAS_SWITCH"), ("CLOSED", "OFF")),
        node(23, "stove", "Appliances", ("SURFACES", "HAS_SWITCH"), ("OFF",)),
        node(24, "fryingpan", "Props", ("GRABBABLE", "SURFACES", "RECIPIENT")),
        node(25, "sink", "Furniture", ("RECIPIENT", "CONTAINERS")),
        node(26, "faucet", "Furniture", ("HAS_SWITCH",), ("OFF",)),
        node(30, "salmon", "Food", ("GRABBABLE",)),
        node(31, "plate", "Props", ("GRABBABLE", "SURFACES")),
        node(32, "plate", "Props", ("GRABBABLE", "SURFACES")),
        node(33, "cellphone", "Props", ("GRABBABLE", "HAS_SWITCH"), ("OFF",)),
        node(34, "egg", "Food", ("GRABBABLE",)),
        node(40, "sofa", "Furniture", ("SITTABLE", "LIEABLE", "SURFACES")),
        node(41, "tv", "Electronics", ("HAS_SWITCH", "LOOKABLE"), ("OFF",)),
    ]
    edges = [(10, "INSIDE", 1), (30, "ON", 20), (31, "ON", 20), (33, "ON", 20), (24, "ON", 23), (34, "ON", 24),
             (32, "INSIDE", 2), (40, "INSIDE", 2), (41, "INSIDE", 2), (40, "FACING", 41)]
    edges += [(i, "INSIDE", 1) for i in (20, 21, 22, 23, 24, 25, 26, 30, 31, 33, 34)]
    return {"nodes": nodes, "edges": [{"from_id": a, "relation_type": r, "to_id": b} for a, r, b in edges]}


# A street running north: A - B - C - D - E, with a side street B -> W, and a spur C -> K.
STREET_NODES = """A,0,40.0000,-74.0,unseen
B,0,40.0001,-74.0,unseen
C,0,40.0002,-74.0,unseen
D,0,40.0003,-74.0,unseen
E,0,40.0004,-74.0,unseen
W,90,40.0001,-74.0001,unseen
K,90,40.0002,-73.9999,unseen
"""
STREET_LINKS = """A,0,B
B,180,A
B,0,C
B,270,W
W,90,B
C,180,B
C,0,D
C,90,K
K,270,C
D,180,C
D,0,E
E,180,D
"""


def write_street_dataset(root: Path, name: str = "map2seq_unseen", lines: list[str] | None = None) -> Path:
    """A small street dataset in the VELMA release layout (the street above; three dev instances)."""
    directory = root / name
    (directory / "graph").mkdir(parents=True)
    (directory / "data").mkdir()
    (directory / "graph" / "nodes.txt").write_text(STREET_NODES)
    (directory / "graph" / "links.txt").write_text(STREET_LINKS)
    if lines is None:
        lines = [
            json.dumps(
                {"id": 1, "route_panoids": ["A", "B", "C", "D"], "navigation_text": "Go.", "start_heading": 0}
            ),
            json.dumps(
                {"id": 2, "route_panoids": ["A", "B", "W"], "navigation_text": "Left.", "start_heading": 0}
            ),
            json.dumps(
                {"id": 3, "route_panoids": ["A", "B", "C", "K"], "navigation_text": "R.", "start_heading": 0}
            ),
        ]
    (directory / "data" / "dev.json").write_text("\n".join(lines) + "\n")
    return directory


# --- a minimal GBNF matcher: llama.cpp cannot say whether a grammar accepts a string ----------------


@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class Cls:
    chars: frozenset[str]
    negated: bool


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Seq:
    items: tuple


@dataclass(frozen=True)
class Alt:
    options: tuple


@dataclass(frozen=True)
class Rep:
    item: object
    low: int
    high: int | None


_ESC = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "]": "]", "^": "^", "-": "-"}


def _parse_gbnf(text: str) -> dict[str, object]:
    rules: dict[str, object] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        name, _, body = line.partition(" ::= ")
        expr, pos = _alt(body, 0)
        assert pos == len(body), f"unparsed rest of rule {name}: {body[pos:]!r}"
        rules[name.strip()] = expr
    return rules


def _skip(s: str, i: int) -> int:
    while i < len(s) and s[i] == " ":
        i += 1
    return i


def _alt(s: str, i: int) -> tuple[object, int]:
    options = []
    seq, i = _seq(s, i)
    options.append(seq)
    while i < len(s) and s[i] == "|":
        seq, i = _seq(s, i + 1)
        options.append(seq)
    return (options[0] if len(options) == 1 else Alt(tuple(options))), i


def _seq(s: str, i: int) -> tuple[object, int]:
    items = []
    i = _skip(s, i)
    while i < len(s) and s[i] not in "|)":
        item, i = _atom(s, i)
        if i < len(s) and s[i] in "*+?":
            item = Rep(item, 1 if s[i] == "+" else 0, 1 if s[i] == "?" else None)
            i += 1
        elif i < len(s) and s[i] == "{":  # {m,n} or {m,}
            end = s.index("}", i)
            low, _, high = s[i + 1:end].partition(",")
            item = Rep(item, int(low), int(high) if high else None)
            i = end + 1
        items.append(item)
        i = _skip(s, i)
    return Seq(tuple(items)), i


def _atom(s: str, i: int) -> tuple[object, int]:
    c = s[i]
    if c == '"':
        out, i = [], i + 1
        while s[i] != '"':
            if s[i] == "\\":
                out.append(_ESC[s[i + 1]])
                i += 2
            else:
                out.append(s[i])
                i += 1
        return Lit("".join(out)), i + 1
    if c == "[":
        i += 1
        negated = s[i] == "^"
        i += negated
        chars = set()
        while s[i] != "]":
            if s[i] == "\\":
                chars.add(_ESC[s[i + 1]])
                i += 2
            elif s[i + 1] == "-" and s[i + 2] != "]":  # a range: [0-9]
                chars.update(chr(c) for c in range(ord(s[i]), ord(s[i + 2]) + 1))
                i += 3
            else:
                chars.add(s[i])
                i += 1
        return Cls(frozenset(chars), negated), i + 1
    if c == "(":
        expr, i = _alt(s, i + 1)
        assert s[i] == ")"
        return expr, i + 1
    m = re.match(r"[a-zA-Z0-9_-]+", s[i:])
    assert m, f"unexpected {s[i:]!r}"
    return Ref(m.group()), i + m.end()


def _match(rules: dict, expr: object, text: str, pos: int) -> frozenset[int]:
    """All end positions of matches of `expr` at `pos`."""
    if isinstance(expr, Lit):
        return frozenset({pos + len(expr.text)}) if text.startswith(expr.text, pos) else frozenset()
    if isinstance(expr, Cls):
        ok = pos < len(text) and ((text[pos] in expr.chars) != expr.negated)
        return frozenset({pos + 1}) if ok else frozenset()
    if isinstance(expr, Ref):
        return _match(rules, rules[expr.name], text, pos)
    if isinstance(expr, Alt):
        return frozenset().union(*(_match(rules, o, text, pos) for o in expr.options))
    if isinstance(expr, Seq):
        ends = frozenset({pos})
        for item in expr.items:
            ends = frozenset().union(*(_match(rules, item, text, p) for p in ends)) if ends else frozenset()
        return ends
    if isinstance(expr, Rep):
        ends, frontier, count = (frozenset({pos}) if expr.low == 0 else frozenset()), frozenset({pos}), 0
        while frontier and (expr.high is None or count < expr.high):
            frontier = frozenset().union(*(_match(rules, expr.item, text, p) for p in frontier)) - {pos}
            count += 1
            if count >= expr.low:
                new = frontier - ends
                ends |= frontier
                frontier = new
        return ends
    raise TypeError(expr)


def accepts(grammar: str, text: str) -> bool:
    """Whether the GBNF `grammar` (the subset the project writes) accepts all of `text`."""
    rules = _parse_gbnf(grammar)
    return len(text) in _match(rules, Ref("root"), text, 0)


class LlamaGrammarCheck:
    """llama.cpp's grammar sampler over a GGUF's vocabulary (loaded vocab-only): does it compile, and does it
    let a text through token by token and then end?"""

    def __init__(self, model: Path) -> None:
        import llama_cpp

        self._llama_cpp = llama_cpp
        self.llama = llama_cpp.Llama(model_path=str(model), vocab_only=True, verbose=False)
        self.vocab = self.llama._model.vocab

    def compiles(self, grammar: str) -> bool:
        sampler = self._llama_cpp.llama_sampler_init_grammar(self.vocab, grammar.encode(), b"root")
        if not sampler:
            return False
        self._llama_cpp.llama_sampler_free(sampler)
        return True

    def accepts(self, grammar: str, text: str) -> bool:
        import ctypes

        lc = self._llama_cpp
        sampler = lc.llama_sampler_init_grammar(self.vocab, grammar.encode(), b"root")
        assert sampler, "grammar does not compile"
        one = (lc.llama_token_data * 1)()
        array = lc.llama_token_data_array(data=ctypes.cast(one, lc.llama_token_data_p), size=1, selected=-1,
                                          sorted=False)

        def allowed(token: int) -> bool:
            one[0].id, one[0].logit, one[0].p = token, 1.0, 0.0
            array.size, array.selected = 1, -1
            lc.llama_sampler_apply(sampler, ctypes.byref(array))
            return one[0].logit != float("-inf")

        try:
            for token in self.llama.tokenize(text.encode(), add_bos=False, special=False):
                if not allowed(token):
                    return False
                lc.llama_sampler_accept(sampler, token)
            return allowed(self.llama.token_eos())
        finally:
            lc.llama_sampler_free(sampler)


def outcome(call: Any) -> Any:
    """For fuzz properties: the value of `call()`, or the SituatedError it raised, whose message must be one
    line; any other exception fails the property. Each outcome is a Hypothesis event (value or error kind)."""
    from hypothesis import event

    from situated.errors import SituatedError

    try:
        value = call()
    except SituatedError as exc:
        assert "\n" not in str(exc), f"message is not one line: {exc!r}"
        event(f"error: {type(exc).__name__}")
        return exc
    event("value")
    return value


def free_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


_SERVER_WITH_SAFE_BUFFERS = (
    "import runpy\n"
    "from situated.llm.llamacpp_buffers import loading_with_safe_buffers\n"
    "held = loading_with_safe_buffers()  # held: a collected generator would restore the defaults at once\n"
    "held.__enter__()  # for the whole server process: its model loads at start\n"
    "runpy.run_module('llama_cpp.server', run_name='__main__', alter_sys=True)\n"
)
"""`python -m llama_cpp.server`, but with the weights in plain CPU buffers where llama.cpp was built with AMX
(llamacpp_buffers: its AMX buffers crash llama_decode; the server has no option for that)."""


@contextmanager
def llama_server(*, n_ctx: int, ready_within: float = 120) -> Iterator[str]:
    """llama-cpp-python's own OpenAI-compatible server on the assembled 0.5B model, on loopback: its base URL.
    Skips the test where llama-cpp-python[server] or the weights are missing; stops the server afterwards."""
    import httpx
    import pytest

    from situated.errors import BackendError
    from situated.llm.models import ensure_model

    pytest.importorskip("llama_cpp.server.app", reason="needs llama-cpp-python[server]")
    try:
        model = ensure_model("qwen2.5-coder-0.5b")
    except BackendError as exc:
        pytest.skip(str(exc))
    port = free_port()
    command = [sys.executable, "-c", _SERVER_WITH_SAFE_BUFFERS, "--model", str(model), "--host", "127.0.0.1",
               "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", "2", "--verbose", "False"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ))
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + ready_within
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {proc.stderr.read().decode()[-800:] if proc.stderr else ''}")
            try:
                if httpx.get(f"{url}/models", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not become ready within {ready_within:g} s")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def answer_calls(items: Sequence[tuple[str, dict[str, str]]]) -> list[str]:
    """A sandbox planner answer's calls, as the schema writes them: `[("pickup", {"obj": "ball"})]` →
    `["pickup(BALL)"]`."""
    return [answer_call(f, *a.values()) for f, a in items]


def answer_plan(goal: Sequence[tuple[str, str]], *items: tuple[str, dict[str, str]]) -> dict:
    """A sandbox planner answer with a goal and calls: `answer_plan([("ball", "tray")], ("pickup", {"obj":
    "ball"}), ...)`."""
    return {"goal": answer_goal(goal), "calls": answer_calls(items)}


def answer_goal(goal: Sequence[tuple[str, str]], places: Sequence[str] = ("table", "spot")) -> list[str]:
    """A sandbox planner answer's goal: `[("candy", "gift_bag")]` → `["CANDY in GIFT_BAG"]` (`on` for `places`)."""
    return [f"{i.upper()} {'on' if p in places else 'in'} {p.upper()}" for i, p in goal]

"""LangPrompt, the paper's natural-language baseline: the same information as ProgPrompt, in words.

The prompt describes the actions in words, lists the objects and shows the example plans as numbered steps;
the model answers with a numbered list. Each step is mapped onto an action (see `map_step` and
docs/progprompt.md): a verb phrase names the action, the words after it name objects, matched to the scene's
objects by exact name, joined words, containment or a singular form. Steps that map onto nothing are reported
and counted as failed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence, Set

from ..actions import PROGPROMPT_SPACE, ActionSpace
from ..errors import SituatedError
from ..llm.base import LLM, Completion
from ..program import Call, Program, parse
from .base import PlanResult
from .feedback import Verifier
from .progprompt_prompt import function_name, select_examples

PHRASES: dict[str, str] = {
    "turnright": "turn right", "turnleft": "turn left", "walkforward": "walk forward",
    "walktowards": "walk towards {0}", "walk": "walk to {0}", "run": "run to {0}", "grab": "grab {0}",
    "switchon": "switch on {0}", "switchoff": "switch off {0}", "open": "open {0}", "close": "close {0}",
    "lookat": "look at {0}", "sit": "sit on {0}", "standup": "stand up", "find": "find {0}",
    "turnto": "turn to {0}", "drink": "drink from {0}", "pointat": "point at {0}", "watch": "watch {0}",
    "putin": "put {0} in {1}", "putback": "put {0} on {1}",
}
"""How each action is said in words (also how example plans are rendered)."""

# Verb phrases (after normalisation) -> action; the longest matching phrase at the start of a step wins.
VERBS: dict[str, str] = {
    "turn right": "turnright", "turn left": "turnleft", "walk forward": "walkforward",
    "walk towards": "walktowards", "walk toward": "walktowards",
    "walk to": "walk", "walk into": "walk", "walk": "walk", "go to": "walk", "go into": "walk", "go": "walk",
    "enter": "walk", "move to": "walk", "head to": "walk", "run to": "run", "run": "run",
    "grab": "grab", "take": "grab", "pick up": "grab", "pick": "grab", "get": "grab", "hold": "grab",
    "switch on": "switchon", "turn on": "switchon", "start": "switchon",
    "switch off": "switchoff", "turn off": "switchoff", "stop": "switchoff",
    "open": "open", "close": "close", "shut": "close", "look at": "lookat", "sit on": "sit", "sit": "sit",
    "stand up": "standup", "stand": "standup", "find": "find", "locate": "find", "search for": "find",
    "look for": "find", "turn to": "turnto", "face": "turnto", "drink from": "drink", "drink": "drink",
    "point at": "pointat", "watch": "watch", "put": "put", "place": "put", "throw": "put", "insert": "putin",
}
_IN_WORDS = ("into", "inside", "in")
_ON_WORDS = ("onto", "on", "upon", "at")
_FILLER = frozenset({"the", "a", "an", "some", "your", "my", "of", "to", "it", "up", "down", "back", "away",
                     "and", "then"})
STOPS: tuple[str, ...] = ("\n\n", "\nTask:")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def step_text(call: Call) -> str:
    """An action call in words: `putin('lime', 'garbagecan')` -> `put lime in garbagecan`."""
    return PHRASES.get(call.action, call.action + " {0}").format(*call.args)


def match_object(phrase: str, objects: Sequence[str]) -> str | None:
    """The scene object a phrase names: exact name, words joined (`kitchen cabinet`), a window of words, an
    object contained in the phrase (longest), or the phrase's words singularised; None when nothing
    matches."""
    words = [w for w in _words(phrase) if w not in _FILLER]
    if not words:
        return None
    known = set(objects)
    # Windows of consecutive words, longest first, each as is and without a plural s.
    for size in range(len(words), 0, -1):
        for start in range(len(words) - size + 1):
            joined = "".join(words[start:start + size])
            for candidate in (joined, joined[:-1] if joined.endswith("s") else joined,
                              joined[:-2] if joined.endswith("es") else joined):
                if candidate in known:
                    return candidate
    joined = "".join(words)
    contained = [o for o in objects if len(o) >= 3 and o in joined]
    if contained:
        return max(contained, key=lambda o: (len(o), o))
    containing = [o for o in objects if words[-1] in o and len(words[-1]) >= 3]
    if containing:
        return min(containing, key=lambda o: (len(o), o))
    return None


def map_step(step: str, space: ActionSpace, objects: Sequence[str]) -> Call | str:
    """The action call a natural-language step stands for, or the reason it maps onto none."""
    words = _words(step)
    text = " ".join(words)
    verb = max((v for v in VERBS if text == v or text.startswith(v + " ")), key=len, default=None)
    if verb is None:
        return f"no known verb in {step!r}"
    action = VERBS[verb]
    rest = text[len(verb):].strip()
    if action in ("put", "putin"):
        padded = f" {rest} "
        split = next(((w, "putin") for w in _IN_WORDS if f" {w} " in padded), None) or next(
            ((w, "putback") for w in _ON_WORDS if f" {w} " in padded), None)
        if split is None:
            return f"no container or surface in {step!r}"
        word, action = split
        left, _, right = f" {rest} ".partition(f" {word} ")
        args = [match_object(left, objects), match_object(right, objects)]
    elif action not in space:
        return f"unknown action for {step!r}"
    elif space.get(action).arity == 0:
        args = []
    else:
        args = [match_object(rest, objects)]
    if action not in space:
        return f"unknown action for {step!r}"
    if any(a is None for a in args):
        return f"no scene object named in {step!r}"
    return Call(action, tuple(a for a in args if a is not None))


def parse_steps(text: str) -> list[str]:
    """The steps of a numbered list (`1. ...`, `2) ...`, `Step 3: ...`)."""
    steps = []
    for line in text.split("\n"):
        m = re.match(r"\s*(?:step\s*)?\d+\s*[.):]\s*(.+)", line, re.IGNORECASE)
        if m:
            steps.append(m.group(1).strip())
    return steps


class LangPromptPlanner:
    """The natural-language baseline; `plan` returns a PlanResult whose program holds the mapped steps.
    It writes steps, not a program to rewrite or continue: no grounded decoding, no replanning."""

    max_repairs = 0
    can_replan = False

    def __init__(self, llm: LLM, space: ActionSpace = PROGPROMPT_SPACE,
                 examples: Mapping[str, str] | None = None, *, n_examples: int = 3,
                 sample_examples: bool = False, seed: int = 0, max_tokens: int = 600,
                 frequency_penalty: float = 0.15) -> None:
        unknown = [a.name for a in space if a.name not in PHRASES]
        if unknown:
            raise SituatedError(f"LangPrompt has no wording for actions {', '.join(unknown)}")
        self.llm = llm
        self.space = space
        self.examples = dict(examples or {})
        self.n_examples = n_examples
        self.sample_examples = sample_examples
        self.max_tokens = max_tokens
        self.frequency_penalty = frequency_penalty
        self.seed = seed

    def render_example(self, name: str) -> str:
        """An example plan as a task sentence and numbered steps (its action calls, without assertions)."""
        program = parse(self.examples[name], source=f"example {name}")
        calls = [s for s in program.body if isinstance(s, Call)]
        lines = [f"Task: {name.replace('_', ' ')}"]
        lines += [f"{i}. {step_text(c)}" for i, c in enumerate(calls, start=1)]
        return "\n".join(lines)

    def prompt(self, task_name: str, objects: Sequence[str]) -> str:
        actions = "\n".join(f"- {PHRASES[a.name].format('<object>', '<place>')}: {a.doc}" for a in self.space)
        parts = [
            "A household robot carries out tasks step by step. It can do these actions:\n" + actions,
            "Objects in the house: " + ", ".join(objects) + ".",
            *(self.render_example(n) for n in select_examples(
                self.examples, self.n_examples, sample=self.sample_examples, seed=self.seed,
                exclude=function_name(task_name))),
            f"Task: {task_name.replace('_', ' ')}\n1.",
        ]
        return "\n\n".join(parts)

    def plan(self, task_name: str, objects: Sequence[str], *, affordances: Mapping[str, Set[str]] | None = None,
             verify: Verifier | None = None) -> PlanResult:
        """The steps the model writes for `task_name`, mapped to calls (`verify` is not used: max_repairs is 0)."""
        prompt = self.prompt(task_name, objects)
        completion: Completion = self.llm.complete(
            prompt, stop=STOPS, max_tokens=self.max_tokens, temperature=0.0,
            frequency_penalty=self.frequency_penalty, seed=self.seed)
        text = "1." + completion.text
        calls: list[Call] = []
        problems: list[str] = []
        for i, step in enumerate(parse_steps(text), start=1):
            mapped = map_step(step, self.space, objects)
            if isinstance(mapped, str):
                problems.append(f"step {i}: {mapped}")
            else:
                calls.append(Call(mapped.action, mapped.args, line=i))
        program = Program(tuple(calls), function_name(task_name))
        return PlanResult(program, text, (completion,), completion.completion_tokens,
                          completion.prompt_tokens, tuple(problems), tuple(problems), len(problems), prompt)

    def replan(self, task_name: str, objects: Sequence[str], done: str, failure: str, *,
               affordances: Mapping[str, Set[str]] | None = None, verify: Verifier | None = None) -> PlanResult:
        raise SituatedError(f"{type(self).__name__} cannot replan")

"""ProgPrompt (PROTOCOLS.md §1): plans written by an LLM as Pythonic programs, parsed and validated, never
executed.

The prompt is an import line of the agent's actions, `objects = [...]`, a few example plan functions and the
open header of the task's function; the model completes the body. With `constrained=True` decoding follows
`situated.llm.grammar.plan_grammar`, so every line names a known action with known objects. Plans cut off by
the token cap are continued from their last complete statement instead of being truncated. Without a grammar,
an invalid plan is asked for once more with the problems as comments; lines still invalid are dropped and
reported.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from functools import partial
from typing import Literal, Protocol

from situated.actions import PROGPROMPT_SPACE, ActionSpace
from situated.errors import ParseError, SituatedError
from situated.llm.base import LLM, Completion
from situated.llm.grammar import plan_grammar, plan_objects
from situated.planners.grounded import Verifier, rejection_comment
from situated.program import Assert, Call, For, If, Program, Statement, parse, validate

Ablation = Literal["full", "no-comments", "no-feedback", "neither"]
ABLATIONS: tuple[str, ...] = ("full", "no-comments", "no-feedback", "neither")

PAPER_EXAMPLES: tuple[str, ...] = ("put_the_wine_glass_in_the_kitchen_cabinet", "throw_away_the_lime", "wash_mug")
"""The paper's fixed prompt examples."""

DEFAULT_EXAMPLES: tuple[str, ...] = (*PAPER_EXAMPLES, "put_salmon_in_the_fridge", "throw_away_apple", "wash_the_plate")
"""Preferred prompt examples, when the example set has them: the paper's, then their counterparts among the
project's own plans in `examples/plans` (put something in a container, throw something away, wash)."""

STOPS: tuple[str, ...] = ("\ndef ", "\n\n")
"""Generation ends at the next function or at a blank line (ProgPrompt stops at `def`)."""

REPLACEMENT_TOKENS = 64
"""Token cap for one replacement statement (grounded decoding)."""

ACTION_REJECTIONS = 2
"""After this many rejected calls of one action at one place, the replacement may not use that action there
(a small model otherwise tries `grab` on object after object when it is close to none of them)."""

CHECK_TOKENS = 96
"""Grounded decoding writes in pieces of this many tokens and checks each before going on."""

MAX_CONTINUATIONS = 2
"""How many times a plan cut off by the token cap is continued."""


@dataclass(frozen=True)
class PlanResult:
    """A generated plan: the parsed program (invalid lines dropped), the model's text and what it cost.

    `raw_problems` lists what was wrong with the model's first answer (unknown actions/objects, wrong arity,
    unparseable lines); `problems` what was still wrong in the final answer and therefore dropped; `dropped`
    counts the dropped action calls, which an evaluation counts as attempted steps that failed.
    """

    program: Program
    text: str
    completions: tuple[Completion, ...] = ()
    tokens: int = 0
    prompt_tokens: int = 0
    raw_problems: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    dropped: int = 0
    prompt: str = field(default="", repr=False)
    rejected: tuple[str, ...] = ()
    """Grounded decoding: the calls the verifier rejected, `line N: call: reason`, one per rewrite."""

    @property
    def repairs(self) -> int:
        return len(self.rejected)

    @property
    def unknown(self) -> int:
        """Unknown actions and objects in the model's first answer."""
        return sum(("unknown action" in p or "unknown object" in p) for p in self.raw_problems)

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.completions)


class Planner(Protocol):
    """What the evaluation runner needs of a planner."""

    llm: LLM

    def plan(self, task_name: str, objects: Sequence[str], *,
             affordances: Mapping[str, Set[str]] | None = None) -> PlanResult: ...


def function_name(task_name: str) -> str:
    """`"Microwave salmon"` -> `microwave_salmon` (a valid Python identifier)."""
    name = re.sub(r"[^0-9a-zA-Z]+", "_", task_name.strip().lower()).strip("_")
    if not name:
        raise SituatedError(f"task name {task_name!r} has no letters or digits")
    return f"task_{name}" if name[0].isdigit() else name


def select_examples(examples: Mapping[str, str], n: int, *, sample: bool = False, seed: int = 0,
                    exclude: str | None = None) -> list[str]:
    """Names of the `n` prompt examples: the paper's three first when present, then the rest sorted by name;
    with `sample=True` a seeded random sample instead. `exclude` (the task's own function) is never chosen."""
    names = sorted(e for e in examples if e != exclude)
    if n < 0:
        raise SituatedError(f"number of examples must be >= 0, got {n}")
    if n > len(names):
        raise SituatedError(f"{n} examples asked for, only {len(names)} available")
    if sample:
        return random.Random(seed).sample(names, n)
    ordered = [e for e in DEFAULT_EXAMPLES if e in names] + [e for e in names if e not in DEFAULT_EXAMPLES]
    return ordered[:n]


def filter_lines(text: str, ablation: str) -> str:
    """ProgPrompt's ablations as line filters: `no-comments` drops comment lines, `no-feedback` drops
    `assert`/`else` lines, `neither` both."""
    if ablation not in ABLATIONS:
        raise SituatedError(f"unknown ablation {ablation!r} (choose from {', '.join(ABLATIONS)})")
    drop_comments = ablation in ("no-comments", "neither")
    drop_feedback = ablation in ("no-feedback", "neither")
    kept = []
    for line in text.split("\n"):
        s = line.strip()
        if drop_comments and s.startswith("#"):
            continue
        if drop_feedback and (s.startswith("assert") or s.startswith("else")):
            continue
        kept.append(line)
    return "\n".join(kept)


def objects_line(objects: Sequence[str]) -> str:
    return "objects = [" + ", ".join(f"'{o}'" for o in objects) + "]"


def plan_object_names(programs: Iterable[Program]) -> list[str]:
    """Sorted object names the programs mention (calls and assertions; not 'hands' nor states)."""
    names: set[str] = set()

    def visit(body: tuple[Statement, ...]) -> None:
        for stmt in body:
            if isinstance(stmt, Call):
                names.update(a for a in stmt.args if isinstance(a, str))
            elif isinstance(stmt, Assert):
                cond = stmt.condition
                args = cond.args[:1] if cond.kind == "state" else cond.args
                names.update(a for a in args if isinstance(a, str) and a != "hands")
                visit(stmt.recovery)
            elif isinstance(stmt, If):
                visit(stmt.then)
                visit(stmt.otherwise)
            elif isinstance(stmt, For):
                names.update(stmt.items)
                visit(stmt.body)

    for program in programs:
        visit(program.body)
    return sorted(names)


def complete_statements(text: str) -> str:
    """The longest prefix of generated body text that ends after a complete statement (for continuing a plan
    cut off by the token cap): the partial last line goes, and so does a trailing assertion without
    recovery."""
    lines = text.split("\n")[:-1]  # the part after the last newline is incomplete
    while lines and lines[-1].strip().startswith("assert"):
        lines.pop()
    return "".join(line + "\n" for line in lines)


def _line(stmt: Statement) -> int:
    return stmt.line


def _worn_out(banned: Sequence[tuple[str, tuple[str, ...]]]) -> set[str]:
    """Actions rejected at least `ACTION_REJECTIONS` times (with any objects)."""
    counts = Counter(action for action, _ in banned)
    return {action for action, n in counts.items() if n >= ACTION_REJECTIONS}


def _statement_at(program: Program, line: int) -> Statement | None:
    """The top-level statement that holds `line` (the last one starting at or before it)."""
    return max((s for s in program.body if s.line <= line), key=_line, default=None)


def _calls_in(stmt: Statement) -> int:
    if isinstance(stmt, Call):
        return 1
    if isinstance(stmt, Assert):
        return len(stmt.recovery)
    if isinstance(stmt, If):
        return sum(map(_calls_in, stmt.then)) + sum(map(_calls_in, stmt.otherwise))
    if isinstance(stmt, For):
        return sum(map(_calls_in, stmt.body))
    return 0


def parse_tolerant(text: str, *, source: str = "<model>",
                   from_line: int = 1) -> tuple[Program, list[str], int]:
    """Parse model output, blanking lines the parser rejects; returns the program, the problems and how many
    blanked lines looked like action calls (both counted only from line `from_line` on)."""
    lines = text.split("\n")
    problems: list[str] = []
    dropped_calls = 0
    for _ in range(len(lines) + 1):
        try:
            return parse("\n".join(lines), source=source), problems, dropped_calls
        except ParseError as err:
            if not 1 <= err.line <= len(lines) or (err.line == 1 and lines[0].startswith("def ")):
                raise
            bad = lines[err.line - 1]
            if err.line >= from_line:
                problems.append(f"line {err.line}: unparseable {bad.strip()[:60]!r} ({err.message})")
                dropped_calls += bool(re.match(r"\s*(else:\s*)?\w+\(", bad)) and "assert" not in bad
            lines[err.line - 1] = ""  # keep line numbers stable
    raise SituatedError(f"{source}: could not parse the plan")  # pragma: no cover - every line can be blanked


def keep_valid(program: Program, space: ActionSpace, objects: Sequence[str], *,
               from_line: int = 1) -> tuple[Program, list[str], int]:
    """`program` without the statements (or recovery calls) from line `from_line` on that `validate` rejects;
    the problems and how many action calls were dropped."""
    problems: list[str] = []
    dropped = 0
    kept: list[Statement] = []
    for stmt in program.body:
        found = validate(Program((stmt,)), space, objects) if _line(stmt) >= from_line else []
        if not found:
            kept.append(stmt)
            continue
        problems += found
        if isinstance(stmt, Assert) and not validate(Program((Assert(stmt.condition, (), stmt.line),)), space,
                                                     objects):
            recovery = tuple(c for c in stmt.recovery if not validate(Program((c,)), space, objects))
            dropped += len(stmt.recovery) - len(recovery)
            kept.append(Assert(stmt.condition, recovery, stmt.line))
        else:
            dropped += _calls_in(stmt)
    return Program(tuple(kept), program.name), problems, dropped


class ProgPromptPlanner:
    """Writes a plan program for a task with an LLM (see the module docstring)."""

    def __init__(self, llm: LLM, space: ActionSpace = PROGPROMPT_SPACE,
                 examples: Mapping[str, str] | None = None, *, n_examples: int = 3,
                 sample_examples: bool = False, seed: int = 0, ablation: str = "full",
                 constrained: bool = True, max_tokens: int = 600, frequency_penalty: float = 0.15,
                 max_continuations: int = MAX_CONTINUATIONS, repairs: int = 0) -> None:
        filter_lines("", ablation)  # validates the name
        self.seed = seed
        self.llm = llm
        self.space = space
        self.examples = dict(examples or {})
        self.n_examples = n_examples
        self.sample_examples = sample_examples
        self.example_names = self.examples_for(None)
        self.ablation = ablation
        self.constrained = constrained
        self.max_tokens = max_tokens
        self.frequency_penalty = frequency_penalty
        self.max_continuations = max_continuations
        if repairs < 0:
            raise SituatedError(f"repairs must be >= 0, got {repairs}")
        self.repairs = repairs
        self._programs = {n: parse(t, source=f"example {n}") for n, t in self.examples.items()}

    def examples_for(self, task_name: str | None) -> list[str]:
        """The example plans shown for a task (never the task's own plan, when the example set has it)."""
        exclude = function_name(task_name) if task_name else None
        return select_examples(self.examples, self.n_examples, sample=self.sample_examples, seed=self.seed,
                               exclude=exclude)

    def example_objects(self, task_name: str | None) -> list[str]:
        """The objects the task's example plans use."""
        return plan_object_names(self._programs[n] for n in self.examples_for(task_name))

    # ------------------------------------------------------------------------------------------------- prompt
    def context(self, objects: Sequence[str], new_env_objects: Sequence[str] | None = None,
                task_name: str | None = None) -> str:
        """Everything before the task's header: import line, objects, examples, the new environment's objects
        (if any), with the ablation's line filter applied; ends with a blank line."""
        parts = [self.space.import_line(), objects_line(objects)]
        parts += [self.examples[n].strip("\n").rstrip() for n in self.examples_for(task_name)]
        if new_env_objects is not None:
            parts.append(objects_line(new_env_objects))
        return filter_lines("\n\n".join(parts) + "\n\n", self.ablation)

    def prompt(self, task_name: str, objects: Sequence[str],
               new_env_objects: Sequence[str] | None = None) -> str:
        """The full ProgPrompt prompt, ending with the open header `def task():\\n\\t`."""
        return self.context(objects, new_env_objects, task_name) + f"def {function_name(task_name)}():\n\t"

    def scene_prompt(self, task_name: str, objects: Sequence[str]) -> str:
        """The prompt for a scene: one object list when the examples only use the scene's objects; otherwise
        the examples' own objects first and the scene's as the new environment's list (the paper's other-
        scene set-up)."""
        example_objects = self.example_objects(task_name)
        if set(example_objects) <= set(objects):
            return self.prompt(task_name, objects)
        return self.prompt(task_name, example_objects, new_env_objects=objects)

    def grammar(self, objects: Sequence[str], affordances: Mapping[str, Set[str]] | None = None) -> str | None:
        if not self.constrained:
            return None
        return plan_grammar(self.space, objects, comments=self.ablation in ("full", "no-feedback"),
                            asserts=self.ablation in ("full", "no-comments"), affordances=affordances)

    # --------------------------------------------------------------------------------------------- planning
    def plan(self, task_name: str, objects: Sequence[str], *,
             affordances: Mapping[str, Set[str]] | None = None, verify: Verifier | None = None) -> PlanResult:
        """Generate, parse and validate a plan for `task_name` over the scene's `objects`.

        `affordances` (object -> properties) narrows the grammar to what each object affords. With `verify`
        and `repairs > 0` the plan is rewritten from actions the verifier rejects (`planners.grounded`).
        """
        objects = plan_objects(objects)
        prompt = self.scene_prompt(task_name, objects)
        header = f"def {function_name(task_name)}():\n\t"
        result = self._plan(prompt, header, objects, affordances, verify)
        if self.constrained or not result.raw_problems:
            return result
        # One more try, telling the model what was wrong (for servers that cannot take a grammar).
        notes = [f"# {p}" for p in result.raw_problems[:10]]
        retry_prompt = (prompt[: -len(header)]
                        + f"# A first attempt at {function_name(task_name)} had these problems:\n"
                        + "\n".join(notes)
                        + "\n# Use only the imported actions and the listed objects.\n" + header)
        second = self._plan(retry_prompt, header, objects, affordances, verify)
        return PlanResult(second.program, second.text, result.completions + second.completions,
                          result.tokens + second.tokens, result.prompt_tokens + second.prompt_tokens,
                          result.raw_problems, second.raw_problems, second.dropped, second.prompt,
                          second.rejected)

    def replan(self, task_name: str, objects: Sequence[str], done: str, failure: str, *,
               affordances: Mapping[str, Set[str]] | None = None, verify: Verifier | None = None) -> PlanResult:
        """A revised remainder after a failed action: `done` is the plan text run so far (from `def ...():` to
        the failed line), `failure` the comment describing the failure. The result's text and program are
        the whole plan (done lines, the failure comment, the new remainder)."""
        objects = plan_objects(objects)
        prompt = self.scene_prompt(task_name, objects)
        header = f"def {function_name(task_name)}():\n\t"
        before = done.rstrip("\n") + "\n\t# " + failure.replace("\n", " ") + "\n\t"
        return self._plan(prompt[: -len(header)] + before, before, objects, affordances, verify)

    def _plan(self, prompt: str, before: str, objects: Sequence[str], affordances: Mapping[str, Set[str]] | None,
              verify: Verifier | None = None) -> PlanResult:
        """Generate after `prompt` (which ends with `before`); with `verify`, replace rejected statements."""
        completions: list[Completion] = []
        grammar = self.grammar(objects, affordances)
        first = before.count("\n") + 1  # the first generated line
        accepted = ""  # generated text kept across replacements; ends with "\n\t" when not empty
        check_from, fix_line = first, 0
        banned: list[tuple[str, tuple[str, ...]]] = []
        notes: list[str] = []
        rejected: list[str] = []
        while True:
            if verify is None or not rejected or len(rejected) >= self.repairs:
                body = self._generate(prompt + accepted, grammar, completions)
            else:  # after a replacement: stop writing as soon as a statement fails on the copy of the scene
                body = self._generate(prompt + accepted, grammar, completions,
                                      until=partial(self._fails, before + accepted, first, check_from, objects,
                                                    verify))
            text = before + accepted + body
            program, problems, dropped = self._read(text, objects, first)
            if verify is None or len(rejected) >= self.repairs:
                break
            failure = next((f for f in verify(program) if f.line >= check_from), None)
            stmt = _statement_at(program, failure.line) if failure is not None else None
            if failure is None or stmt is None or stmt.line < check_from:
                break
            if stmt.line != fix_line:
                banned, notes = [], []
            if isinstance(stmt, Call) and all(isinstance(a, str) for a in stmt.args):
                banned.append((stmt.action, tuple(str(a) for a in stmt.args)))
            notes.append(rejection_comment(failure.call, failure.reason))
            rejected.append(f"line {failure.line}: {failure.call}: {failure.reason}")
            kept = "\n".join(text.split("\n")[: stmt.line - 1]) + "\n\t"
            fix = self._replacement(prompt[: len(prompt) - len(before)] + kept, notes, objects, affordances,
                                    banned, _worn_out(banned), completions)
            accepted = (kept + fix + "\t")[len(before):] if fix.strip() else ""
            if not fix.strip():  # the model ends the plan where the rejected statement was
                text = kept.rstrip("\t")
                program, problems, dropped = self._read(text, objects, first)
                break
            check_from = fix_line = stmt.line
        return PlanResult(program, text, tuple(completions), sum(c.completion_tokens for c in completions),
                          sum(c.prompt_tokens for c in completions), problems, problems, dropped, prompt,
                          tuple(rejected))

    def _read(self, text: str, objects: Sequence[str], first: int) -> tuple[Program, tuple[str, ...], int]:
        """Model text as a program: unparseable and invalid lines from line `first` on dropped; the problems
        and how many action calls were dropped."""
        parsed, parse_problems, unparsed_calls = parse_tolerant(text, source="<model output>", from_line=first)
        program, problems, dropped = keep_valid(parsed, self.space, objects, from_line=first)
        return program, tuple(parse_problems + problems), dropped + unparsed_calls

    def _replacement(self, prompt: str, notes: Sequence[str], objects: Sequence[str],
                     affordances: Mapping[str, Set[str]] | None, banned: Sequence[tuple[str, tuple[str, ...]]],
                     banned_actions: Set[str], completions: list[Completion]) -> str:
        """One statement to stand where rejected ones stood: the model sees why each was rejected (comments
        that are not kept in the plan) and, with a grammar, cannot write a rejected call again there, nor an
        action rejected `ACTION_REJECTIONS` times there."""
        grammar = None
        if self.constrained:
            grammar = plan_grammar(self.space, objects, comments=self.ablation in ("full", "no-feedback"),
                                   asserts=self.ablation in ("full", "no-comments"), affordances=affordances,
                                   one_statement=True, exclude=banned, exclude_actions=banned_actions)
        shown = "".join(f"# {n}\n\t" for n in notes)
        completion = self.llm.complete(prompt + shown, stop=STOPS, max_tokens=REPLACEMENT_TOKENS,
                                       temperature=0.0, frequency_penalty=self.frequency_penalty,
                                       grammar=grammar, seed=self.seed)
        completions.append(completion)
        lines = completion.text.split("\n")
        if self.constrained or not lines[0].strip():
            return completion.text if completion.text.endswith("\n") else ""
        # without a grammar: the first complete line, with the recovery line right after an assertion
        with_recovery = len(lines) > 2 and lines[1].strip().startswith("else:")
        keep = lines[:2] if with_recovery else lines[:1]
        return "\n".join(keep) + "\n" if len(lines) > 1 else ""

    def _generate(self, prompt: str, grammar: str | None, completions: list[Completion],
                  until: Callable[[str], bool] | None = None) -> str:
        """The model's continuation of `prompt` (continued past the token cap from its last complete
        statement, at most `max_continuations` times); appends each completion to `completions`.

        With `until`, the text is written in pieces of `CHECK_TOKENS` tokens (the same total) and writing
        stops after the piece for whose complete statements `until(text)` is true."""
        body = ""
        step = min(CHECK_TOKENS, self.max_tokens) if until is not None else self.max_tokens
        pieces = (self.max_continuations + 1) * -(-self.max_tokens // step)
        for piece in range(1, pieces + 1):
            completion = self.llm.complete(
                prompt + body, stop=STOPS, max_tokens=step, temperature=0.0,
                frequency_penalty=self.frequency_penalty, grammar=grammar, seed=self.seed)
            completions.append(completion)
            if completion.finish_reason != "length":
                body += completion.text
                break
            kept = complete_statements(completion.text)
            body += kept
            if not kept or piece == pieces or (until is not None and until(body)):
                break
            body += "\t"  # the next answer starts a new statement, as after the header
        return body.rstrip("\t")

    def _fails(self, head: str, first: int, check_from: int, objects: Sequence[str], verify: Verifier,
               body: str) -> bool:
        """Whether the plan `head + body` has a failed action from line `check_from` on."""
        program, _, _ = self._read(head + body, objects, first)
        return any(f.line >= check_from for f in verify(program))

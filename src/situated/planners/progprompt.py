"""ProgPrompt (PROTOCOLS.md §1): plans written by an LLM as Pythonic programs, parsed and validated, never
executed.

The prompt (`progprompt_prompt`) is an import line of the agent's actions, `objects = [...]`, a few example plan
functions and the open header of the task's function; the model completes the body. With `constrained=True`
decoding follows `situated.program.grammar.plan_grammar`, so every line names a known action with known
objects. Plans cut off by the token cap are continued from their last complete statement instead of being
truncated. Without a grammar, an invalid plan is asked for once more with the problems as comments; lines
still invalid are dropped and reported. With a verifier and `max_repairs > 0`, statements a private copy of
the scene rejects, and calls repeated `REPEATS` times in a row, are rewritten (grounded decoding,
`planners.feedback`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, replace
from functools import partial

from ..actions import ALREADY, NAVIGATION_ACTIONS, PROGPROMPT_SPACE, ActionSpace
from ..errors import ParseError, SituatedError
from ..llm.base import LLM, Completion
from ..program import Call, Condition, Program, call_text, condition_text
from ..program.effects import goal_phrase, read_goals
from ..program.grammar import plan_grammar, plan_objects
from ..program.reading import ReadPlan, complete_statements, read_plan, statement_at
from ..trace import StepEvent
from .base import PlanResult, Rewrite
from .feedback import Verifier, goal_comment, rejection_comment
from .preconditions import MAX_STEPS, about_closed, closed_container
from .preconditions import search as precondition_search
from .progprompt_prompt import ProgPromptPrompt, function_name, header
from .retrieval import Retriever
from .room_walks import moved, with_room_walks

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

PLAN_TOKEN_BUDGET = 4
"""Grounded decoding stops rewriting a plan once it has generated this many times `max_tokens` (the open-loop
cap): a task never costs more than a few open-loop plans without the episode saying so (`budget_spent`)."""

REPEATS = 3
"""Grounded decoding rejects a call that completes the `REPEATS`-th copy in a row of the same block of calls (one
call, or up to `LOOP_BLOCK`): it changes nothing the first copies did not, and a small model that starts
repeating (`turnleft()`, or `turnleft()`, `turnleft()`, `turnright()`, `turnright()`) writes it to the token cap.
Once the rewrites are spent, the plan (written whole, as before) ends where such a repetition starts."""

LOOP_BLOCK = 4
"""The longest block of calls whose repetition counts as a loop."""

GOAL_TOKENS = 64
"""Token cap for the goals line of goal-aware decoding."""


GOALS_ROOT = 'root ::= " " cond (", " cond)? (", " cond)? (", " cond)? "\\n"\n'
"""The goals line: one to four conditions of the plan language."""


def _without_closing_comments(text: str) -> tuple[str, int | None]:
    """The plan text without its closing comment lines (`# 5: Done`), ending with a newline and a tab, and the
    number a sub-goal added there takes (the closing comment's, else one past the last numbered one)."""
    lines = text.rstrip("\n\t").split("\n")
    closing = None
    while len(lines) > 1 and lines[-1].strip().startswith("#"):
        match = re.match(r"\s*#\s*(\d+)\s*:", lines.pop())
        closing = int(match.group(1)) if match else closing
    numbers = [int(m.group(1)) for line in lines if (m := re.match(r"\s*#\s*(\d+)\s*:", line))]
    number = closing if closing is not None else (max(numbers) + 1 if numbers else None)
    return "\n".join(lines) + "\n\t", number


@dataclass(frozen=True)
class _Rejected:
    """A statement grounded decoding rejects: where, the call as written, why."""

    line: int
    call: str
    reason: str
    start: int = 0
    """A repetition: the line its first copy starts at."""


def repeated(program: Program, from_line: int) -> _Rejected | None:
    """The first top-level call, from `from_line` on, that completes `REPEATS` copies in a row of a block of at
    most `LOOP_BLOCK` calls."""
    body = program.body
    keys = [(s.action, s.args) if isinstance(s, Call) else k for k, s in enumerate(body)]
    for i, stmt in enumerate(body):
        if stmt.line < from_line or not isinstance(stmt, Call):
            continue
        for k in range(1, LOOP_BLOCK + 1):
            if i + 1 >= REPEATS * k and all(keys[i - j] == keys[i - j - k] for j in range(k * (REPEATS - 1))):
                what = "it" if k == 1 else f"the {k} steps ending with it"
                return _Rejected(stmt.line, call_text(stmt),
                                 f"the plan already did {what} {REPEATS - 1} times in a row",
                                 body[i + 1 - REPEATS * k].line)
    return None


def _first_rejected(program: Program, from_line: int, verify: Verifier) -> _Rejected | StepEvent | None:
    """The earliest statement from `from_line` on that fails on the copy of the scene or repeats itself."""
    failure = next((f for f in verify(program) if f.line >= from_line), None)
    loop = repeated(program, from_line)
    return loop if loop is not None and (failure is None or loop.line < failure.line) else failure


def _restored(text: str, stmt: Call, original: Call) -> tuple[str, Call]:
    """`text` with the call `original` written back where `stmt` (a later substitute) stands, and that call."""
    lines = text.split("\n")
    at = lines[stmt.line - 1]
    lines[stmt.line - 1] = at[: len(at) - len(at.lstrip())] + call_text(original)
    return "\n".join(lines), replace(original, line=stmt.line)


class _Until:
    """`_generate`'s `until` that remembers whether it stopped the writing."""

    def __init__(self, fails: Callable[[str], bool]) -> None:
        self.fails = fails
        self.stopped = False

    def __call__(self, body: str) -> bool:
        self.stopped = self.fails(body)
        return self.stopped


def _without_call(text: str, stmt: Call) -> str | None:
    """`text` without the line of the top-level call `stmt`; None when that line holds more than the call."""
    lines = text.split("\n")
    if not lines[stmt.line - 1].strip().startswith(f"{stmt.action}("):
        return None
    return "\n".join(lines[: stmt.line - 1] + lines[stmt.line:])


def _go_on(fixed: str, before: str, cut: bool) -> tuple[str | None, str]:
    """After the checker changed a plan text: (the text to check next, the generated text kept). A text the model
    had ended is checked as it stands; one whose writing was stopped at the failed statement is written on from
    its end (else the plan would end where the piece stopped)."""
    kept = fixed[len(before):]
    if not cut:
        return fixed, kept
    return None, kept if kept.endswith("\t") or not kept else kept.rstrip("\n") + "\n\t"


def _gives_up(fix: str) -> bool:
    """Whether a replacement statement holds no task step: nothing, comments, or only moves and looks."""
    called = [m.group(1) for line in fix.split("\n") if (m := re.match(r"\s*(\w+)\(", line))]
    return not any(action not in NAVIGATION_ACTIONS for action in called)


def _worn_out(banned: Sequence[tuple[str, tuple[str, ...]]]) -> set[str]:
    """Actions rejected at least `ACTION_REJECTIONS` times (with any objects)."""
    counts = Counter(action for action, _ in banned)
    return {action for action, n in counts.items() if n >= ACTION_REJECTIONS}


class ProgPromptPlanner:
    """Writes a plan program for a task with an LLM (see the module docstring)."""

    can_replan = True

    def __init__(self, llm: LLM, space: ActionSpace = PROGPROMPT_SPACE,
                 examples: Mapping[str, str] | None = None, *, n_examples: int = 3,
                 sample_examples: bool = False, seed: int = 0, ablation: str = "full",
                 constrained: bool = True, max_tokens: int = 600, frequency_penalty: float = 0.15,
                 max_continuations: int = MAX_CONTINUATIONS, max_repairs: int = 0,
                 retriever: Retriever | None = None, state_goals: bool = False,
                 max_plan_tokens: int | None = None, scene_examples: bool = False,
                 preconditions: bool = False, keep_steps: bool = False, room_walks: bool = False,
                 open_first: bool = False, skip_done: bool = False) -> None:
        if max_repairs < 0:
            raise SituatedError(f"max_repairs must be >= 0, got {max_repairs}")
        self.prompts = ProgPromptPrompt(space, examples, n_examples=n_examples, sample_examples=sample_examples,
                                        seed=seed, ablation=ablation, retriever=retriever, goals=state_goals,
                                        scene_examples=scene_examples)
        self.max_plan_tokens = max_plan_tokens if max_plan_tokens is not None else PLAN_TOKEN_BUDGET * max_tokens
        if self.max_plan_tokens < max_tokens:
            raise SituatedError(f"the plan token budget ({self.max_plan_tokens}) is below max_tokens ({max_tokens})")
        self.seed = seed
        self.llm = llm
        self.space = space
        self.constrained = constrained
        self.max_tokens = max_tokens
        self.frequency_penalty = frequency_penalty
        self.max_continuations = max_continuations
        self.max_repairs = max_repairs
        self.preconditions = preconditions
        self.keep_steps = keep_steps
        self.room_walks = room_walks
        self.open_first = open_first
        self.skip_done = skip_done

    def grammar(self, objects: Sequence[str], affordances: Mapping[str, Set[str]] | None = None) -> str | None:
        if not self.constrained:
            return None
        return plan_grammar(self.space, objects, comments=self.prompts.comments, asserts=self.prompts.asserts,
                            affordances=affordances)

    # --------------------------------------------------------------------------------------------- planning
    def plan(self, task_name: str, objects: Sequence[str], *,
             affordances: Mapping[str, Set[str]] | None = None, verify: Verifier | None = None) -> PlanResult:
        """Generate, parse and validate a plan for `task_name` over the scene's `objects`.

        `affordances` (object -> properties) narrows the grammar to what each object affords. With `verify`
        and `max_repairs > 0` the plan is rewritten from actions the verifier rejects (`planners.feedback`).
        """
        objects = plan_objects(objects)
        head = header(task_name)
        goals: tuple[Condition, ...] = ()
        stated: list[Completion] = []
        if self.prompts.goals:
            goals, prompt = self._state_goals(task_name, objects, affordances, stated)
        else:
            prompt = self.prompts.scene_prompt(task_name, objects)
        result = self._plan(prompt, head, objects, affordances, verify, goals, stated)
        if self.constrained or not result.raw_problems:
            return result
        # One more try, telling the model what was wrong (for servers that cannot take a grammar).
        notes = [f"# {p}" for p in result.raw_problems[:10]]
        retry_prompt = (prompt[: -len(head)]
                        + f"# A first attempt at {function_name(task_name)} had these problems:\n"
                        + "\n".join(notes)
                        + "\n# Use only the imported actions and the listed objects.\n" + head)
        second = self._plan(retry_prompt, head, objects, affordances, verify)
        return PlanResult(second.program, second.text, result.completions + second.completions,
                          result.tokens + second.tokens, result.prompt_tokens + second.prompt_tokens,
                          result.raw_problems, second.raw_problems, second.dropped, second.prompt,
                          second.rejected, rewrites=second.rewrites)

    def replan(self, task_name: str, objects: Sequence[str], done: str, failure: str, *,
               affordances: Mapping[str, Set[str]] | None = None, verify: Verifier | None = None) -> PlanResult:
        """A revised remainder after a failed action: `done` is the plan text run so far (from `def ...():` to
        the failed line), `failure` the comment describing the failure. The result's text and program are
        the whole plan (done lines, the failure comment, the new remainder)."""
        objects = plan_objects(objects)
        prompt = self.prompts.scene_prompt(task_name, objects)
        head = header(task_name)
        before = done.rstrip("\n") + "\n\t# " + failure.replace("\n", " ") + "\n\t"
        return self._plan(prompt[: -len(head)] + before, before, objects, affordances, verify)

    def _state_goals(self, task_name: str, objects: Sequence[str], affordances: Mapping[str, Set[str]] | None,
                     completions: list[Completion]) -> tuple[tuple[Condition, ...], str]:
        """Goal-aware decoding: the model states the task's goals (conditions of the plan language, from the task
        name and the examples' own goals lines) before writing the plan; returns them and the plan prompt."""
        asking = self.prompts.goals_prompt(task_name, objects)
        grammar = None
        if self.constrained:
            conditions = plan_grammar(self.space, objects, comments=True, asserts=True, affordances=affordances)
            grammar = GOALS_ROOT + conditions.split("\n", 1)[1]
        completion = self.llm.complete(asking, stop=("\n",), max_tokens=GOAL_TOKENS, temperature=0.0,
                                       grammar=grammar, seed=self.seed)
        completions.append(completion)
        line = completion.text.split("\n")[0]
        try:
            goals = read_goals(line, source="<model goals>")
        except ParseError:
            goals = ()
        return goals, asking + line.rstrip() + "\n" + header(task_name)

    def _budget_left(self, completions: Sequence[Completion]) -> bool:
        return sum(c.completion_tokens for c in completions) < self.max_plan_tokens

    def _plan(self, prompt: str, before: str, objects: Sequence[str], affordances: Mapping[str, Set[str]] | None,
              verify: Verifier | None = None, goals: Sequence[Condition] = (),
              completions: list[Completion] | None = None) -> PlanResult:
        """Generate after `prompt` (which ends with `before`); with `verify`, replace rejected statements and,
        with stated `goals`, add a sub-goal for each goal that does not hold at the end."""
        completions = completions if completions is not None else []
        grammar = self.grammar(objects, affordances)
        first = before.count("\n") + 1  # the first generated line
        accepted = ""  # generated text kept across replacements; ends with "\n\t" when not empty
        check_from, fix_line = first, 0
        banned: list[tuple[str, tuple[str, ...]]] = []
        notes: list[str] = []
        rejected: list[str] = []
        rewrites: list[Rewrite] = []
        pursued: set[Condition] = set()  # goals already given a sub-goal of their own
        budget_spent = False
        added = 0  # steps the precondition search wrote
        free = 0  # rejections answered by the search instead of the model (they do not count as rewrites)
        searched: str | None = None  # a plan text with such steps, to check before writing on
        origin: tuple[Call, str] | None = None  # the statement first rejected at fix_line, and why
        skipped: set[tuple[int, str]] = set()  # (line, call) of calls dropped because their effect held
        cut = False  # the text was written in pieces and stopped at a failed statement: the model had not ended it
        while True:
            repairing = verify is not None and len(rejected) - free < self.max_repairs
            if searched is not None:
                text, searched = searched, None
            elif not repairing or len(rejected) == free:  # (written whole: pieces would change the text)
                text, cut = before + accepted + self._generate(prompt + accepted, grammar, completions), False
            else:  # after a replacement: stop writing as soon as a statement fails on the copy of the scene
                until = _Until(partial(self._fails, before + accepted, first, check_from, objects, verify))
                text = before + accepted + self._generate(prompt + accepted, grammar, completions, until=until)
                cut = until.stopped
            read = self._read(text, objects, first)
            if verify is not None and len(rejected) > free and not repairing and (
                    loop := repeated(read.program, check_from)) is not None:
                # the rewrites are spent: the plan ends where the repetition starts
                rejected.append(f"line {loop.line}: {loop.call}: {loop.reason}; the plan ends at line {loop.start}")
                text = "\n".join(text.split("\n")[: loop.start - 1]) + "\n"
                read = self._read(text, objects, first)
            if verify is None:
                break
            searching = self.preconditions or self.open_first or self.skip_done
            failure = _first_rejected(read.program, check_from, verify) if repairing or searching else None
            stmt = statement_at(read.program, failure.line) if failure is not None else None
            if (self.skip_done and isinstance(failure, StepEvent) and ALREADY in failure.reason
                    and isinstance(stmt, Call) and stmt.line >= check_from and stmt.line != fix_line
                    and len(skipped) < MAX_STEPS and (stmt.line, failure.call) not in skipped
                    and (undone := _without_call(text, stmt)) is not None):
                # the call's effect holds already: it changes nothing, so it goes and the rest stays as written
                # (not a replacement the model wrote for a rejected step: that goes back to the model as before;
                # the same call written again at the same place goes to the model too)
                skipped.add((stmt.line, failure.call))
                searched, accepted = _go_on(undone, before, cut)
                free += 1
                rejected.append(f"line {failure.line}: {failure.call}: {failure.reason}; dropped: its effect holds")
                rewrites.append(Rewrite(stmt.line, stmt, "", failure.reason))
                check_from, fix_line = stmt.line, 0
                continue
            if (self._searches(failure) and isinstance(failure, StepEvent) and isinstance(stmt, Call)
                    and stmt.line >= check_from and added < MAX_STEPS
                    and (found := self._precondition(text, stmt, objects, affordances, first, check_from, verify,
                                                     MAX_STEPS - added, failure.reason)) is not None):
                (searched, accepted), steps = _go_on(found[0], before, cut), found[1]
                added += len(steps)
                free += 1
                rejected.append(f"line {failure.line}: {failure.call}: {failure.reason}; "
                                f"{', '.join(steps)} written before it")
                rewrites.append(Rewrite(stmt.line, stmt, "\n".join((*steps, call_text(stmt))), failure.reason))
                check_from = fix_line = stmt.line + len(steps)
                continue
            if not repairing:
                break
            unmet = [g for g in verify.unmet(goals) if g not in pursued] if failure is None and goals else []
            if (failure is not None or unmet) and not self._budget_left(completions):
                budget_spent = True
                break
            if failure is None and unmet:  # every statement ran, yet a stated goal does not hold: a sub-goal for it
                pursued.add(unmet[0])
                rejected.append(f"goal {condition_text(unmet[0])}: {goal_comment(condition_text(unmet[0]))}")
                kept, number = _without_closing_comments(text)
                subgoal = f"# {number}: {goal_phrase(unmet[0])}" if number is not None else f"# {goal_phrase(unmet[0])}"
                accepted = (kept + subgoal + "\n\t")[len(before):]
                check_from = fix_line = kept.count("\n") + 2
                continue
            if failure is None or stmt is None or stmt.line < check_from:
                break
            if stmt.line != fix_line:
                banned, notes = [], []
                origin = (stmt, failure.reason) if isinstance(stmt, Call) and isinstance(failure, StepEvent) else None
            if isinstance(stmt, Call) and all(isinstance(a, str) for a in stmt.args):
                banned.append((stmt.action, tuple(str(a) for a in stmt.args)))
            notes.append(rejection_comment(failure.call, failure.reason))
            rejected.append(f"line {failure.line}: {failure.call}: {failure.reason}")
            kept = "\n".join(text.split("\n")[: stmt.line - 1]) + "\n\t"
            fix = self._replacement(prompt[: len(prompt) - len(before)] + kept, notes, objects, affordances,
                                    banned, _worn_out(banned), completions)
            if (self.keep_steps and origin is not None and isinstance(stmt, Call)
                    and origin[0].action not in NAVIGATION_ACTIONS and ALREADY not in origin[1]
                    and _gives_up(fix) and added < MAX_STEPS
                    and (found := self._precondition(*_restored(text, stmt, origin[0]), objects, affordances, first,
                                                     check_from, verify, MAX_STEPS - added, origin[1])) is not None):
                # the model would give the task step first rejected here up: that step stays, with what it needs
                # written before it (not the model's later substitutes, which failed too)
                (searched, accepted), steps = _go_on(found[0], before, cut), found[1]
                added += len(steps)
                rejected[-1] += f"; {call_text(origin[0])} kept, {', '.join(steps)} written before it"
                rewrites.append(Rewrite(stmt.line, stmt, "\n".join((*steps, call_text(origin[0]))), failure.reason))
                check_from = fix_line = stmt.line + len(steps)
                continue
            rewrites.append(Rewrite(stmt.line, stmt, fix.strip(), failure.reason))
            accepted = (kept + fix + "\t")[len(before):] if fix.strip() else ""
            if not fix.strip():  # the model ends the plan where the rejected statement was
                text = kept.rstrip("\t")
                read = self._read(text, objects, first)
                break
            check_from = fix_line = stmt.line
        walks: list[str] = []
        if self.room_walks and verify is not None:
            text, read, rewrites, walks = self._walk_rooms(text, read, objects, first, verify, rewrites)
        return PlanResult(read.program, text, tuple(completions), sum(c.completion_tokens for c in completions),
                          sum(c.prompt_tokens for c in completions), read.problems, read.problems, read.dropped,
                          prompt, tuple(rejected), tuple(condition_text(g) for g in goals), budget_spent,
                          tuple(rewrites), tuple(walks))

    def _walk_rooms(self, text: str, read: ReadPlan, objects: Sequence[str], first: int, verify: Verifier,
                    rewrites: list[Rewrite]) -> tuple[str, ReadPlan, list[Rewrite], list[str]]:
        """The plan with a walk to the room written before each move into another room (`planners.room_walks`),
        kept only when it fails no more steps on the copy of the scene; rewrites moved to their new lines."""
        steps = verify.steps(read.program)
        walked, written = with_room_walks(text, read.program, steps, set(objects), first)
        if not written:
            return text, read, rewrites, []
        again = self._read(walked, objects, first)
        if len(verify(again.program)) > sum(not s.ok for s in steps):
            return text, read, rewrites, []
        placed = [f"line {at + i}: walk('{room}')" for i, (at, room) in enumerate(written)]
        return walked, again, [replace(r, line=moved(r.line, written)) for r in rewrites], placed

    def _searches(self, failure: _Rejected | StepEvent | None) -> bool:
        """Whether the precondition search answers this failure before the model: any failed step with
        `preconditions`, one for want of something opened with `open_first`."""
        if not isinstance(failure, StepEvent):
            return False
        return self.preconditions or (self.open_first and about_closed(failure.reason))

    def _precondition(self, text: str, stmt: Call, objects: Sequence[str],
                      affordances: Mapping[str, Set[str]] | None, first: int, check_from: int, verify: Verifier,
                      max_steps: int, reason: str = "") -> tuple[str, tuple[str, ...]] | None:
        """`text` with the steps the precondition search (`planners.preconditions`) writes before the failing
        call `stmt` so that it executes on the copy of the scene, and those steps; None when the call is not a
        line of its own or no candidate works. The search also tries the closed container `reason` names."""
        if not text.split("\n")[stmt.line - 1].strip().startswith(f"{stmt.action}("):
            return None

        def runs(candidate: str, n: int) -> bool:
            blocked = _first_rejected(self._read(candidate, objects, first).program, check_from, verify)
            return blocked is None or blocked.line > stmt.line + n

        container = closed_container(reason)
        return precondition_search(text, stmt.line, stmt, self.space, objects, affordances, runs, max_steps,
                                   (container,) if container else ())

    def _read(self, text: str, objects: Sequence[str], first: int) -> ReadPlan:
        """Model text as a program: unparseable and invalid lines from line `first` on dropped."""
        return read_plan(text, self.space, objects, from_line=first)

    def _replacement(self, prompt: str, notes: Sequence[str], objects: Sequence[str],
                     affordances: Mapping[str, Set[str]] | None, banned: Sequence[tuple[str, tuple[str, ...]]],
                     banned_actions: Set[str], completions: list[Completion]) -> str:
        """One statement to stand where rejected ones stood: the model sees why each was rejected (comments
        that are not kept in the plan) and, with a grammar, cannot write a rejected call again there, nor an
        action rejected `ACTION_REJECTIONS` times there."""
        grammar = None
        if self.constrained:
            grammar = plan_grammar(self.space, objects, comments=self.prompts.comments,
                                   asserts=self.prompts.asserts, affordances=affordances,
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
        """Whether the plan `head + body` has a failed action (or a call repeated `REPEATS` times) from line
        `check_from` on."""
        program = self._read(head + body, objects, first).program
        return _first_rejected(program, check_from, verify) is not None

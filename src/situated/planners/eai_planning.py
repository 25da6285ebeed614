"""EAI planning: open loop (`plan_task`, one answer) and grounded (`plan_grounded`, rewritten from each failing step).

The prompt goes to the model in its own chat template (`LLM.chat_template`: ChatML for the embedded Qwen models),
as EAI sends it to chat models: one user message; the answer is then the start of the assistant's turn. `shots`
put project examples first, as earlier exchanges of the same template.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from situated.datasets.eai_actions import (
    EaiTask,
    check_protocol,
    fill_template,
    template_of,
)
from situated.errors import ParseError
from situated.llm.base import LLM, Completion
from situated.llm.chat_template import ChatTemplate
from situated.planners.eai_answers import Call, EaiPlan, Step, entry_text, format_answer, parse_answer
from situated.planners.eai_examples import EXAMPLES, EaiExample
from situated.planners.eai_grammar import DEFAULT_MAX_STEPS, answer_grammar

DEFAULT_MAX_TOKENS = 768
"""Tokens per answer (40 steps with ids take 500-800); a longer answer is cut back to its complete steps."""

DEFAULT_REPAIRS = 5
GROUNDED = "grounded"
OPEN_LOOP = "open-loop"


# ---------------------------------------------------------------------------------------------- open loop

def model_prompt(llm: LLM, task: EaiTask, protocol: str, template: ChatTemplate | None = None,
                 shots: int = 0) -> str:
    """EAI's prompt for `protocol` in `template` (default: the model's own, `llm.chat_template`).

    `shots=N`: the first N project examples (`eai_examples.EXAMPLES`) go first, each as an earlier exchange --
    EAI's prompt text with the example's fields, then its answer in the protocol's format -- and the task's
    prompt last, so the examples are a prefix shared by every task."""
    chat = llm.chat_template if template is None else template
    if not 0 <= shots <= len(EXAMPLES):
        raise ValueError(f"shots must be between 0 and {len(EXAMPLES)}, got {shots}")
    if shots and not chat.turn_break:
        raise ValueError("shots need a prompt template that says how turns follow each other (its turn_break)")
    prompt = task.prompt(protocol)
    turns = [example_prompt(example, prompt) + chat.tail + example_answer(example, protocol) + chat.turn_break
             for example in EXAMPLES[:shots]]
    return chat.head + "".join(turns) + prompt + chat.tail


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
              template: ChatTemplate | None = None, max_steps: int = DEFAULT_MAX_STEPS,
              max_tokens: int = DEFAULT_MAX_TOKENS,
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
unmet (`situated.eval.systems.eai_check.scene_checker` for VirtualHome)."""


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
            f"  {entry_text(s, self.protocol)},\n" for s in steps)

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
                  repairs: int = DEFAULT_REPAIRS, typed: bool = True, template: ChatTemplate | None = None,
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
            rejection = _Rejection(bad.call, f"{entry_text(bad, protocol)} is not possible: {verdict.reason}")
            rejected.append(f"step {verdict.failed_at + 1}: {entry_text(bad, protocol)}: {verdict.reason}")
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

"""ProgPrompt's tabletop variant (the paper's real-robot experiments, §V-C; PROTOCOLS.md §1 "Tabletop variant").

One primitive, `grab_and_putin(obj1, obj2)`, in the import line; no global object list: each plan function starts
with its own `objects = [...]`, the names the camera sees; comments but no assertions. The prompt is the import
line, the example plans (written for this project) and the open header of the task's function *including* its
objects line::

    from actions import grab_and_putin <obj> <obj>

    def put_the_red_cube_in_the_box():
    \tobjects = ['ball', 'box', 'red_cube']
    \t# 0: put the red cube in the box
    \tgrab_and_putin('red_cube', 'box')

    def sort_fruits():
    \tobjects = ['apple', 'bowl', 'plate', ...]
    \t

The plan language has no assignment: the model writes only what follows the objects line, so the parser never
sees it (lines before the generated text are not read as plan lines), and an example's objects line is read with a
strict pattern (never evaluated) and blanked before its body is parsed (`read_example`, `strip_objects_line`).
Decoding follows `plan_grammar(TABLETOP_SPACE, objects, asserts=False)` with the scene's affordances, so the first
argument is an item the camera sees and the second a container it sees.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from types import MappingProxyType

from ..actions import TABLETOP_SPACE
from ..errors import DataError, ParseError
from ..llm.base import LLM
from ..program import Call, Comment, Program, parse
from ..program.grammar import plan_objects
from .base import PlanResult
from .feedback import Verifier
from .progprompt import ProgPromptPlanner
from .progprompt_prompt import filter_lines, function_name, objects_line, select_examples

_OBJECTS_LINE = re.compile(r"[ \t]+objects = \[((?:'[A-Za-z0-9_]+'(?:, *'[A-Za-z0-9_]+')*)?)\][ \t]*")
_NAME = re.compile(r"'([A-Za-z0-9_]+)'")

TABLETOP_EXAMPLES: Mapping[str, str] = MappingProxyType({
    "put_the_red_cube_in_the_box": (
        "def put_the_red_cube_in_the_box():\n"
        "\tobjects = ['ball', 'box', 'red_cube']\n"
        "\t# 0: put the red cube in the box\n"
        "\tgrab_and_putin('red_cube', 'box')"
    ),
    "put_the_toys_in_the_tray": (
        "def put_the_toys_in_the_tray():\n"
        "\tobjects = ['candy', 'duck', 'mug', 'toy_car', 'tray']\n"
        "\t# 0: put the duck in the tray\n"
        "\tgrab_and_putin('duck', 'tray')\n"
        "\t# 1: put the toy car in the tray\n"
        "\tgrab_and_putin('toy_car', 'tray')"
    ),
    "sort_the_blocks_and_the_sweets": (
        "def sort_the_blocks_and_the_sweets():\n"
        "\tobjects = ['blue_cube', 'candy', 'gift_bag', 'green_cube', 'plate', 'strawberry', 'tray']\n"
        "\t# 0: the blocks go in the tray\n"
        "\tgrab_and_putin('blue_cube', 'tray')\n"
        "\tgrab_and_putin('green_cube', 'tray')\n"
        "\t# 1: the sweets go in the gift bag\n"
        "\tgrab_and_putin('candy', 'gift_bag')"
    ),
})
"""The prompt's example plans: a single pick-and-place, a few items of one kind among others, sorting by kind
into two containers. Their objects lists hold things the plan leaves alone, as a scene with distractors does."""


def strip_objects_line(text: str) -> tuple[tuple[str, ...] | None, str]:
    """A plan's local object list, when its second line is `objects = ['a', 'b']` (read with a strict pattern,
    never evaluated), and the text with that line blanked so that line numbers stay; (None, text) otherwise."""
    lines = text.split("\n")
    if len(lines) < 2 or not lines[0].lstrip().startswith("def "):
        return None, text
    match = _OBJECTS_LINE.fullmatch(lines[1])
    if match is None:
        return None, text
    objects = tuple(_NAME.findall(match.group(1)))
    return objects, "\n".join([lines[0], "", *lines[2:]])


@dataclass(frozen=True)
class TabletopExample:
    """An example plan as the prompt shows it (`text`), its local object list and its parsed body."""

    name: str
    objects: tuple[str, ...]
    text: str
    program: Program


def read_example(text: str, source: str = "<example>") -> TabletopExample:
    """An example plan in prompt form: `def name():`, then `objects = [...]`, then plan lines (comments and
    calls, no assertions). DataError naming `source` when the objects line is missing or the body does not
    parse, names an object outside its list or has an assertion."""
    objects, body = strip_objects_line(text.strip("\n"))
    if objects is None:
        raise DataError(f"{source}: line 2: expected the plan's object list, e.g. \"\\tobjects = ['apple', 'bowl']\"")
    try:
        program = parse(body, source=source)
    except ParseError as err:
        raise DataError(str(err)) from None
    if program.name is None:
        raise DataError(f"{source}: line 1: expected a 'def <name>():' header")
    for stmt in program.body:
        if not isinstance(stmt, Call | Comment):
            raise DataError(f"{source}: line {stmt.line}: tabletop plans have only comments and action calls")
        for arg in stmt.args if isinstance(stmt, Call) else ():
            if arg not in objects:
                raise DataError(f"{source}: line {stmt.line}: {arg!r} is not in the plan's object list")
    return TabletopExample(program.name, objects, text.strip("\n").rstrip(), program)


def objects_header(task_name: str, objects: Sequence[str]) -> str:
    """The open function the model completes: `def task():`, its objects line, and the indent of the next."""
    return f"def {function_name(task_name)}():\n\t{objects_line(objects)}\n\t"


class TabletopPrompt:
    """Builds the tabletop prompt: import line, example plans (each with its objects), the task's open header."""

    asserts = False

    def __init__(self, examples: Mapping[str, str] | None = None, *, n_examples: int = 3,
                 sample_examples: bool = False, seed: int = 0, comments: bool = True) -> None:
        source = TABLETOP_EXAMPLES if examples is None else examples
        self.examples = {name: read_example(text, f"example {name}") for name, text in source.items()}
        for name, example in self.examples.items():
            if example.name != name:
                raise DataError(f"example {name}: line 1: header defines {example.name!r}, not {name!r}")
        self.n_examples = n_examples
        self.sample_examples = sample_examples
        self.seed = seed
        self.comments = comments
        self.examples_for(None)  # fails early on too many examples

    def examples_for(self, task_name: str | None) -> list[str]:
        """The example plans shown for a task: never the task's own plan (one example fewer then)."""
        exclude = function_name(task_name) if task_name else None
        n = min(self.n_examples, len(self.examples) - 1) if exclude in self.examples else self.n_examples
        return select_examples(self.examples, n, sample=self.sample_examples, seed=self.seed, exclude=exclude)

    def prompt(self, task_name: str, objects: Sequence[str]) -> str:
        """The full prompt, ending with `def task():\\n\\tobjects = [...]\\n\\t`."""
        parts = [TABLETOP_SPACE.import_line(), *(self.examples[n].text for n in self.examples_for(task_name))]
        context = "\n\n".join(parts) + "\n\n"
        if not self.comments:
            context = filter_lines(context, "no-comments")
        return context + objects_header(task_name, objects)


class TabletopPlanner(ProgPromptPlanner):
    """ProgPrompt on the tabletop: the household planner's decoding (grammar, continuation past the token cap,
    replanning) over `TABLETOP_SPACE` with the tabletop prompt (see the module docstring)."""

    def __init__(self, llm: LLM, examples: Mapping[str, str] | None = None, *, n_examples: int = 3,
                 sample_examples: bool = False, seed: int = 0, comments: bool = True, constrained: bool = True,
                 max_tokens: int = 600, frequency_penalty: float = 0.15) -> None:
        super().__init__(llm, TABLETOP_SPACE, None, n_examples=0, seed=seed,
                         ablation="no-feedback" if comments else "neither", constrained=constrained,
                         max_tokens=max_tokens, frequency_penalty=frequency_penalty)
        self.prompts = TabletopPrompt(examples, n_examples=n_examples,  # type: ignore[assignment]
                                      sample_examples=sample_examples, seed=seed, comments=comments)

    def plan(self, task_name: str, objects: Sequence[str], *,
             affordances: Mapping[str, Set[str]] | None = None, verify: Verifier | None = None) -> PlanResult:
        """A plan for `task_name` over the objects the camera sees; `affordances` (the env's
        `object_properties()`) keep items first and containers second. Without a grammar, lines naming unknown
        actions or objects are dropped (no second attempt)."""
        objects = plan_objects(objects)
        head = objects_header(task_name, objects)
        return self._plan(self.prompts.prompt(task_name, objects), head, objects, affordances, verify)

    def replan(self, task_name: str, objects: Sequence[str], done: str, failure: str, *,
               affordances: Mapping[str, Set[str]] | None = None, verify: Verifier | None = None) -> PlanResult:
        """A new remainder after a failed action: `done` is the plan text run so far (from `def ...():`, objects
        line included, to the failed line), `failure` the comment describing the failure."""
        objects = plan_objects(objects)
        prompt = self.prompts.prompt(task_name, objects)
        before = done.rstrip("\n") + "\n\t# " + failure.replace("\n", " ") + "\n\t"
        head = objects_header(task_name, objects)
        return self._plan(prompt[: -len(head)] + before, before, objects, affordances, verify)

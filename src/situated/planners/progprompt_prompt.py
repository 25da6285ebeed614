"""ProgPrompt's prompt (PROTOCOLS.md §1): import line, objects, example plan functions, the task's open header.

Ablations are line filters on the whole prompt; examples are the paper's three (or their counterparts) unless
sampled; a scene whose objects the examples do not all use gets the paper's second `objects = [...]` list.
"""

from __future__ import annotations

import keyword
import random
import re
from collections.abc import Mapping, Sequence

from ..actions import PROGPROMPT_SPACE, ActionSpace
from ..errors import SituatedError
from ..program import parse
from ..program.reading import plan_object_names

ABLATIONS: tuple[str, ...] = ("full", "no-comments", "no-feedback", "neither")

PAPER_EXAMPLES: tuple[str, ...] = ("put_the_wine_glass_in_the_kitchen_cabinet", "throw_away_the_lime", "wash_mug")
"""The paper's fixed prompt examples."""

DEFAULT_EXAMPLES: tuple[str, ...] = (*PAPER_EXAMPLES, "put_salmon_in_the_fridge", "throw_away_apple", "wash_the_plate")
"""Preferred prompt examples, when the example set has them: the paper's, then their counterparts among the
project's own plans in `examples/plans` (put something in a container, throw something away, wash)."""


def function_name(task_name: str) -> str:
    """`"Microwave salmon"` -> `microwave_salmon` (a valid Python identifier that is no keyword)."""
    name = re.sub(r"[^0-9a-zA-Z]+", "_", task_name.strip().lower()).strip("_")
    if not name:
        raise SituatedError(f"task name {task_name!r} has no letters or digits")
    return f"task_{name}" if name[0].isdigit() or keyword.iskeyword(name) else name


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


def header(task_name: str) -> str:
    """The open function header the model completes: `def microwave_salmon():` + newline + tab."""
    return f"def {function_name(task_name)}():\n\t"


class ProgPromptPrompt:
    """Builds ProgPrompt prompts from an action space and a set of example plans (see the module docstring)."""

    def __init__(self, space: ActionSpace = PROGPROMPT_SPACE, examples: Mapping[str, str] | None = None, *,
                 n_examples: int = 3, sample_examples: bool = False, seed: int = 0,
                 ablation: str = "full") -> None:
        filter_lines("", ablation)  # validates the name
        self.space = space
        self.examples = dict(examples or {})
        self.n_examples = n_examples
        self.sample_examples = sample_examples
        self.seed = seed
        self.ablation = ablation
        self.examples_for(None)  # fails early on too many examples
        self._programs = {n: parse(t, source=f"example {n}") for n, t in self.examples.items()}

    @property
    def comments(self) -> bool:
        """Whether plans have comment lines under this ablation."""
        return self.ablation in ("full", "no-feedback")

    @property
    def asserts(self) -> bool:
        """Whether plans have assertions under this ablation."""
        return self.ablation in ("full", "no-comments")

    def examples_for(self, task_name: str | None) -> list[str]:
        """The example plans shown for a task (never the task's own plan, when the example set has it)."""
        exclude = function_name(task_name) if task_name else None
        return select_examples(self.examples, self.n_examples, sample=self.sample_examples, seed=self.seed,
                               exclude=exclude)

    def example_objects(self, task_name: str | None) -> list[str]:
        """The objects the task's example plans use."""
        return plan_object_names(self._programs[n] for n in self.examples_for(task_name))

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
        return self.context(objects, new_env_objects, task_name) + header(task_name)

    def scene_prompt(self, task_name: str, objects: Sequence[str]) -> str:
        """The prompt for a scene: one object list when the examples only use the scene's objects; otherwise
        the examples' own objects first and the scene's as the new environment's list (the paper's other-
        scene set-up)."""
        example_objects = self.example_objects(task_name)
        if set(example_objects) <= set(objects):
            return self.prompt(task_name, objects)
        return self.prompt(task_name, example_objects, new_env_objects=objects)

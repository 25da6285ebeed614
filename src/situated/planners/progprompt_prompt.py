"""ProgPrompt's prompt (PROTOCOLS.md §1): import line, objects, example plan functions, the task's open header.

Ablations are line filters on the whole prompt; examples are the paper's three (or their counterparts) unless
sampled; a scene whose objects the examples do not all use gets the paper's second `objects = [...]` list. With
`scene_examples` the examples are chosen for the scene first: those naming the fewest objects the scene lacks
(none, where the pool allows), in the fixed or retrieved order among equals.
"""

from __future__ import annotations

import keyword
import random
import re
from collections.abc import Mapping, Sequence

from ..actions import PROGPROMPT_SPACE, ActionSpace
from ..errors import SituatedError
from ..program import parse
from ..program.effects import GOALS_PREFIX, goals_line, net_effects
from ..program.reading import plan_object_names
from .retrieval import Retriever, nearest

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


_FILLER_WORDS = frozenset({"the", "a", "an", "my", "some", "to", "in", "on", "of"})


def same_task(name: str, other: str) -> bool:
    """Whether two task or function names are one task written two ways (`turn off tablelamp` and
    `turn_off_the_table_lamp`): equal letters once filler words, spaces and underscores are gone."""

    def key(text: str) -> str:
        return "".join(w for w in re.findall(r"[a-z0-9]+", text.lower().replace("_", " ")) if w not in _FILLER_WORDS)

    return key(name) == key(other)


def select_examples(examples: Mapping[str, str], n: int, *, sample: bool = False, seed: int = 0,
                    exclude: str | None = None) -> list[str]:
    """Names of the `n` prompt examples: the paper's three first when present, then the rest sorted by name;
    with `sample=True` a seeded random sample instead. The task's own plan (`exclude`, however it is written:
    `same_task`) is never chosen."""
    names = sorted(e for e in examples if exclude is None or not same_task(e, exclude))
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
                 ablation: str = "full", retriever: Retriever | None = None, goals: bool = False,
                 scene_examples: bool = False) -> None:
        filter_lines("", ablation)  # validates the name
        self.space = space
        self.examples = dict(examples or {})
        self.n_examples = n_examples
        self.sample_examples = sample_examples
        self.seed = seed
        self.ablation = ablation
        self.retriever = retriever
        self.goals = goals and self.comments
        self.scene_examples = scene_examples
        self.examples_for(None)  # fails early on too many examples
        self._programs = {n: parse(t, source=f"example {n}") for n, t in self.examples.items()}
        self._objects = {n: set(plan_object_names([p])) for n, p in self._programs.items()}

    @property
    def comments(self) -> bool:
        """Whether plans have comment lines under this ablation."""
        return self.ablation in ("full", "no-feedback")

    @property
    def asserts(self) -> bool:
        """Whether plans have assertions under this ablation."""
        return self.ablation in ("full", "no-comments")

    def examples_for(self, task_name: str | None, scene: Sequence[str] | None = None) -> list[str]:
        """The example plans shown for a task (never the task's own plan, when the example set has it): fixed
        (the paper's), sampled, or — with a retriever — the `n_examples` nearest to the task, the nearest last
        (right above the task's header). With `scene_examples` and the scene's objects, plans naming fewer
        objects the scene lacks come first (module docstring)."""
        exclude = function_name(task_name) if task_name else None
        by_scene = self.scene_examples and scene is not None and not self.sample_examples
        if self.retriever is None or task_name is None:
            if not by_scene:
                return select_examples(self.examples, self.n_examples, sample=self.sample_examples, seed=self.seed,
                                       exclude=exclude)
            pool = [e for e in self.examples if exclude is None or not same_task(e, exclude)]
            order = select_examples(self.examples, len(pool), exclude=exclude)
            return self._fewest_absent(order, scene or ())[:self.n_examples]
        if self.n_examples > len(self.examples):
            raise SituatedError(f"{self.n_examples} examples asked for, only {len(self.examples)} available")
        candidates = {n: n.replace("_", " ") for n in self.examples if not same_task(n, task_name)}
        if not by_scene:
            return list(reversed(nearest(self.retriever, task_name, candidates, self.n_examples)))
        order = nearest(self.retriever, task_name, candidates, len(candidates))
        return list(reversed(self._fewest_absent(order, scene or ())[:self.n_examples]))

    def absent_objects(self, name: str, scene: Sequence[str]) -> set[str]:
        """The objects example plan `name` names that the scene lacks."""
        return self._objects[name] - set(scene)

    def _fewest_absent(self, order: Sequence[str], scene: Sequence[str]) -> list[str]:
        """`order` stably sorted by how many objects each plan names that the scene lacks (fewest first)."""
        return sorted(order, key=lambda name: len(self.absent_objects(name, scene)))

    def example_text(self, name: str) -> str:
        """An example plan as shown: its text, with its goals line above the `def` when goals are stated."""
        text = self.examples[name].strip("\n").rstrip()
        line = goals_line(net_effects(self._programs[name])) if self.goals else ""
        return f"{line}\n{text}" if line else text

    def goals_prompt(self, task_name: str, objects: Sequence[str]) -> str:
        """The prompt asking for the task's goals: the scene prompt up to the header, then `# goals:`."""
        prompt = self.scene_prompt(task_name, objects)
        return prompt[: -len(header(task_name))] + GOALS_PREFIX

    def example_objects(self, task_name: str | None, scene: Sequence[str] | None = None) -> list[str]:
        """The objects the task's example plans use (chosen for `scene` with `scene_examples`)."""
        return plan_object_names(self._programs[n] for n in self.examples_for(task_name, scene))

    def context(self, objects: Sequence[str], new_env_objects: Sequence[str] | None = None,
                task_name: str | None = None) -> str:
        """Everything before the task's header: import line, objects, examples, the new environment's objects
        (if any), with the ablation's line filter applied; ends with a blank line."""
        parts = [self.space.import_line(), objects_line(objects)]
        scene = new_env_objects if new_env_objects is not None else objects
        parts += [self.example_text(n) for n in self.examples_for(task_name, scene)]
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
        example_objects = self.example_objects(task_name, objects)
        if set(example_objects) <= set(objects):
            return self.prompt(task_name, objects)
        return self.prompt(task_name, example_objects, new_env_objects=objects)

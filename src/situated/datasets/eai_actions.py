"""EAI's VirtualHome action-sequencing tasks, read from the installed `eai-eval` package.

Everything comes from the package (`virtualhome_eval/`), never from its ground-truth programs:

- `evaluation/action_sequencing/prompts/helm_prompts.json`: the 342 prompts as released (`identifier`,
  `llm_prompt`), written with the 1.0.4 template (names-only answers) in both 1.0.4 and 1.0.5. Each is the
  template with five fields filled in (objects, current state, node / edge / action goals); the fields are cut
  out at the template's fixed markers, so the prompt text is EAI's own and never depends on PYTHONHASHSEED.
- `evaluation/action_sequencing/prompts/one_shot.py`: the template of the installed version (read as data
  with `ast`); for the 1.0.5 protocol (name+id answers) the same fields go into the 1.0.5 template, exactly as
  EAI's `generate_prompts` fills it.
- `resources/virtualhome/task_state_LTL_formula_accurate.json`: each task's goals (`vh_goal`: node goals with
  ids, edge goals with ids, action goals) -- the data the prompt's goal text is made from.
- `resources/virtualhome/id2task.json`: task name per identifier.
- `simulation/evolving_graph/eval_utils.py`: the evaluator's `valid_actions` (read as data with `ast`).
- `dataset/programs_processed_precond_nograb_morepreconds/init_and_final_graphs/.../file<id>.json`: only its
  `init_graph`, for the grounded variant's private scene (`EaiTask.initial_graph()`).

EAI's evaluator scores 305 of the 342 tasks: it drops a task whose gold final graph fails its own goal check,
and because that check stops counting edge goals after the first match (`break`), every task with two or more
distinct edge goals fails it (37 tasks). `EaiTask.scored` applies that rule to the goals alone.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from situated.errors import DataError

PROTOCOLS = ("1.0.4", "1.0.5")
"""Answer formats: "1.0.4" names only (`{"WALK": ["sink"]}`, the published numbers); "1.0.5" name and id
(`{"WALK": ["sink", 1001]}`)."""

SCENE = "scene_1"
CHARACTER = "character"
PROGRAM_SET = "programs_processed_precond_nograb_morepreconds"
GRAPH_DIR = ("init_and_final_graphs", "TrimmedTestScene1_graph", "results_intentions_march-13-18")

FIELDS: tuple[tuple[str, str, str], ...] = (
    ("object_in_scene", "The relevant objects in the scene are:\n", "\n\nThe current environment state is\n"),
    ("cur_change", "The current environment state is\n", "\n\nNode goals are:\n"),
    ("node_goals", "Node goals are:\n", "\n\nEdge goals are:\n"),
    ("edge_goals", "Edge goals are:\n", "\n\nAction goals are:\n"),
    ("action_goals", "Action goals are:\n", "\n\nPlease output the list"),
)
"""(placeholder, text before it, text after it) of the five fields of EAI's template, in prompt order."""

_INPUT = "\nInput:\n"
_OBJECT_LINE = re.compile(r"^(?P<name>[^,\n]+), id: (?P<id>\d+), properties: (?P<props>\[.*\])$")
_ACTION_LINE = re.compile(r"^(?P<name>[A-Z_]+): \((?P<arity>\d), (?P<pre>\[.*\])\) # (?P<doc>.*)$")
_MARKER_105 = "Output only object names and their IDs"


@dataclass(frozen=True)
class EaiObject:
    """An object the prompt lists: class name, node id and the properties it shows."""

    name: str
    id: int
    properties: tuple[str, ...] = ()


@dataclass(frozen=True)
class EaiAction:
    """An action of the prompt's "Supported Actions List": name, number of objects, properties per object."""

    name: str
    arity: int
    preconditions: tuple[tuple[str, ...], ...] = ()
    doc: str = ""


@dataclass(frozen=True)
class NodeGoal:
    """`name` (node `id`) has `state` at the end."""

    id: int
    name: str
    state: str


@dataclass(frozen=True)
class EdgeGoal:
    """Edge `from_id` -`relation`-> `to_id` holds at the end."""

    from_id: int
    relation: str
    to_id: int


@dataclass(frozen=True)
class EaiTask:
    """One action-sequencing task: its identifier, the released prompt and the goals it states."""

    task_id: str
    task_name: str
    released_prompt: str = field(repr=False)
    fields: tuple[tuple[str, str], ...] = field(repr=False)
    objects: tuple[EaiObject, ...]
    node_goals: tuple[NodeGoal, ...]
    edge_goals: tuple[EdgeGoal, ...]
    action_goals: tuple[str, ...]
    template_105: str = field(default="", repr=False, compare=False)
    graph_path: Path | None = field(default=None, repr=False, compare=False)

    @property
    def instruction(self) -> str:
        """The task's name, as EAI lists it (`Turn on light`)."""
        return self.task_name

    @property
    def scored(self) -> bool:
        """Whether EAI's evaluator scores this task (at most one distinct edge goal; see the module doc)."""
        return len(set(self.edge_goals)) <= 1

    def prompt(self, protocol: str = "1.0.5") -> str:
        """EAI's prompt text for `protocol`: the released one for 1.0.4, the 1.0.5 template filled in for 1.0.5."""
        check_protocol(protocol)
        if protocol == "1.0.4":
            return self.released_prompt
        if not self.template_105:
            raise DataError("the installed eai-eval has no 1.0.5 action-sequencing template "
                            "(evaluation/action_sequencing/prompts/one_shot.py); install eai-eval==1.0.5")
        return fill_template(self.template_105, dict(self.fields))

    def field_text(self, name: str) -> str:
        return dict(self.fields)[name]

    def object(self, object_id: int) -> EaiObject:
        for obj in self.objects:
            if obj.id == object_id:
                return obj
        raise KeyError(object_id)

    def name_of(self, object_id: int) -> str:
        return self.object(object_id).name

    def names_only_id(self, name: str) -> int:
        """The id EAI's 1.0.4 evaluator gives a bare name: the last object of that name the prompt lists."""
        ids = [o.id for o in self.objects if o.name == name]
        if not ids:
            raise KeyError(name)
        return ids[-1]

    def initial_graph(self) -> dict[str, Any]:
        """The task's initial VirtualHome graph (`init_graph` of its graphs file; nothing else is used)."""
        if self.graph_path is None:
            raise DataError(f"task {self.task_id}: no graphs file known")
        data = _read_json(self.graph_path)
        if not isinstance(data, dict) or not isinstance(data.get("init_graph"), dict):
            raise DataError(f"{self.graph_path}: missing field 'init_graph'")
        return data["init_graph"]


def check_protocol(protocol: str) -> None:
    if protocol not in PROTOCOLS:
        raise DataError(f"unknown EAI protocol {protocol!r} (known: {', '.join(PROTOCOLS)})")


def eai_package_root() -> Path:
    """The installed `virtualhome_eval` package directory (found without importing it)."""
    spec = importlib.util.find_spec("virtualhome_eval")
    if spec is None or not spec.submodule_search_locations:
        raise DataError("EAI action sequencing needs the optional package eai-eval "
                        "(pip install --no-deps eai-eval==1.0.5)")
    return Path(next(iter(spec.submodule_search_locations)))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: not found") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None


def _module_constant(path: Path, name: str) -> Any:
    """A literal assigned at module level in a Python file, read with `ast` (the file is never run)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    except SyntaxError as exc:
        raise DataError(f"{path}:{exc.lineno}: not Python ({exc.msg})") from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                raise DataError(f"{path}:{node.lineno}: {name} is not a literal") from None
    raise DataError(f"{path}: no module-level {name!r}")


def template(root: Path | None = None) -> str:
    """The installed action-sequencing prompt template (`one_shot.prompt`)."""
    root = eai_package_root() if root is None else Path(root)
    value = _module_constant(root / "evaluation" / "action_sequencing" / "prompts" / "one_shot.py", "prompt")
    if not isinstance(value, str):
        raise DataError(f"{root}: one_shot.prompt is not a string")
    return value


def evaluator_actions(root: Path | None = None) -> dict[str, int]:
    """The evaluator's `valid_actions`: action name -> number of objects (anything else is a hallucination)."""
    root = eai_package_root() if root is None else Path(root)
    return dict(_valid_actions(root / "simulation" / "evolving_graph" / "eval_utils.py"))


@functools.lru_cache(maxsize=4)
def _valid_actions(path: Path) -> tuple[tuple[str, int], ...]:
    """`valid_actions` read from the evaluator's source once per process (every grammar needs it)."""
    value = _module_constant(path, "valid_actions")
    try:
        return tuple((str(k), int(v[1])) for k, v in value.items())
    except (AttributeError, TypeError, IndexError, ValueError):
        raise DataError(f"{path}: valid_actions is not {{name: (name, arity)}}") from None


def split_fields(prompt: str, source: str = "prompt") -> dict[str, str]:
    """The five fields of a prompt made from EAI's template (DataError naming the missing marker)."""
    return {name: prompt[start:end] for name, start, end in _field_spans(prompt, source)}


def template_of(prompt: str, source: str = "prompt") -> str:
    """The template a prompt was made from: its five fields put back as `<field>` placeholders."""
    parts, pos = [], 0
    for name, start, end in _field_spans(prompt, source):
        parts += [prompt[pos:start], f"<{name}>"]
        pos = end
    return "".join(parts) + prompt[pos:]


def _field_spans(prompt: str, source: str) -> list[tuple[str, int, int]]:
    """(field, start, end) of each of the five fields, in prompt order."""
    pos = prompt.find(_INPUT)
    if pos < 0:
        raise DataError(f"{source}: no 'Input:' line")
    spans = []
    for name, before, after in FIELDS:
        start = prompt.find(before, pos)
        end = prompt.find(after, start + len(before)) if start >= 0 else -1
        if start < 0 or end < 0:
            raise DataError(f"{source}: field {name!r} not found (marker {before.strip()!r})")
        spans.append((name, start + len(before), end))
        pos = end
    return spans


def fill_template(text: str, fields: dict[str, str]) -> str:
    """EAI's `generate_prompts`: each `<field>` placeholder replaced in turn."""
    for name, _, _ in FIELDS:
        text = text.replace(f"<{name}>", fields[name])
    return text


def parse_objects(object_in_scene: str, source: str = "prompt") -> tuple[EaiObject, ...]:
    """The "Objects in the scene" lines: `name, id: N, properties: [...]` (properties read with literal_eval)."""
    lines = object_in_scene.splitlines()
    if not lines or lines[0] != "Objects in the scene:":
        raise DataError(f"{source}: objects field does not start with 'Objects in the scene:'")
    objects = []
    for line in lines[1:]:
        if line.startswith("-----"):
            break
        match = _OBJECT_LINE.match(line)
        if match is None:
            raise DataError(f"{source}: cannot read object line {line!r}")
        try:
            props = ast.literal_eval(match["props"])
        except (ValueError, SyntaxError):
            raise DataError(f"{source}: cannot read the properties of {line!r}") from None
        if not isinstance(props, list) or not all(isinstance(p, str) for p in props):
            raise DataError(f"{source}: properties of {line!r} are not a list of names")
        objects.append(EaiObject(match["name"], int(match["id"]), tuple(props)))
    if not objects:
        raise DataError(f"{source}: lists no objects")
    return tuple(objects)


def parse_actions(prompt: str, source: str = "prompt") -> tuple[EaiAction, ...]:
    """The prompt's "Supported Actions List": `NAME: (n, [[props], ...]) # description` lines."""
    start = prompt.find("Supported Actions List:\n")
    if start < 0:
        raise DataError(f"{source}: no 'Supported Actions List:'")
    actions = []
    for line in prompt[start:].splitlines()[1:]:
        if not line.strip():
            break
        match = _ACTION_LINE.match(line)
        if match is None:
            raise DataError(f"{source}: cannot read action line {line!r}")
        try:
            pre = ast.literal_eval(match["pre"])
        except (ValueError, SyntaxError):
            raise DataError(f"{source}: cannot read the preconditions of {line!r}") from None
        actions.append(EaiAction(match["name"], int(match["arity"]), tuple(tuple(p) for p in pre), match["doc"]))
    return tuple(actions)


def supported_actions(prompt: str, root: Path | None = None) -> tuple[EaiAction, ...]:
    """The prompt's actions that EAI's evaluator accepts with the same number of objects.

    The prompt lists PLUGIN, PLUGOUT and RELEASE, but the evaluator's `valid_actions` lacks them: an answer using
    them is scored as a hallucination, so they are left out.
    """
    valid = evaluator_actions(root)
    return tuple(a for a in parse_actions(prompt) if valid.get(a.name) == a.arity)


def _goals(task_id: str, entry: Any, source: str) -> tuple[tuple[NodeGoal, ...], tuple[EdgeGoal, ...], tuple[str, ...]]:
    try:
        vh_goal = entry["vh_goal"]
        nodes, edges = [], []
        for goal in vh_goal["goal"]:
            if {"id", "class_name", "state"} <= goal.keys():
                nodes.append(NodeGoal(int(goal["id"]), str(goal["class_name"]), str(goal["state"])))
            elif {"from_id", "relation_type", "to_id"} <= goal.keys():
                edges.append(EdgeGoal(int(goal["from_id"]), str(goal["relation_type"]), int(goal["to_id"])))
            else:
                raise DataError(f"{source}: task {task_id}: goal {goal!r} is neither a node nor an edge goal")
        actions = tuple(str(a) for a in vh_goal["actions"])
    except (KeyError, TypeError, ValueError, AttributeError):
        raise DataError(f"{source}: task {task_id}: field 'vh_goal' is not {{goal: [...], actions: [...]}}") from None
    return tuple(dict.fromkeys(nodes)), tuple(dict.fromkeys(edges)), tuple(dict.fromkeys(actions))


def load_tasks(root: Path | None = None, *, scored_only: bool = True) -> list[EaiTask]:
    """EAI's action-sequencing tasks in the released prompt order (the 305 scored ones unless `scored_only=False`).

    Goals are deduplicated as the evaluator does (`remove_duplicate_dicts`, `set` of action goals).
    """
    root = eai_package_root() if root is None else Path(root)
    prompts_path = root / "evaluation" / "action_sequencing" / "prompts" / "helm_prompts.json"
    goals_path = root / "resources" / "virtualhome" / "task_state_LTL_formula_accurate.json"
    names_path = root / "resources" / "virtualhome" / "id2task.json"
    prompts = _read_json(prompts_path)
    goals = _read_json(goals_path)
    names = _read_json(names_path)
    if not isinstance(prompts, list):
        raise DataError(f"{prompts_path}: expected a list of {{identifier, llm_prompt}}")
    if not isinstance(goals, dict) or not isinstance(goals.get(SCENE), dict):
        raise DataError(f"{goals_path}: missing field {SCENE!r}")
    if not isinstance(names, dict):
        raise DataError(f"{names_path}: expected {{identifier: task name}}")
    by_id = {file_id: entry for tasks in goals[SCENE].values() if isinstance(tasks, dict)
             for file_id, entry in tasks.items()}
    current = template(root)
    template_105 = current if _MARKER_105 in current else ""
    graph_dir = root / "dataset" / PROGRAM_SET / Path(*GRAPH_DIR)
    tasks = []
    for k, item in enumerate(prompts):
        if not isinstance(item, dict) or not isinstance(item.get("identifier"), str) \
                or not isinstance(item.get("llm_prompt"), str):
            raise DataError(f"{prompts_path}: item {k} is not {{identifier, llm_prompt}}")
        task_id, text = item["identifier"], item["llm_prompt"]
        source = f"{prompts_path} [{task_id}]"
        if task_id not in by_id:
            raise DataError(f"{goals_path}: no goals for task {task_id}")
        fields = split_fields(text, source)
        node_goals, edge_goals, action_goals = _goals(task_id, by_id[task_id], str(goals_path))
        task = EaiTask(
            task_id=task_id,
            task_name=str(names.get(task_id, "")),
            released_prompt=text,
            fields=tuple(fields.items()),
            objects=parse_objects(fields["object_in_scene"], source),
            node_goals=node_goals,
            edge_goals=edge_goals,
            action_goals=action_goals,
            template_105=template_105,
            graph_path=graph_dir / f"file{task_id}.json",
        )
        if not scored_only or task.scored:
            tasks.append(task)
    return tasks

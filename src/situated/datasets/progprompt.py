"""ProgPrompt's evaluation data: household tasks with grounded VirtualHome scripts and scene graphs.

The released directory (given by the user, never bundled):

    new_env/env{1,2}_annotated.json              tasks of environments 1 and 2 (JSON lines)
    final_states/initial_states_env{1,2}.json    one initial scene graph per task, same order
    final_states/final_states_<split>.json       one ground-truth final graph per task (where released)
    <split>/*.json                               task files of the environment-0 splits (train, ...)
    pythonic_plans/train_complete_plan_set.json  example plans {function_name: program text}

A task line is `{"<task>": {"<k>: <step>": ["<char0> [verb] <obj> (id) ...", ...], ...}}`. Its `steps`
are the step texts in key order, without placeholder keys whose text is only digits (environments 1
and 2 use a single `"0: 000000"`); the dataset's closing "Done" step is kept. Its `script` is every
key's lines, concatenated in order.

Task files of a split are read in natural name order (file2 before file10), lines in file order;
`index` counts tasks in that order. Natural and lexicographic order agree for the only split with
released final states (test_seen: file7, file9), so the counts line up either way; natural order is
the one a reader expects.

Pairing is checked, not trusted: every graph paired with a task must hold the objects its script names
(same id, same class), and the final graph must show the script's net effects (last switchon/off,
open/close, grab, putin/putback). test_seen's released final states fail this (their order does not
follow the task files, and no final graph fits "wash mug"), so loading it with final states raises a
DataError that says so; `load_split(..., final_states=False)` still loads its tasks for replay.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from situated import files
from situated.envs.household.graph import check_node
from situated.errors import DataError
from situated.files import at

SPLITS = ("env1", "env2", "train", "test_seen", "test_unseen", "test_unseen_ambiguous_goals")
_NEW_ENV_SPLITS = ("env1", "env2")

_STEP_KEY = re.compile(r"(\d+):\s?(.*)", re.DOTALL)
_SCRIPT_LINE = re.compile(r"<char\d{1,9}> \[(\w+)\]((?: <[^<>]+> \(\d{1,18}\))*)")  # ids fit in 64 bits
_SCRIPT_OBJECT = re.compile(r"<([^<>]+)> \((\d{1,18})\)")
_DEF_LINE = re.compile(r"def\s+(\w+)\s*\(\s*\)\s*:")
_HOLDS = ("HOLDS_RH", "HOLDS_LH")
_CHARACTER_ID = 1


@dataclass(frozen=True)
class HouseholdTask:
    """One ProgPrompt task: its text, steps, grounded script and (where released) its scene graphs."""

    name: str
    split: str
    index: int
    steps: tuple[str, ...]
    script: tuple[str, ...]
    initial_graph: dict | None = field(default=None, repr=False, compare=False)
    final_graph: dict | None = field(default=None, repr=False, compare=False)
    source: str = ""

    @property
    def task_id(self) -> str:
        """Unique within the split: its index and name (`3:microwave salmon`)."""
        return f"{self.index}:{self.name}"

    @property
    def instruction(self) -> str:
        return self.name


def available_splits(data_dir: Path) -> tuple[str, ...]:
    """The splits of SPLITS whose task files exist under `data_dir`, in SPLITS order."""
    data_dir = Path(data_dir)
    return tuple(s for s in SPLITS if _task_files(data_dir, s))


def load_split(data_dir: Path, split: str, *, initial_graph: Path | None = None,
               final_states: bool = True) -> list[HouseholdTask]:
    """The tasks of `split`, each paired with its initial and final graph where the data has them.

    `initial_graph` (a VirtualHome graph file: JSON, or JSON lines holding one graph) becomes the
    initial graph of every task, replacing any released one; environment-0 splits have none otherwise.
    `final_states=False` skips the final graphs (and their pairing check), e.g. to replay test_seen's
    scripts despite its defective final states.
    """
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise DataError(f"ProgPrompt data directory not found: {data_dir}")
    task_files = _task_files(data_dir, split)
    if not task_files:
        available = ", ".join(available_splits(data_dir)) or "none"
        raise DataError(f"split {split!r} not found in {data_dir}; available splits: {available}")
    raw = [t for f in task_files for t in _read_tasks(f, data_dir)]
    if not raw:
        raise DataError(f"{_show(task_files[0], data_dir)}: split {split!r} has no tasks")

    initials: list[dict | None] = [None] * len(raw)
    if initial_graph is not None:
        initials = [_read_single_graph(Path(initial_graph))] * len(raw)
    elif split in _NEW_ENV_SPLITS:
        path = data_dir / "final_states" / f"initial_states_{split}.json"
        if path.is_file():
            initials = list(_read_graphs(path, data_dir, len(raw), task_files[0]))

    finals: list[dict | None] = [None] * len(raw)
    final_path = data_dir / "final_states" / f"final_states_{split}.json"
    if final_states and final_path.is_file():
        finals = list(_read_graphs(final_path, data_dir, len(raw), task_files[0]))

    tasks = [HouseholdTask(name, split, i, steps, script, init, final, source)
             for i, ((name, steps, script, source), init, final)
             in enumerate(zip(raw, initials, finals, strict=True))]
    _check_initial_graphs(tasks, initial_graph)
    _check_final_graphs(tasks, _show(final_path, data_dir))
    return tasks


def load_example_plans(path: Path) -> dict[str, str]:
    """Example plans {function_name: program text} from a JSON plan set or a directory of `.py` plans."""
    path = Path(path)
    if path.is_dir():
        return _plans_from_directory(path)
    if not path.exists():
        raise DataError(f"example plans not found: {path}")
    plans = files.read_json(path, what="example plans")
    if not isinstance(plans, dict) or not plans:
        raise DataError(f"{path}: expected a non-empty object {{function_name: program text}}")
    for name, text in plans.items():
        if not isinstance(text, str):
            raise DataError(f"{path}: plan {name!r}: expected program text, got {type(text).__name__}")
        _check_def(text, name, f"{path}: plan {name!r}")
    return dict(plans)


# ------------------------------------------------------------------------------------------------ task files

def _task_files(data_dir: Path, split: str) -> list[Path]:
    if split in _NEW_ENV_SPLITS:
        path = data_dir / "new_env" / f"{split}_annotated.json"
        return [path] if path.is_file() else []
    if split not in SPLITS:
        return []
    folder = data_dir / split
    return sorted(folder.glob("*.json"), key=_natural_key) if folder.is_dir() else []


def _natural_key(path: Path) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", path.name))


def _json_lines(path: Path, data_dir: Path | None) -> Iterator[tuple[int, object]]:
    """(line number, value) of each non-blank line of a JSON-lines file (read through `situated.files`)."""
    return files.read_json_lines(path, what="JSON-lines file")


def _read_tasks(path: Path, data_dir: Path) -> Iterator[tuple[str, tuple[str, ...], tuple[str, ...], str]]:
    """(name, steps, script, source) of each task line of one task file."""
    shown = _show(path, data_dir)
    for number, value in _json_lines(path, data_dir):
        where = at(shown, number)
        if not isinstance(value, dict):
            raise DataError(f"{where}: expected one task object, got {_kind(value)}")
        if len(value) != 1:
            raise DataError(f"{where}: expected exactly one task per line, got {len(value)} keys")
        [(name, step_map)] = value.items()
        if not name.strip():
            raise DataError(f"{where}: empty task name")
        if not isinstance(step_map, dict):
            raise DataError(f"{where}: task {name!r}: expected an object of steps, got {_kind(step_map)}")
        steps: list[str] = []
        script: list[str] = []
        for key, lines in step_map.items():
            match = _STEP_KEY.fullmatch(key)
            if not match:
                raise DataError(f"{where}: task {name!r}: step key {key!r} is not '<k>: <step>'")
            if not isinstance(lines, list) or not all(isinstance(s, str) for s in lines):
                raise DataError(f"{where}: step {key!r}: expected a list of script lines, got {_kind(lines)}")
            for line in lines:
                if not _SCRIPT_LINE.fullmatch(line):
                    raise DataError(f"{where}: step {key!r}: script line {line!r} is not "
                                    "'<char0> [verb] <object> (id) ...'")
            text = match.group(2).strip()
            if text and not text.isdigit():
                steps.append(text)
            script.extend(lines)
        yield name, tuple(steps), tuple(script), f"{shown}:{number}"


# ------------------------------------------------------------------------------------------------ graphs

def _read_graphs(path: Path, data_dir: Path, expected: int, task_file: Path) -> Iterator[dict]:
    shown = _show(path, data_dir)
    graphs = [(n, _check_graph(g, at(shown, n))) for n, g in _json_lines(path, data_dir)]
    if len(graphs) != expected:
        raise DataError(f"{_show(path, data_dir)}: {len(graphs)} graphs for {expected} tasks "
                        f"(from {_show(task_file, data_dir)}...); one graph per task is expected")
    return (g for _, g in graphs)


def _read_single_graph(path: Path) -> dict:
    """One graph from a JSON file or a JSON-lines file with a single graph."""
    if not path.exists():
        raise DataError(f"initial graph not found: {path}")
    text = files.read_text(path, what="initial graph")
    try:
        graph = files.parse_json(text, str(path))
    except DataError:
        try:  # JSON lines? Then exactly one graph is wanted.
            lines = [files.parse_json(line, str(path), line=n) for n, line in enumerate(text.split("\n"), 1)
                     if line.strip()]
        except DataError:
            lines = []
        if len(lines) < 2:
            raise  # the error of the whole file says best what is wrong
        raise DataError(f"{path}: expected one graph (JSON, or JSON lines with one line), got {len(lines)} "
                        "lines") from None
    return _check_graph(graph, str(path))


def _check_graph(graph: object, where: str) -> dict:
    """`graph` itself once it has the VirtualHome shape: node ids unique, edges between existing nodes."""
    if not isinstance(graph, dict):
        raise DataError(f"{where}: expected a graph object, got {_kind(graph)}")
    nodes, edges = graph.get("nodes"), graph.get("edges")
    if not isinstance(nodes, list) or not isinstance(edges, list):
        raise DataError(f"{where}: a graph needs lists 'nodes' and 'edges'")
    ids: set[int] = set()
    for i, node in enumerate(nodes):
        check_node(node, i, where)
        if node["id"] in ids:
            raise DataError(f"{at(where, field=f'nodes[{i}].id')}: duplicate id {node['id']}")
        ids.add(node["id"])
    for i, edge in enumerate(edges):
        if not isinstance(edge, dict) or not isinstance(edge.get("relation_type"), str):
            raise DataError(f"{where}: edges[{i}]: needs 'from_id', 'relation_type' and 'to_id'")
        for end in ("from_id", "to_id"):
            value = edge.get(end)
            if type(value) is not int or value not in ids:
                raise DataError(f"{where}: edges[{i}]: {end} {value!r:.40} is not a node id")
    return graph


# ------------------------------------------------------------------------------------------------ pairing

@dataclass(frozen=True)
class _Effects:
    """The net effects of a script that its final graph must show."""

    states: dict[int, tuple[str, ...]]            # id -> states it must have (ON/OFF, OPEN/CLOSED)
    held: dict[int, bool]                         # id -> whether the character must hold it
    placed: dict[int, tuple[str, int]]            # id -> (INSIDE|ON, target id)


def _script_objects(script: tuple[str, ...]) -> dict[int, str]:
    """{id: class name} of every object a script names."""
    return {int(i): cls for line in script for cls, i in _SCRIPT_OBJECT.findall(line)}


def _script_effects(script: tuple[str, ...]) -> _Effects:
    power: dict[int, str] = {}
    door: dict[int, str] = {}
    held: dict[int, bool] = {}
    placed: dict[int, tuple[str, int]] = {}
    for line in script:
        match = _SCRIPT_LINE.fullmatch(line)
        if match is None:
            continue
        verb, args = match.group(1), [int(i) for _, i in _SCRIPT_OBJECT.findall(match.group(2))]
        if not args:
            continue
        obj = args[0]
        if verb in ("switchon", "switchoff"):
            power[obj] = "ON" if verb == "switchon" else "OFF"
        elif verb in ("open", "close"):
            door[obj] = "OPEN" if verb == "open" else "CLOSED"
        elif verb == "grab":
            held[obj] = True
            placed.pop(obj, None)
        elif verb in ("putin", "putback") and len(args) == 2:
            held[obj] = False
            placed[obj] = ("INSIDE" if verb == "putin" else "ON", args[1])
    ids = power.keys() | door.keys()
    states = {i: tuple(s for s in (power.get(i), door.get(i)) if s) for i in ids}
    return _Effects(states, held, placed)


def _misfit(task: HouseholdTask, graph: dict, *, effects: bool) -> str | None:
    """Why `graph` cannot belong to `task` (an object missing, or a script effect not shown), or None."""
    nodes = {n["id"]: n for n in graph["nodes"]}
    names = _script_objects(task.script)
    for i, cls in names.items():
        if i not in nodes:
            return f"it has no node {i} ({cls})"
        if nodes[i]["class_name"] != cls:
            return f"node {i} is a {nodes[i]['class_name']}, not a {cls}"
    if not effects:
        return None
    found = _script_effects(task.script)
    for i, wanted in found.states.items():
        missing = [s for s in wanted if s not in (nodes[i].get("states") or ())]
        if missing:
            return f"{names[i]} ({i}) is not {missing[0]}"
    edges = {(e["from_id"], e["relation_type"], e["to_id"]) for e in graph["edges"]}
    for i, must in found.held.items():
        holds = any((_CHARACTER_ID, h, i) in edges for h in _HOLDS)
        if holds != must:
            return f"the character {'does not hold' if must else 'still holds'} {names[i]} ({i})"
    for i, (relation, target) in found.placed.items():
        if (i, relation, target) not in edges:
            return f"{names[i]} ({i}) is not {relation} {names[target]} ({target})"
    return None


def _check_initial_graphs(tasks: list[HouseholdTask], initial_graph: Path | None) -> None:
    for task in tasks:
        if task.initial_graph is not None:
            why = _misfit(task, task.initial_graph, effects=False)
            if why:
                origin = str(initial_graph) if initial_graph is not None else "its initial graph"
                raise DataError(f"{task.source}: task {task.name!r} does not fit {origin}: {why}")


def _check_final_graphs(tasks: list[HouseholdTask], final_file: str) -> None:
    """DataError when final graphs contradict their tasks (misaligned, or belonging to other tasks)."""
    paired = [t for t in tasks if t.final_graph is not None]
    misfits = [(t, why) for t in paired if (why := _misfit(t, t.final_graph, effects=True))]
    if not misfits:
        return
    finals = [t.final_graph for t in paired]
    orphans = [t for t, _ in misfits if all(_misfit(t, g, effects=True) for g in finals)]
    task, why = misfits[0]
    message = (f"{final_file} does not match the tasks of split {task.split!r}: {len(misfits)} of "
               f"{len(paired)} final graphs contradict their task's script (e.g. entry {task.index + 1}, "
               f"task {task.name!r} from {task.source}: {why})")
    if orphans:
        message += "; no final graph fits " + ", ".join(f"{t.name!r} ({t.source})" for t in orphans)
    message += ("; the final states are in another order or belong to other tasks, so scoring against them "
                "would be meaningless; load with final_states=False to replay the scripts without them")
    raise DataError(message)


# ------------------------------------------------------------------------------------------------ plans

def _plans_from_directory(folder: Path) -> dict[str, str]:
    plans: dict[str, str] = {}
    plan_files = sorted(folder.glob("*.py"), key=_natural_key)
    if not plan_files:
        raise DataError(f"{folder}: no .py plan files")
    for path in plan_files:
        text = files.read_text(path, what="example plan").rstrip()
        name = _check_def(text, None, str(path))
        if name in plans:
            raise DataError(f"{path}: plan {name!r} is defined twice in {folder}")
        plans[name] = text
    return plans


def _check_def(text: str, name: str | None, where: str) -> str:
    """The name in a plan's `def name():` header (its first non-blank line); must equal `name` if given."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    match = _DEF_LINE.match(first)
    if not match:
        raise DataError(f"{where}: line 1: expected a 'def <name>():' header, got {first[:60]!r}")
    if name is not None and match.group(1) != name:
        raise DataError(f"{where}: line 1: header defines {match.group(1)!r}, not {name!r}")
    return match.group(1)


# ------------------------------------------------------------------------------------------------ helpers

def _show(path: Path, data_dir: Path | None) -> str:
    """`path` relative to the data directory when inside it (as error messages name it)."""
    if data_dir is not None:
        try:
            return path.relative_to(data_dir).as_posix()
        except ValueError:
            pass
    return str(path)


def _kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number",
             bool: "a boolean", type(None): "null"}
    return names.get(type(value), type(value).__name__)

"""ProgPrompt data loader (real data in ../shared) and the project's own household scene, tasks and plans."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fakes import EXAMPLES
from situated.actions import PROGPROMPT_SPACE
from situated.datasets.progprompt import (
    SPLITS,
    HouseholdTask,
    available_splits,
    load_example_plans,
    load_split,
)
from situated.errors import DataError

SCENE = EXAMPLES / "scenes" / "apartment.json"
TASKS = EXAMPLES / "tasks" / "apartment_tasks.json"
PLANS = EXAMPLES / "plans"


def _node(graph: dict, node_id: int) -> dict:
    return next(n for n in graph["nodes"] if n["id"] == node_id)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _env1_copy(progprompt_data: Path, root: Path, *, split_dir: str | None = None) -> Path:
    """A private copy of env1's files under `root` (as env1, or as the environment-0 split `split_dir`)."""
    tasks = (progprompt_data / "new_env" / "env1_annotated.json").read_text(encoding="utf-8")
    finals = (progprompt_data / "final_states" / "final_states_env1.json").read_text(encoding="utf-8")
    (root / "final_states").mkdir(parents=True)
    if split_dir is None:
        (root / "new_env").mkdir()
        (root / "new_env" / "env1_annotated.json").write_text(tasks, encoding="utf-8")
        (root / "final_states" / "final_states_env1.json").write_text(finals, encoding="utf-8")
    else:
        (root / split_dir).mkdir()
        (root / split_dir / "file1_annotated.json").write_text(tasks, encoding="utf-8")
        (root / "final_states" / f"final_states_{split_dir}.json").write_text(finals, encoding="utf-8")
    return root


# ------------------------------------------------------------------------------------------ real data

@pytest.mark.parametrize("split", ["env1", "env2"])
def test_new_environments_load_with_paired_graphs(progprompt_data: Path, split: str) -> None:
    tasks = load_split(progprompt_data, split)
    assert len(tasks) == 10
    assert [t.index for t in tasks] == list(range(10))
    for task in tasks:
        assert isinstance(task, HouseholdTask) and task.split == split
        assert task.script and all(line.startswith("<char0> [") for line in task.script)
        assert task.steps == ()  # the only key of every task is the placeholder "0: 000000"
        assert task.initial_graph is not None and task.final_graph is not None
        assert task.initial_graph is not task.final_graph


def test_env1_first_task_is_watch_tv_and_its_graphs_show_the_switch(progprompt_data: Path) -> None:
    task = load_split(progprompt_data, "env1")[0]
    assert task.name == "watch tv"
    assert task.script[0] == "<char0> [find] <tv> (300)"
    assert task.source == "new_env/env1_annotated.json:1"
    # the script switches the tv on, so the tv must be OFF before and ON after
    assert "OFF" in _node(task.initial_graph, 300)["states"]
    assert "ON" in _node(task.final_graph, 300)["states"]


def test_train_reads_task_files_in_natural_order(progprompt_data: Path) -> None:
    tasks = load_split(progprompt_data, "train")
    files = (progprompt_data / "train").glob("*.json")
    expected = sum(len([ln for ln in _lines(f) if ln.strip()]) for f in files)
    assert len(tasks) == expected
    assert tasks[0].source == "train/file2_annotated.json:1"  # file2 before file10
    assert tasks[-1].source.startswith("train/file10_annotated.json:")
    assert all(t.initial_graph is None and t.final_graph is None for t in tasks)
    first = tasks[0]
    assert first.name == "wash clothes"
    assert first.steps[0] == "walk to laundry room" and first.steps[-1] == "Done"
    assert first.script[0] == "<char0> [walk] <bathroom> (11)"


def test_test_seen_final_states_defect_is_reported(progprompt_data: Path) -> None:
    with pytest.raises(DataError) as caught:
        load_split(progprompt_data, "test_seen")
    message = str(caught.value)
    assert "final_states_test_seen.json" in message
    assert "'wash mug'" in message  # no released final graph fits it
    assert "final_states=False" in message


def test_test_seen_scripts_still_load_for_replay(progprompt_data: Path) -> None:
    tasks = load_split(progprompt_data, "test_seen", final_states=False)
    assert len(tasks) == 10
    assert "wash mug" in [t.name for t in tasks]
    assert all(t.final_graph is None and t.script for t in tasks)


def test_available_and_missing_splits(progprompt_data: Path) -> None:
    present = available_splits(progprompt_data)
    assert set(present) == {"env1", "env2", "train", "test_seen"} and set(present) <= set(SPLITS)
    for split in ("test_unseen", "nonsense"):
        with pytest.raises(DataError, match=r"available splits: env1, env2, train, test_seen"):
            load_split(progprompt_data, split)


def test_missing_data_directory(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        load_split(tmp_path / "nowhere", "env1")


# ------------------------------------------------------------------------------------------ pairing checks

def test_misaligned_final_states_are_detected_from_the_data(progprompt_data: Path, tmp_path: Path) -> None:
    root = _env1_copy(progprompt_data, tmp_path)
    finals = root / "final_states" / "final_states_env1.json"
    lines = _lines(finals)
    lines[0], lines[1] = lines[1], lines[0]
    finals.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"2 of 10 final graphs contradict.*'watch tv'"):
        load_split(root, "env1")


def test_a_well_aligned_split_named_test_seen_loads(progprompt_data: Path, tmp_path: Path) -> None:
    # the defect is found in the data, not by the split's name
    root = _env1_copy(progprompt_data, tmp_path, split_dir="test_seen")
    tasks = load_split(root, "test_seen")
    assert len(tasks) == 10 and all(t.final_graph is not None for t in tasks)


def test_final_state_count_must_match(progprompt_data: Path, tmp_path: Path) -> None:
    root = _env1_copy(progprompt_data, tmp_path)
    finals = root / "final_states" / "final_states_env1.json"
    finals.write_text("\n".join(_lines(finals)[:9]) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"final_states_env1.json: 9 graphs for 10 tasks"):
        load_split(root, "env1")


def _env0_graph(progprompt_data: Path) -> dict:
    # every released test_seen final graph is environment 0's scene (with some task's changes)
    return json.loads(_lines(progprompt_data / "final_states" / "final_states_test_seen.json")[0])


def test_initial_graph_is_paired_with_every_task(progprompt_data: Path, tmp_path: Path) -> None:
    graph = _env0_graph(progprompt_data)
    pretty = tmp_path / "env0.json"
    pretty.write_text(json.dumps(graph, indent=1), encoding="utf-8")
    one_line = tmp_path / "env0.jsonl"
    one_line.write_text(json.dumps(graph) + "\n", encoding="utf-8")
    for path in (pretty, one_line):
        tasks = load_split(progprompt_data, "train", initial_graph=path)
        assert all(t.initial_graph == graph for t in tasks)
        assert all(t.final_graph is None for t in tasks)


def test_initial_graph_file_with_two_graphs_is_rejected(progprompt_data: Path, tmp_path: Path) -> None:
    path = tmp_path / "two.jsonl"
    line = json.dumps(_env0_graph(progprompt_data))
    path.write_text(f"{line}\n{line}\n", encoding="utf-8")
    with pytest.raises(DataError, match="expected one graph"):
        load_split(progprompt_data, "train", initial_graph=path)


def test_initial_graph_lacking_the_scripts_objects_is_rejected(progprompt_data: Path, tmp_path: Path) -> None:
    env1_graph = tmp_path / "env1.json"
    first = _lines(progprompt_data / "final_states" / "initial_states_env1.json")[0]
    env1_graph.write_text(first, encoding="utf-8")
    with pytest.raises(DataError, match=r"train/file2_annotated.json:1: task 'wash clothes' does not fit"):
        load_split(progprompt_data, "train", initial_graph=env1_graph)


# ------------------------------------------------------------------------------------------ malformed input

@pytest.mark.parametrize(("line", "expected"), [
    ('["watch tv"]', "line 3: expected one task object, got a list"),
    ('{"watch tv": {"0: find tv": []}', "line 3, column 32: invalid JSON"),
    ('{"a": {}, "b": {}}', "line 3: expected exactly one task per line, got 2 keys"),
    ('{"watch tv": {"find tv": []}}', "line 3: task 'watch tv': step key 'find tv' is not '<k>: <step>'"),
    ('{"watch tv": {"0: find tv": "<char0> [find] <tv> (1)"}}', "line 3: step '0: find tv': expected a list"),
    ('{"watch tv": {"0: find tv": ["find the tv"]}}', "line 3: step '0: find tv': script line 'find the tv'"),
])
def test_malformed_task_line_names_file_line_and_field(tmp_path: Path, line: str, expected: str) -> None:
    good = '{"open window": {"0: find window": ["<char0> [find] <window> (5)"]}}'
    (tmp_path / "new_env").mkdir()
    (tmp_path / "new_env" / "env1_annotated.json").write_text(f"{good}\n{good}\n{line}\n", encoding="utf-8")
    with pytest.raises(DataError, match=re.escape(f"new_env/env1_annotated.json: {expected}")):
        load_split(tmp_path, "env1")


def test_malformed_graph_names_file_line_and_field(progprompt_data: Path, tmp_path: Path) -> None:
    root = _env1_copy(progprompt_data, tmp_path)
    finals = root / "final_states" / "final_states_env1.json"
    lines = _lines(finals)
    graph = json.loads(lines[2])
    graph["edges"].append({"from_id": 1, "relation_type": "CLOSE", "to_id": 999999})
    lines[2] = json.dumps(graph)
    finals.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = r"final_states_env1.json: line 3: edges\[\d+\]: to_id 999999 is not a node"
    with pytest.raises(DataError, match=expected):
        load_split(root, "env1")


# ------------------------------------------------------------------------------------------ example plans

def test_released_example_plans(progprompt_data: Path) -> None:
    plans = load_example_plans(progprompt_data / "pythonic_plans" / "train_complete_plan_set.json")
    assert len(plans) == 34
    for name in ("throw_away_the_lime", "put_the_wine_glass_in_the_kitchen_cabinet", "wash_mug"):
        assert plans[name].startswith(f"def {name}():")
    assert "putin('lime', 'garbagecan')" in plans["throw_away_the_lime"]


def test_example_plans_from_a_directory() -> None:
    plans = load_example_plans(PLANS)
    assert set(plans) == {p.stem for p in PLANS.glob("*.py")}
    assert plans["microwave_salmon"].startswith("def microwave_salmon():")


@pytest.mark.parametrize(("content", "expected"), [
    ("[1, 2]", "expected a non-empty object"),
    ('{"wash_mug": 3}', "plan 'wash_mug': expected program text, got int"),
    ('{"wash_mug": "def other():\\n\\tfind(\'mug\')"}', "header defines 'other', not 'wash_mug'"),
    ("{not json", "invalid JSON"),
])
def test_malformed_plan_set(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "plans.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=re.escape(expected)):
        load_example_plans(path)


def test_plan_directory_without_def_header(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("find('tv')\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"a.py: line 1: expected a 'def <name>\(\):' header"):
        load_example_plans(tmp_path)


# ------------------------------------------------------------------------------------------ our own scene

@pytest.fixture(scope="module")
def scene() -> dict:
    return json.loads(SCENE.read_text(encoding="utf-8"))


ROOMS = {"kitchen", "livingroom", "bedroom", "bathroom"}
RELATIONS = {"INSIDE", "ON", "FACING", "CLOSE", "BETWEEN", "HOLDS_RH", "HOLDS_LH"}
STATE_PAIRS = [("OPEN", "CLOSED"), ("ON", "OFF"), ("CLEAN", "DIRTY"), ("PLUGGED_IN", "PLUGGED_OUT")]


def _objects(scene: dict) -> list[dict]:
    return [n for n in scene["nodes"] if n["category"] not in ("Rooms", "Characters")]


def test_scene_graph_is_consistent(scene: dict) -> None:
    ids = [n["id"] for n in scene["nodes"]]
    assert len(ids) == len(set(ids))
    for edge in scene["edges"]:
        assert edge["from_id"] in ids and edge["to_id"] in ids, edge
        assert edge["relation_type"] in RELATIONS, edge
    character = _node(scene, 1)
    assert character["class_name"] == "character"
    rooms = {n["class_name"]: n["id"] for n in scene["nodes"] if n["category"] == "Rooms"}
    assert set(rooms) == ROOMS
    assert sum(1 for e in scene["edges"] if e["from_id"] == 1 and e["relation_type"] == "INSIDE"
               and e["to_id"] in rooms.values()) == 1
    assert len(_objects(scene)) >= 60


def test_every_object_is_inside_exactly_one_room(scene: dict) -> None:
    room_ids = {n["id"] for n in scene["nodes"] if n["category"] == "Rooms"}
    for obj in _objects(scene):
        rooms = [e["to_id"] for e in scene["edges"]
                 if e["from_id"] == obj["id"] and e["relation_type"] == "INSIDE" and e["to_id"] in room_ids]
        assert len(rooms) == 1, obj


def test_scene_states_match_properties(scene: dict) -> None:
    nodes = {n["id"]: n for n in scene["nodes"]}
    for obj in _objects(scene):
        states, props = set(obj["states"]), set(obj["properties"])
        for a, b in STATE_PAIRS:
            assert not {a, b} <= states, obj
        if "CAN_OPEN" in props:
            assert states & {"OPEN", "CLOSED"}, obj
        if states & {"ON", "OFF"}:
            assert "HAS_SWITCH" in props, obj
        if states & {"PLUGGED_IN", "PLUGGED_OUT"}:
            assert "HAS_PLUG" in props, obj
    for edge in scene["edges"]:
        target = nodes[edge["to_id"]]
        if edge["relation_type"] == "ON":
            assert "SURFACES" in target["properties"], edge
        if edge["relation_type"] == "INSIDE" and target["category"] != "Rooms":
            assert "CONTAINERS" in target["properties"], edge


def _plan_names() -> set[str]:
    """Every quoted object name in the example plans (action arguments, conditions, loop items)."""
    names: set[str] = set()
    for path in PLANS.glob("*.py"):
        names |= set(re.findall(r"'(\w+)'", path.read_text(encoding="utf-8")))
    return names - {"close", "hands", "closed", "opened", "switchon", "switchoff"}


def test_plans_and_tasks_name_only_objects_of_the_scene(scene: dict) -> None:
    classes = {n["class_name"] for n in scene["nodes"]}
    assert _plan_names() <= classes, _plan_names() - classes
    goal = re.compile(r"([a-z_]+) ([A-Z_]+)(?: ([a-z_]+))?")
    for task in json.loads(TASKS.read_text(encoding="utf-8")):
        assert task["task"] and task["goal"]
        for condition in task["goal"]:
            match = goal.fullmatch(condition)
            assert match, condition
            assert {match.group(1), match.group(3) or match.group(1)} <= classes, condition


def test_tasks_cover_the_progprompt_test_tasks() -> None:
    names = {t["task"] for t in json.loads(TASKS.read_text(encoding="utf-8"))}
    assert {"watch tv", "turn off light", "brush teeth", "throw away apple", "make toast",
            "eat chips on the sofa", "put salmon in the fridge", "wash the plate",
            "bring coffeepot and cupcake to the coffee table", "microwave salmon"} <= names


def test_example_plans_use_progprompt_actions_and_numbered_subgoals() -> None:
    files = sorted(PLANS.glob("*.py"))
    assert len(files) >= 6
    texts = {p.stem: p.read_text(encoding="utf-8") for p in files}
    for stem, text in texts.items():
        assert text.startswith(f"def {stem}():\n")
        numbers = [int(n) for n in re.findall(r"^\t# (\d+): ", text, re.MULTILINE)]
        assert numbers == list(range(len(numbers))) and numbers, stem
        for action in re.findall(r"^\t+(?:else: )?(\w+)\(", text, re.MULTILINE):
            assert action == "assert" or action in PROGPROMPT_SPACE, (stem, action)
    assert any("for item in ['apple', 'chips']:" in t for t in texts.values())
    assert any("if 'fridge' is 'closed':" in t for t in texts.values())

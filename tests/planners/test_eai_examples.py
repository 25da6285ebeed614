"""The project's worked EAI examples (`--shots`): each answer runs and meets its own goals in the VirtualHome
simulator, and the examples reach the model as earlier turns of its own chat template, before EAI's prompt."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from fakes import ScriptedLLM
from situated.datasets.eai_actions import EaiTask, EdgeGoal, NodeGoal, load_tasks, parse_objects, split_fields
from situated.eval.systems.eai_check import check_plan
from situated.llm.chat_template import QWEN_CHATML, RAW, ChatTemplate
from situated.planners.eai import (
    Check,
    Step,
    answer_grammar,
    example_answer,
    example_prompt,
    model_prompt,
    parse_answer,
    plan_grounded,
    plan_task,
)
from situated.planners.eai_examples import EXAMPLES, EaiExample

pytest.importorskip("virtualhome_eval")

ROOMS = {"kitchen", "bathroom", "bedroom", "living_room", "dining_room", "home_office"}
_NODE = re.compile(r"^(?P<name>\w+), states: (?P<states>\[.*\]), properties:")
_EDGE = re.compile(r"^<\w+> \((?P<a>\d+)\) is (?P<rel>\w+) to <\w+> \((?P<b>\d+)\)$")
_NODE_GOAL = re.compile(r"^(?P<name>\w+) is (?P<state>\w+)$")
_EDGE_GOAL = re.compile(r"^(?P<a>\w+) is (?P<rel>\w+) to (?P<b>\w+)$")


@pytest.fixture(scope="module")
def tasks():
    return {t.task_id: t for t in load_tasks()}


def _as_task(example: EaiExample) -> tuple[EaiTask, dict]:
    """The example as an EAI task (goals read from its goal text) and a scene graph made from its state."""
    fields = example.field_map()
    objects = parse_objects(fields["object_in_scene"])
    ids = {o.name: o.id for o in objects}
    states: dict[str, list[str]] = {}
    edges = []
    for line in fields["cur_change"].splitlines():
        if m := _NODE.match(line):
            states[m["name"]] = ast.literal_eval(m["states"])
        elif m := _EDGE.match(line):
            edges.append({"from_id": int(m["a"]), "relation_type": m["rel"], "to_id": int(m["b"])})
    nodes = [{"id": o.id, "class_name": o.name, "category": "Rooms" if o.name in ROOMS else "Props",
              "properties": list(o.properties), "states": states.get(o.name, [])} for o in objects]
    node_goals = tuple(NodeGoal(ids[m["name"]], m["name"], m["state"])
                       for line in fields["node_goals"].splitlines() if (m := _NODE_GOAL.match(line)))
    edge_goals = tuple(EdgeGoal(ids[m["a"]], m["rel"], ids[m["b"]])
                       for line in fields["edge_goals"].splitlines() if (m := _EDGE_GOAL.match(line)))
    action_lines = fields["action_goals"].splitlines()[1:-1] if "included" in fields["action_goals"] else []
    action_goals = tuple(line.replace(" or ", "|") for line in action_lines)
    task = EaiTask("example", example.name, "", tuple(fields.items()), objects, node_goals, edge_goals,
                   action_goals)
    return task, {"nodes": nodes, "edges": edges}


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_each_example_answer_runs_and_meets_its_goals_exactly_at_its_end(example: EaiExample) -> None:
    task, graph = _as_task(example)
    assert task.node_goals or task.edge_goals, "an example without goals teaches nothing"
    steps = parse_answer(example_answer(example, "1.0.5"), task, "1.0.5")
    assert [s.action for s in steps] == [a for a, _ in example.answer]
    check = check_plan(task, steps, graph)
    assert check.ok and check.done_at == len(steps), check     # no step fails, none is left over
    assert not check_plan(task, steps[:-1], graph).ok           # and the last step is needed
    assert parse_answer(example_answer(example, "1.0.4"), task, "1.0.4") == steps


def test_shots_are_earlier_turns_sharing_one_prefix_in_both_protocols(tasks) -> None:
    lamp, other = tasks["11_1"], tasks["837_2"]
    llm = ScriptedLLM(['{\n  "WALK": ["floor_lamp", "1000"]\n}'], uri="llamacpp:qwen2.5-coder-1.5b")
    for protocol, answer in (("1.0.5", '"PUTIN": ["towel", "2011", "washing_machine", "2012"]'),
                             ("1.0.4", '"PUTIN": ["towel", "washing_machine"]')):
        prompt = model_prompt(llm, lamp, protocol, shots=2)
        assert prompt.endswith("<|im_start|>user\n" + lamp.prompt(protocol) + "<|im_end|>\n<|im_start|>assistant\n")
        first, second = (prompt.index(e.field_map()["object_in_scene"]) for e in EXAMPLES)
        assert first < prompt.index(answer) < second < prompt.rindex(lamp.field_text("object_in_scene"))
        assert prompt.count("<|im_start|>user\n") == 3 and prompt.count("<|im_start|>assistant\n") == 3
        # every example prompt is EAI's own text for this protocol, with the example's fields
        example_turn = prompt.split("<|im_start|>user\n")[1].split("<|im_end|>")[0]
        assert split_fields(example_turn) == EXAMPLES[0].field_map()
        assert example_turn.startswith(lamp.prompt(protocol).partition("Input:")[0] + "Input:")
        # the examples are a prefix common to every task (cached once by the model)
        shared = model_prompt(llm, other, protocol, shots=2)
        head = prompt[: prompt.rindex(lamp.prompt(protocol))]
        assert shared.startswith(head) and len(head) > 2 * len(EXAMPLES[0].field_map()["object_in_scene"])
    assert model_prompt(llm, lamp, "1.0.5", RAW, shots=1).startswith(lamp.prompt("1.0.5").split("Input:")[0])
    assert model_prompt(llm, lamp, "1.0.5", shots=0) == QWEN_CHATML.wrap(lamp.prompt("1.0.5"))


def test_shots_reach_planning_and_the_grammar_stays_the_task_s(tasks) -> None:
    lamp = tasks["11_1"]
    llm = ScriptedLLM(['{\n  "WALK": ["floor_lamp", "1000"],\n  "SWITCHON": ["floor_lamp", "1000"]\n}'])
    plan_task(llm, lamp, "1.0.5", shots=1)
    assert llm.calls[0]["prompt"] == model_prompt(llm, lamp, "1.0.5", shots=1) != lamp.prompt("1.0.5")
    assert llm.calls[0]["grammar"] == answer_grammar(lamp, "1.0.5")   # no example object can be written
    assert "towel" not in llm.calls[0]["grammar"]
    done = Step("WALK", ("floor_lamp",), (1000,))
    grounded = ScriptedLLM(['{\n  "WALK": ["floor_lamp", "1000"]\n}'])
    plan = plan_grounded(grounded, lamp, "1.0.5", repairs=1, shots=2,
                         check=lambda steps: Check(done_at=1) if steps[:1] == (done,) else Check(unmet=("x",)))
    assert grounded.calls[0]["prompt"] == model_prompt(grounded, lamp, "1.0.5", shots=2)
    assert plan.checked_ok and plan.steps == (done,)


def test_shots_out_of_range_or_with_an_unknown_template_are_refused(tasks) -> None:
    llm = ScriptedLLM([])
    with pytest.raises(ValueError, match="shots"):
        model_prompt(llm, tasks["11_1"], "1.0.5", shots=len(EXAMPLES) + 1)
    with pytest.raises(ValueError, match="template"):
        model_prompt(llm, tasks["11_1"], "1.0.5", ChatTemplate("<s>{prompt}</s>"), shots=1)


def test_chat_template_of_the_embedded_model_renders_the_shots_the_same_way(tasks) -> None:
    pytest.importorskip("llama_cpp")
    from situated.llm import load

    if not _model_file().is_file():
        pytest.skip("the 0.5B model is not assembled")
    llm = load("llamacpp:qwen2.5-coder-0.5b", n_threads=1)
    lamp = tasks["11_1"]
    messages = []
    for example in EXAMPLES:
        messages += [{"role": "user", "content": example_prompt(example, lamp.prompt("1.0.5"))},
                     {"role": "assistant", "content": example_answer(example, "1.0.5")}]
    messages.append({"role": "user", "content": lamp.prompt("1.0.5")})
    assert llm.chat_prompt(messages) == model_prompt(llm, lamp, "1.0.5", shots=len(EXAMPLES))


def _model_file() -> Path:
    from situated.llm.models import model_path

    return model_path("qwen2.5-coder-0.5b")

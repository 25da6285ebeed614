"""LangPrompt baseline: natural-language prompt, step parsing and the mapping of steps onto actions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes import ScriptedLLM
from situated.actions import PROGPROMPT_SPACE
from situated.planners.langprompt import LangPromptPlanner, map_step, match_object, parse_steps
from situated.program import Call

OBJECTS = ["bananas", "garbagecan", "kitchen", "kitchencabinet", "cabinet", "microwave", "salmon", "sofa", "tv",
           "wineglass"]


@pytest.mark.parametrize(("step", "expected"), [
    ("Walk to the kitchen.", Call("walk", ("kitchen",))),
    ("Go to kitchen", Call("walk", ("kitchen",))),
    ("Pick up the salmon", Call("grab", ("salmon",))),
    ("Open the microwave", Call("open", ("microwave",))),
    ("Put the salmon in the microwave.", Call("putin", ("salmon", "microwave"))),
    ("place salmon on the kitchen cabinet", Call("putback", ("salmon", "kitchencabinet"))),
    ("Throw the banana into the garbage can", Call("putin", ("bananas", "garbagecan"))),
    ("Turn on the TV", Call("switchon", ("tv",))),
    ("switch off tv", Call("switchoff", ("tv",))),
    ("Grab the wine glass", Call("grab", ("wineglass",))),
    ("Sit on the sofa", Call("sit", ("sofa",))),
    ("Stand up", Call("standup", ())),
])
def test_steps_map_onto_actions(step: str, expected: Call) -> None:
    assert map_step(step, PROGPROMPT_SPACE, OBJECTS) == expected


@pytest.mark.parametrize("step", ["Heat the salmon", "Find the fish", "Put the salmon", "Enjoy your meal"])
def test_unmappable_steps_say_why(step: str) -> None:
    assert isinstance(map_step(step, PROGPROMPT_SPACE, OBJECTS), str)


def test_longest_object_wins() -> None:
    assert match_object("the kitchen cabinet", OBJECTS) == "kitchencabinet"
    assert match_object("cabinet", OBJECTS) == "cabinet"
    assert match_object("a fish", OBJECTS) is None


def test_parse_steps() -> None:
    assert parse_steps("1. walk to kitchen\n2) grab salmon\nStep 3: open fridge\nthanks") == [
        "walk to kitchen", "grab salmon", "open fridge"]


@pytest.fixture(scope="module")
def examples(progprompt_data: Path) -> dict[str, str]:
    return json.loads((progprompt_data / "pythonic_plans" / "train_complete_plan_set.json").read_text())


def test_prompt_is_natural_language(examples: dict[str, str]) -> None:
    llm = ScriptedLLM(default=" Walk to the kitchen.\n2. Find the salmon.\n3. Heat the salmon.\n4. Grab the salmon.")
    result = LangPromptPlanner(llm, PROGPROMPT_SPACE, examples).plan("microwave salmon", OBJECTS)
    prompt = llm.prompts[0]
    assert "def " not in prompt and "assert" not in prompt and "objects = [" not in prompt
    assert "Task: throw away the lime\n1. walk to kitchen\n" in prompt
    assert "put lime in garbagecan" in prompt
    assert prompt.endswith("Task: microwave salmon\n1.")
    assert [(c.action, c.args) for c in result.program.body] == [
        ("walk", ("kitchen",)), ("find", ("salmon",)), ("grab", ("salmon",))]
    assert [c.line for c in result.program.body] == [1, 2, 4]
    assert result.dropped == 1 and "step 3" in result.problems[0]

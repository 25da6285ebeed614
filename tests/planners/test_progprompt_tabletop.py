"""ProgPrompt's tabletop variant: the prompt a model sees (one primitive, objects as a local variable of each
plan, no assertions), the grammar its answer is held to (only the scene's items first, its containers second),
and how its answer becomes a program."""

from __future__ import annotations

import re

import pytest

from fakes import ScriptedLLM, accepts
from situated.actions import TABLETOP_SPACE
from situated.envs.tabletop.catalogue import CATALOGUE
from situated.errors import DataError
from situated.planners.progprompt_tabletop import (
    TABLETOP_EXAMPLES,
    TabletopPlanner,
    TabletopPrompt,
    read_example,
    strip_objects_line,
)
from situated.program import Call, Comment, parse

SCENE = ["apple", "banana", "bowl", "box", "mug"]
AFFORDANCES = {name: frozenset({"CONTAINER"} if CATALOGUE[name].is_container else {"GRABBABLE"}) for name in SCENE}


def test_prompt_has_one_primitive_local_object_lists_and_no_assertions() -> None:
    prompt = TabletopPrompt().prompt("sort the fruits", SCENE)
    lines = prompt.split("\n")
    assert lines[0] == "from actions import grab_and_putin <obj> <obj>"
    assert sum(line.startswith("from actions import") for line in lines) == 1
    assert "assert" not in prompt and "else:" not in prompt
    # no global object list: every `objects = [...]` is the first line of a function body
    object_lines = [i for i, line in enumerate(lines) if "objects = [" in line]
    assert object_lines and all(lines[i].startswith("\tobjects = [") and lines[i - 1].startswith("def ")
                                for i in object_lines)
    assert len(object_lines) == prompt.count("\ndef ")
    # the task's header ends after its own object list, ready for the first statement
    assert prompt.endswith("\n\ndef sort_the_fruits():\n\tobjects = ['apple', 'banana', 'bowl', 'box', 'mug']\n\t")
    called = set(re.findall(r"(\w+)\(", prompt.split("\n", 1)[1])) - {"def"} - {
        m.group(1) for m in re.finditer(r"def (\w+)\(", prompt)}
    assert called == {"grab_and_putin"}


def test_examples_are_shown_as_written_and_never_the_task_itself() -> None:
    prompt = TabletopPrompt(n_examples=3)
    text = prompt.prompt("put the toys in the tray", SCENE)
    assert "def put_the_toys_in_the_tray():\n\tobjects" in text and text.count("def put_the_toys_in_the_tray") == 1
    shown = TabletopPrompt(n_examples=2).prompt("stack things", SCENE)
    for name in TabletopPrompt(n_examples=2).examples_for("stack things"):
        assert TABLETOP_EXAMPLES[name] in shown


def test_no_comments_ablation_drops_comment_lines() -> None:
    text = TabletopPrompt(comments=False).prompt("sort the fruits", SCENE)
    assert "#" not in text and "grab_and_putin('duck', 'tray')" in text


def test_every_example_parses_once_its_object_line_is_set_aside() -> None:
    for name, text in TABLETOP_EXAMPLES.items():
        example = read_example(text, name)
        objects, body = strip_objects_line(text)
        program = parse(body)
        assert example.name == name == program.name and objects == example.objects
        calls = [s for s in program.body if isinstance(s, Call)]
        assert calls and all(isinstance(s, Call | Comment) for s in program.body)
        for call in calls:
            item, container = call.args
            assert call.action == "grab_and_putin" and item in objects and container in objects
            assert not CATALOGUE[str(item)].is_container and CATALOGUE[str(container)].is_container
        # each example leaves something in its object list alone, as a scene with distractors needs
        assert set(objects) - {str(a) for c in calls for a in c.args}


@pytest.mark.parametrize(("text", "message"), [
    ("def f():\n\tgrab_and_putin('apple', 'bowl')", "line 2: expected the plan's object list"),
    ("def f():\n\tobjects = ['apple', 'bowl']\n\tgrab_and_putin('pear', 'bowl')", "'pear' is not in the plan"),
    ("def f():\n\tobjects = ['apple', 'bowl']\n\tassert('apple' in 'bowl')", "only comments and action calls"),
    ("def f():\n\tobjects = ['apple', 'bowl']\n\tgrab_and_putin('apple',", "example f"),
])
def test_bad_examples_are_refused_with_the_line(text: str, message: str) -> None:
    with pytest.raises(DataError, match=re.escape(message)):
        read_example(text, "example f")


def test_object_line_is_read_by_pattern_never_evaluated() -> None:
    for hostile in ("def f():\n\tobjects = [__import__('os').system('x')]\n\tgrab_and_putin('a', 'b')",
                    "def f():\n\tobjects = ['a'] + ['b']\n", "def f():\n\tobjects = ['a', 'b'] # c\n"):
        assert strip_objects_line(hostile) == (None, hostile)
    objects, text = strip_objects_line("def f():\n\tobjects = ['a', 'b_2']\n\tgrab_and_putin('a', 'b_2')")
    assert objects == ("a", "b_2") and text.split("\n")[1] == ""


def test_grammar_admits_only_scene_items_into_scene_containers() -> None:
    grammar = TabletopPlanner(ScriptedLLM()).grammar(SCENE, AFFORDANCES)
    assert grammar is not None
    assert accepts(grammar, "grab_and_putin('apple', 'bowl')\n")
    assert accepts(grammar, "# 0: fruit first\n\tgrab_and_putin('banana', 'box')\n\tgrab_and_putin('mug', 'bowl')\n")
    for wrong in ("grab_and_putin('bowl', 'apple')\n",      # a container cannot be picked up
                  "grab_and_putin('apple', 'mug')\n",       # a mug is not a container
                  "grab_and_putin('pear', 'bowl')\n",       # no pear in this scene
                  "grab_and_putin('apple', 'plate')\n",     # nor a plate
                  "pickup('apple')\n",                      # the one primitive only
                  "assert('apple' in 'bowl')\n\t\telse: grab_and_putin('apple', 'bowl')\n"):
        assert not accepts(grammar, wrong), wrong


def test_plan_continues_after_the_object_line_and_reads_the_answer() -> None:
    llm = ScriptedLLM(["# 0: fruit in the bowl\n\tgrab_and_putin('apple', 'bowl')\n"
                       "\tgrab_and_putin('banana', 'bowl')\n"])
    result = TabletopPlanner(llm).plan("put the fruit in the bowl", SCENE, affordances=AFFORDANCES)
    call = llm.calls[0]
    assert call["prompt"].endswith("():\n\tobjects = ['apple', 'banana', 'bowl', 'box', 'mug']\n\t")
    assert call["grammar"] == TabletopPlanner(ScriptedLLM()).grammar(SCENE, AFFORDANCES)
    assert call["temperature"] == 0.0 and "\ndef " in call["stop"]
    assert result.text.startswith("def put_the_fruit_in_the_bowl():\n\tobjects = [")
    assert [(s.action, s.args, s.line) for s in result.program.body if isinstance(s, Call)] == [
        ("grab_and_putin", ("apple", "bowl"), 4), ("grab_and_putin", ("banana", "bowl"), 5)]
    assert result.problems == () and result.dropped == 0


def test_unconstrained_answers_lose_lines_that_name_what_the_scene_lacks() -> None:
    llm = ScriptedLLM(["grab_and_putin('pear', 'bowl')\n\tgrab_and_putin('apple', 'bowl')\n"])
    result = TabletopPlanner(llm, constrained=False).plan("fruit", SCENE)
    assert llm.calls[0]["grammar"] is None
    assert [s.args for s in result.program.body] == [("apple", "bowl")]
    assert result.dropped == 1 and "unknown object 'pear'" in result.problems[0]


def test_replan_starts_again_after_the_failed_line() -> None:
    llm = ScriptedLLM(["grab_and_putin('apple', 'box')\n"])
    planner = TabletopPlanner(llm)
    done = "def fruit():\n\tobjects = ['apple', 'banana', 'bowl', 'box', 'mug']\n\tgrab_and_putin('apple', 'bowl')"
    result = planner.replan("fruit", SCENE, done, "grab_and_putin('apple', 'bowl') failed: it slipped",
                            affordances=AFFORDANCES)
    assert llm.prompts[0].endswith(done + "\n\t# grab_and_putin('apple', 'bowl') failed: it slipped\n\t")
    assert llm.prompts[0].count("def fruit():") == 1
    assert [s.line for s in result.program.body if isinstance(s, Call)] == [3, 5]


def test_the_space_is_the_papers_single_primitive() -> None:
    assert TabletopPlanner(ScriptedLLM()).space is TABLETOP_SPACE
    assert TABLETOP_SPACE.names == ("grab_and_putin",)

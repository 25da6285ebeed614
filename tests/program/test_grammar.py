"""The plan grammar: it compiles in llama.cpp, accepts real ProgPrompt plans, and rejects what must not be
written.

llama.cpp has no "does this grammar accept this string" API, so the test kit has a tiny recursive matcher for
the GBNF subset the project generates (`fakes.accepts`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes import APARTMENT, EXAMPLES, accepts
from situated.actions import PROGPROMPT_SPACE
from situated.planners.assertion_check import BOOL_GRAMMAR
from situated.program import Assert, Call, parse, validate
from situated.program.grammar import plan_grammar

# --- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example_plans(progprompt_data: Path) -> dict[str, str]:
    return json.loads((progprompt_data / "pythonic_plans" / "train_complete_plan_set.json").read_text())


def body_of(plan: str) -> str:
    """The text after the open header `def name():\\n\\t` that a model would generate."""
    header, _, body = plan.partition("\n\t")
    assert header.startswith("def ")
    return body if body.endswith("\n") else body + "\n"


def objects_of(plan: str) -> list[str]:
    program = parse(plan)
    names: set[str] = set()
    for stmt in program.body:
        calls = [stmt] if isinstance(stmt, Call) else list(stmt.recovery) if isinstance(stmt, Assert) else []
        for call in calls:
            names.update(a for a in call.args if isinstance(a, str))
        if isinstance(stmt, Assert):
            args = stmt.condition.args[:1] if stmt.condition.kind == "state" else stmt.condition.args
            names.update(a for a in args if isinstance(a, str) and a != "hands")
    return sorted(names)


# --- tests ----------------------------------------------------------------------------------------


SCENE = ["kitchen", "kitchencabinet", "cabinet", "wineglass", "garbagecan", "lime", "sink", "faucet", "mug",
         "dishwashingliquid", "washingsponge", "salmon", "microwave"]


def test_default_examples_are_accepted_raw(example_plans: dict[str, str]) -> None:
    # Raw text from the shared data, trailing spaces and all.
    grammar = plan_grammar(PROGPROMPT_SPACE, SCENE)
    for name in ("put_the_wine_glass_in_the_kitchen_cabinet", "throw_away_the_lime", "wash_mug"):
        assert accepts(grammar, body_of(example_plans[name])), name


def test_every_example_plan_is_accepted_over_its_own_objects(example_plans: dict[str, str]) -> None:
    accepted = 0
    for name, plan in example_plans.items():
        program = parse(plan)
        if validate(program, PROGPROMPT_SPACE):  # a few examples use actions outside the 21 primitives
            continue
        grammar = plan_grammar(PROGPROMPT_SPACE, objects_of(plan))
        assert accepts(grammar, body_of(plan)), name
        accepted += 1
    assert accepted >= 20


def test_blank_line_ends_the_function() -> None:
    grammar = plan_grammar(PROGPROMPT_SPACE, SCENE)
    assert accepts(grammar, "find('salmon')\n\tgrab('salmon')\n\n")
    assert not accepts(grammar, "find('salmon')\n\n\tgrab('salmon')\n")
    assert not accepts(grammar, "find('salmon')\n\ndef wash_mug():\n")


@pytest.mark.parametrize("line", [
    "grab('fish')\n",                        # unknown object
    "take_out('salmon')\n",                  # unknown action
    "putin('salmon')\n",                     # wrong arity
    "grab(salmon)\n",                        # unquoted
    "grab('salmon')",                        # no newline
    "assert('close' to 'salmon')\n",         # assertion without recovery
    "assert('salmon' is 'hot')\n\t\telse: find('salmon')\n",  # unknown state
    "import os\n",
])
def test_invalid_lines_are_rejected(line: str) -> None:
    assert not accepts(plan_grammar(PROGPROMPT_SPACE, SCENE), line)


def test_every_assertion_form_is_accepted() -> None:
    grammar = plan_grammar(PROGPROMPT_SPACE, SCENE)
    for cond in ("'close' to 'salmon' ", "'microwave' is 'opened'", "'salmon' in 'hands' ",
                 "'salmon' in 'microwave'", "'salmon' on 'kitchencabinet'"):
        assert accepts(grammar, f"assert({cond})\n\t\telse: find('salmon')\n\t\telse: grab('salmon')\n"), cond


def test_object_alternatives_longest_first() -> None:
    grammar = plan_grammar(PROGPROMPT_SPACE, ["cabinet", "kitchencabinet", "kitchen"])
    obj_rule = next(line for line in grammar.splitlines() if line.startswith("obj ::="))
    # "kitchen" is a prefix of "kitchencabinet": the longer one must be tried first.
    assert obj_rule.index('"kitchencabinet"') < min(obj_rule.index('"kitchen"'), obj_rule.index('"cabinet"'))


def test_ablation_grammars_leave_out_comments_and_asserts() -> None:
    no_comments = plan_grammar(PROGPROMPT_SPACE, SCENE, comments=False)
    no_asserts = plan_grammar(PROGPROMPT_SPACE, SCENE, asserts=False)
    assert not accepts(no_comments, "# 1: find salmon\n")
    assert accepts(no_comments, "assert('close' to 'salmon')\n\t\telse: find('salmon')\n")
    assert not accepts(no_asserts, "assert('close' to 'salmon')\n\t\telse: find('salmon')\n")
    assert accepts(no_asserts, "# 1: find salmon\n\tfind('salmon')\n")


def test_grammars_compile_in_llama_cpp(example_plans: dict[str, str]) -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    bare = plan_grammar(PROGPROMPT_SPACE, SCENE, comments=False, asserts=False)
    for grammar in (plan_grammar(PROGPROMPT_SPACE, SCENE), bare, BOOL_GRAMMAR):
        assert llama_cpp.LlamaGrammar.from_string(grammar, verbose=False) is not None


def test_affordances_keep_impossible_actions_out_of_the_plan() -> None:
    from situated.envs.household import HouseholdEnv

    env = HouseholdEnv.from_file(APARTMENT)
    objects, affordances = env.object_names(), env.object_properties()
    typed = plan_grammar(PROGPROMPT_SPACE, objects, affordances=affordances)
    untyped = plan_grammar(PROGPROMPT_SPACE, objects)
    # the mistakes a small model made in evaluation: grabbing furniture, sitting on a tv stand
    for line in ("grab('tv')\n", "grab('sofa')\n", "sit('tvstand')\n", "open('tv')\n", "putin('sofa', 'fridge')\n"):
        assert accepts(untyped, line) and not accepts(typed, line), line
    for line in ("grab('salmon')\n", "sit('sofa')\n", "open('fridge')\n", "putin('salmon', 'fridge')\n",
                 "switchon('tv')\n", "find('tv')\n", "assert('close' to 'sofa' )\n\t\telse: find('sofa')\n"):
        assert accepts(typed, line), line
    # every example plan of the project's scene still fits the narrowed grammar
    plans = EXAMPLES / "plans"
    for path in sorted(plans.glob("*.py")):
        if "for " not in path.read_text() and "if " not in path.read_text():
            assert accepts(typed, body_of(path.read_text())), path.name


def test_an_action_nothing_affords_is_left_out() -> None:
    grammar = plan_grammar(PROGPROMPT_SPACE, ["kitchen", "salmon"],
                           affordances={"kitchen": set(), "salmon": {"GRABBABLE"}})
    assert accepts(grammar, "grab('salmon')\n") and not accepts(grammar, "switchon('salmon')\n")
    assert '"switchon"' not in grammar


def test_one_statement_grammar_excludes_rejected_calls() -> None:
    grammar = plan_grammar(PROGPROMPT_SPACE, SCENE, one_statement=True,
                           exclude=[("grab", ("salmon",)), ("putin", ("salmon", "microwave"))])
    for text in ("grab('salmon')\n", "putin('salmon', 'microwave')\n", "# 2: take it\n",
                 "find('salmon')\n\tgrab('salmon')\n", "assert('close' to 'salmon')\n\t\telse: find('salmon')\n"
                 "\t\telse: walk('salmon')\n", ""):
        assert not accepts(grammar, text), text
    for text in ("find('salmon')\n", "grab('lime')\n", "putin('lime', 'microwave')\n", "putin('salmon', 'sink')\n",
                 "assert('close' to 'salmon')\n\t\telse: find('salmon')\n", "\n"):
        assert accepts(grammar, text), text


def test_one_statement_grammars_compile_in_llama_cpp() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    banned = [("grab", ("salmon",)), ("putin", ("salmon", "microwave")), ("find", ("kitchen",))]
    for kwargs in ({}, {"comments": False}, {"asserts": False}):
        for exclude in ([], banned):
            grammar = plan_grammar(PROGPROMPT_SPACE, SCENE, one_statement=True, exclude=exclude, **kwargs)
            assert llama_cpp.LlamaGrammar.from_string(grammar, verbose=False) is not None


def test_one_statement_grammar_can_exclude_whole_actions() -> None:
    grammar = plan_grammar(PROGPROMPT_SPACE, SCENE, one_statement=True, exclude_actions={"grab", "putin"})
    assert not accepts(grammar, "grab('lime')\n") and not accepts(grammar, "putin('lime', 'sink')\n")
    assert accepts(grammar, "find('lime')\n")
    assert accepts(grammar, "assert('close' to 'lime')\n\t\telse: find('lime')\n")

"""ProgPrompt planner: the prompt's structure and ablations, continuation at the token cap, the unconstrained
retry and the dropping of invalid lines (with a scripted model), and one real constrained plan with the 0.5B
embedded model."""

from __future__ import annotations

import pytest

from fakes import APARTMENT, EXAMPLES, ScriptedLLM
from situated.actions import PROGPROMPT_SPACE
from situated.planners.progprompt import ProgPromptPlanner
from situated.planners.progprompt_prompt import PAPER_EXAMPLES, filter_lines, function_name
from situated.program import Assert, Call, Comment, validate

SCENE = ["bathroom", "dishwashingliquid", "faucet", "fridge", "garbagecan", "kitchen", "kitchencabinet", "lime",
         "microwave", "mug", "salmon", "sink", "washingsponge", "wineglass"]


def planner(examples: dict[str, str], answers: list[tuple[str, str]] = (), **options: object) -> ProgPromptPlanner:
    return ProgPromptPlanner(ScriptedLLM(list(answers)), PROGPROMPT_SPACE, examples, **options)


def test_prompt_structure(examples: dict[str, str]) -> None:
    prompt = planner(examples).prompts.prompt("microwave salmon", SCENE)
    lines = prompt.split("\n")
    assert lines[0] == PROGPROMPT_SPACE.import_line()
    assert lines[0].startswith("from actions import turnright, turnleft, walkforward, walktowards <obj>")
    assert f"objects = {SCENE!r}" in lines
    defs = [line for line in lines if line.startswith("def ")]
    assert defs == [f"def {name}():" for name in PAPER_EXAMPLES] + ["def microwave_salmon():"]
    assert prompt.endswith("\n\ndef microwave_salmon():\n\t")
    assert prompt.count("objects = [") == 1
    # The examples are the data's own text (trailing blanks aside), in order.
    for name in PAPER_EXAMPLES:
        assert examples[name].strip() in prompt


def test_number_and_sampling_of_examples(examples: dict[str, str]) -> None:
    one = planner(examples, n_examples=1).prompts.prompt("microwave salmon", SCENE)
    assert [n for n in PAPER_EXAMPLES if f"def {n}():" in one] == [PAPER_EXAMPLES[0]]
    five = planner(examples, n_examples=5).prompts.prompt("microwave salmon", SCENE)
    assert five.count("\ndef ") == 5 + 1 - five.startswith("def ")
    a = planner(examples, sample_examples=True, seed=1).prompts.examples_for("microwave salmon")
    b = planner(examples, sample_examples=True, seed=1).prompts.examples_for("microwave salmon")
    c = planner(examples, sample_examples=True, seed=2).prompts.examples_for("microwave salmon")
    assert a == b and len(a) == 3 and a != c


def test_task_own_example_is_never_shown(examples: dict[str, str]) -> None:
    shown = planner(examples).prompts.examples_for("wash mug")
    assert "wash_mug" not in shown and len(shown) == 3


@pytest.mark.parametrize("ablation", ["no-comments", "no-feedback", "neither"])
def test_ablations_remove_exactly_their_lines(examples: dict[str, str], ablation: str) -> None:
    full = planner(examples).prompts.prompt("microwave salmon", SCENE).split("\n")
    cut = planner(examples, ablation=ablation).prompts.prompt("microwave salmon", SCENE).split("\n")

    def is_comment(line: str) -> bool:
        return line.strip().startswith("#")

    def is_feedback(line: str) -> bool:
        return line.strip().startswith(("assert", "else"))

    drop_c = ablation in ("no-comments", "neither")
    drop_f = ablation in ("no-feedback", "neither")
    expected = [line for line in full if not (drop_c and is_comment(line)) and not (drop_f and is_feedback(line))]
    assert cut == expected
    assert len(cut) < len(full)
    assert any(is_comment(line) for line in cut) != drop_c
    assert any(is_feedback(line) for line in cut) != drop_f


def test_new_environment_gets_a_second_object_list(examples: dict[str, str]) -> None:
    prompt = planner(examples).prompts.prompt("microwave salmon", ["lime", "kitchen"], new_env_objects=["salmon", "tv"])
    first, second = prompt.index("objects = ['lime', 'kitchen']"), prompt.index("objects = ['salmon', 'tv']")
    last_example = prompt.index(f"def {PAPER_EXAMPLES[-1]}():")
    assert first < last_example < second < prompt.index("def microwave_salmon():")


def test_scene_without_the_examples_objects_is_a_new_environment(examples: dict[str, str]) -> None:
    p = planner(examples, answers=[("find('tv')\n", "stop")])
    p.plan("watch tv", ["tv", "sofa"])
    prompt = p.llm.calls[0]["prompt"]
    assert prompt.count("objects = [") == 2
    assert prompt.rindex("objects = ['tv', 'sofa']") > prompt.rindex("def wash_mug():")


def test_constrained_plan_passes_the_grammar_and_parses(examples: dict[str, str]) -> None:
    text = ("# 0: find salmon\n\tfind('salmon')\n\tassert('close' to 'salmon' )\n\t\telse: find('salmon')\n"
            "\tgrab('salmon')\n\t# 1: Done\n")
    p = planner(examples, answers=[(text, "stop")])
    result = p.plan("microwave salmon", SCENE)
    options = p.llm.calls[0]
    assert "root ::=" in options["grammar"] and "'salmon'" not in options["grammar"].split("obj ::=")[0]
    assert options["temperature"] == 0.0 and options["max_tokens"] == 600
    assert options["frequency_penalty"] == pytest.approx(0.15)
    assert "\ndef " in options["stop"]
    assert result.program.name == "microwave_salmon"
    assert [type(s) for s in result.program.body] == [Comment, Call, Assert, Call, Comment]
    assert result.text.startswith("def microwave_salmon():\n\t# 0: find salmon")
    assert not result.raw_problems and result.unknown == 0


def test_plan_cut_at_the_token_cap_is_continued(examples: dict[str, str]) -> None:
    first = "find('salmon')\n\tgrab('salmon')\n\tassert('close' to 'microwave')\n\t\tel"
    p = planner(examples, answers=[(first, "length"), ("find('microwave')\n\topen('microwave')\n", "stop")])
    result = p.plan("microwave salmon", SCENE)
    assert len(p.llm.calls) == 2
    # The second request continues after the last complete statement (the dangling assert is redone).
    assert p.llm.calls[1]["prompt"].endswith("def microwave_salmon():\n\tfind('salmon')\n\tgrab('salmon')\n\t")
    calls = [(s.action, s.args) for s in result.program.body if isinstance(s, Call)]
    assert calls == [("find", ("salmon",)), ("grab", ("salmon",)), ("find", ("microwave",)),
                     ("open", ("microwave",))]


def test_continuation_is_bounded(examples: dict[str, str]) -> None:
    answers = [("find('salmon')\n\tfind('sal", "length")] * 10
    p = planner(examples, answers=answers, max_continuations=2)
    result = p.plan("microwave salmon", SCENE)
    assert len(p.llm.calls) == 3
    assert len(result.program.body) == 3


def test_unconstrained_invalid_plan_is_asked_again_with_the_problems(examples: dict[str, str]) -> None:
    bad = "find('fish')\n\ttake_out('salmon')\n\tgrab('salmon')\n"
    good = "find('salmon')\n\tgrab('salmon')\n"
    p = planner(examples, answers=[(bad, "stop"), (good, "stop")], constrained=False)
    result = p.plan("microwave salmon", SCENE)
    assert p.llm.calls[0]["grammar"] is None
    retry = p.llm.calls[1]["prompt"]
    assert "# line 2: unknown object 'fish'" in retry and "unknown action 'take_out'" in retry
    assert retry.endswith("def microwave_salmon():\n\t")
    assert result.unknown == 2 and not result.problems and result.dropped == 0
    assert not validate(result.program, PROGPROMPT_SPACE, SCENE)


def test_lines_still_invalid_are_dropped_and_reported(examples: dict[str, str]) -> None:
    bad = ("find('fish')\n\tassert('close' to 'salmon')\n\t\telse: find('fish')\n\t\telse: find('salmon')\n"
           "\tgrab('salmon'\n\tgrab('salmon')\n")
    p = planner(examples, answers=[(bad, "stop"), (bad, "stop")], constrained=False)
    result = p.plan("microwave salmon", SCENE)
    assert len(p.llm.calls) == 2
    assert result.dropped == 3  # find('fish') twice (one a recovery call) and the unparseable grab
    assert any("unparseable" in q for q in result.problems)
    assert not validate(result.program, PROGPROMPT_SPACE, SCENE)
    body = result.program.body
    assert isinstance(body[0], Assert) and [c.args for c in body[0].recovery] == [("salmon",)]
    assert isinstance(body[1], Call) and body[1].args == ("salmon",)


def test_bad_settings_are_errors(examples: dict[str, str]) -> None:
    from situated.errors import SituatedError

    with pytest.raises(SituatedError, match="ablation"):
        planner(examples, ablation="no-asserts")
    with pytest.raises(SituatedError, match="examples"):
        planner(examples, n_examples=99)
    with pytest.raises(SituatedError):
        filter_lines("x", "bogus")
    assert function_name("Bring coffeepot and cupcake to the coffee table!") == (
        "bring_coffeepot_and_cupcake_to_the_coffee_table")


@pytest.mark.slow
def test_real_model_plans_microwave_salmon_in_the_apartment() -> None:
    """End to end with the embedded 0.5B model: the constrained plan parses, names only known actions and
    objects of the scene, and runs."""
    pytest.importorskip("llama_cpp")
    from situated.datasets.progprompt import load_example_plans
    from situated.envs.household import HouseholdEnv
    from situated.interpreter import interpret
    from situated.llm import load

    try:
        llm = load("llamacpp:qwen2.5-coder-0.5b")
    except Exception as exc:  # weights not installed here
        pytest.skip(f"embedded 0.5B model unavailable: {exc}")
    env = HouseholdEnv.from_file(APARTMENT)
    env.reset()
    plans = load_example_plans(EXAMPLES / "plans")
    planner = ProgPromptPlanner(llm, PROGPROMPT_SPACE, plans, max_tokens=120, max_continuations=0)
    result = planner.plan("microwave salmon", env.object_names())
    assert result.program.body, result.text
    assert not result.raw_problems and result.unknown == 0
    assert not validate(result.program, PROGPROMPT_SPACE, env.object_names())
    trace = interpret(result.program, env)
    assert trace.attempted > 0


def test_project_examples_stand_in_for_the_papers_when_they_are_absent() -> None:
    from situated.datasets.progprompt import load_example_plans

    own = load_example_plans(EXAMPLES / "plans")
    assert planner(own).prompts.examples_for("microwave salmon") == ["put_salmon_in_the_fridge", "throw_away_apple",
                                                             "wash_the_plate"]
    assert planner(own).prompts.examples_for("throw away apple")[:2] == ["put_salmon_in_the_fridge", "wash_the_plate"]

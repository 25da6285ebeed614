"""The EAI planner: answer format and conversion, the grammar (regex translation and llama.cpp itself), open-loop
and grounded planning with a scripted model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fakes import LlamaGrammarCheck, ScriptedLLM, accepts
from situated.datasets.eai_actions import load_tasks
from situated.errors import ParseError
from situated.eval.systems.eai_check import scene_checker
from situated.llm.cassette import wrap
from situated.llm.chat_template import QWEN_CHATML, RAW, chat_template_for
from situated.planners.eai import (
    Step,
    answer_grammar,
    checked_steps,
    convert_answer,
    format_answer,
    model_prompt,
    parse_answer,
    plan_grounded,
    plan_task,
)

pytest.importorskip("virtualhome_eval")


LAMP = '{\n  "WALK": ["floor_lamp", "1000"],\n  "SWITCHON": ["floor_lamp", "1000"]\n}'


@pytest.fixture(scope="module")
def tasks():
    return {t.task_id: t for t in load_tasks()}


@pytest.fixture(scope="module")
def lamp(tasks):
    return tasks["11_1"]   # Turn on light: floor_lamp (1000) ON


@pytest.fixture(scope="module")
def lights(tasks):
    return tasks["120_1"]  # two objects named light (411, 245)


# ------------------------------------------------------------------------------------------- format


def test_answer_formats_and_conversion(lamp, lights) -> None:
    steps = parse_answer(LAMP, lamp, "1.0.5")
    assert steps == (Step("WALK", ("floor_lamp",), (1000,)), Step("SWITCHON", ("floor_lamp",), (1000,)))
    names_only = convert_answer(LAMP, lamp, "1.0.5", "1.0.4")
    assert names_only == '{\n  "WALK": ["floor_lamp"],\n  "SWITCHON": ["floor_lamp"]\n}'
    assert convert_answer(names_only, lamp, "1.0.4", "1.0.5") == LAMP
    # repeated keys keep their order; zero-argument actions are written []
    both = format_answer([Step("WALK", ("light",), (411,)), Step("STANDUP"), Step("WALK", ("light",), (245,))],
                         "1.0.5")
    assert both == '{\n  "WALK": ["light", "411"],\n  "STANDUP": [],\n  "WALK": ["light", "245"]\n}'
    # a bare name is the last listed object of that name (what the 1.0.4 evaluator executes)
    old = convert_answer(both, lights, "1.0.5", "1.0.4")
    assert old == '{\n  "WALK": ["light"],\n  "STANDUP": [],\n  "WALK": ["light"]\n}'
    assert [s.ids for s in parse_answer(old, lights, "1.0.4")] == [(245,), (), (245,)]
    # EAI's own quirks of reading are accepted: single quotes, a Python-dict look
    assert parse_answer("{'WALK': ['floor_lamp', 1000]}", lamp, "1.0.5")[0].ids == (1000,)


@pytest.mark.parametrize("answer", [
    '{"WALK": ["sofa", "1000"]}',          # wrong name for the id
    '{"WALK": ["floor_lamp", "999"]}',     # unlisted id
    '{"WALK": ["floor_lamp"]}',          # names only under 1.0.5
    "no json at all",
])
def test_unscorable_answers_are_parse_errors(lamp, answer: str) -> None:
    with pytest.raises(ParseError):
        parse_answer(answer, lamp, "1.0.5")


# ------------------------------------------------------------------------------------------- grammar


def test_grammar_admits_only_listed_actions_and_objects(lamp, lights) -> None:
    grammar = answer_grammar(lamp, "1.0.5")
    assert accepts(grammar, LAMP)
    assert accepts(grammar, '{\n  "STANDUP": []\n}')
    for bad in (
        '{\n  "WALK": ["floor_lamp", "67"]\n}',                  # id of another object
        '{\n  "WALK": ["kitchen", "205"]\n}',                    # not listed
        '{\n  "WALK": ["character", "65"]\n}',                   # the prompt forbids the character
        '{\n  "WALK": ["floor_lamp"]\n}',                      # names only
        '{\n  "WALK": ["floor_lamp", "1000", "bedroom", "67"]\n}',  # wrong arity
        '{\n  "PLUGIN": ["floor_lamp", "1000"]\n}',              # listed by the prompt, a hallucination to EAI
        '{\n  "FLY": ["floor_lamp", "1000"]\n}',                 # unknown action
        '{\n  "GRAB": ["floor_lamp", "1000"]\n}',                # typed: the lamp is not GRABBABLE
        '{\n  "SWITCHON": ["bedroom", "67"]\n}',                 # typed: no HAS_SWITCH
        '{\n  "GREET": ["floor_lamp", "1000"]\n}',              # typed: no PERSON
        '{\n}',                                                # empty (a parsing error to EAI)
        LAMP + "\nmore",
    ):
        assert not accepts(grammar, bad), bad
    untyped = answer_grammar(lamp, "1.0.5", typed=False)
    assert accepts(untyped, '{\n  "GRAB": ["floor_lamp", "1000"]\n}')
    old = answer_grammar(lights, "1.0.4")
    assert accepts(old, '{\n  "WALK": ["light"],\n  "SWITCHON": ["light"]\n}')
    assert not accepts(old, '{\n  "WALK": ["light", "245"]\n}')


def test_grammar_caps_steps_and_excludes_rejected_calls(lamp) -> None:
    entry = '  "WALK": ["bedroom", "67"]'
    capped = answer_grammar(lamp, "1.0.5", max_steps=3)
    assert accepts(capped, "{\n" + ",\n".join([entry] * 3) + "\n}")
    assert not accepts(capped, "{\n" + ",\n".join([entry] * 4) + "\n}")
    rest = answer_grammar(lamp, "1.0.5", continuation=True, exclude={("SWITCHON", (1000,)), ("WALK", (67,))},
                          exclude_actions={"FIND"}, may_end=False)
    assert accepts(rest, '  "WALK": ["floor_lamp", "1000"],\n  "SWITCHON": ["floor_lamp", "1000"]\n}')
    assert accepts(rest, '  "TURNTO": ["floor_lamp", "1000"],\n  "WALK": ["bedroom", "67"]\n}')   # only the first
    for bad in ('  "SWITCHON": ["floor_lamp", "1000"]\n}', entry + "\n}", '  "FIND": ["floor_lamp", "1000"]\n}', "}"):
        assert not accepts(rest, bad), bad
    assert accepts(answer_grammar(lamp, "1.0.5", continuation=True), "}")


def _answer(*steps: tuple[str, ...]) -> str:
    """A 1.0.5 answer from (ACTION, name, id, ...) tuples."""
    return "{\n" + ",\n".join(f'  "{a}": [' + ", ".join(f'"{x}"' for x in args) + "]" for a, *args in steps) + "\n}"


TV = ("television", "410")
COUCH = ("couch", "352")
REMOTE = ("remote_control", "1000")


def test_approach_grammar_acts_only_on_what_was_approached(tasks) -> None:
    watch = tasks["98_1"]   # Watch TV: couch, remote_control, television, bedroom, home_office
    grammar = answer_grammar(watch, "1.0.5", approach=True)
    good = [
        _answer(("WALK", *TV), ("SWITCHON", *TV), ("WALK", *COUCH), ("SIT", *COUCH), ("TURNTO", *TV),
                ("WATCH", *TV)),
        _answer(("FIND", *REMOTE), ("GRAB", *REMOTE), ("WALK", *COUCH), ("PUTBACK", *REMOTE, *COUCH)),
        _answer(("WALK", "bedroom", "67")),
        _answer(("RUN", *TV), ("SWITCHOFF", *TV), ("SWITCHON", *TV), ("TURNTO", *TV), ("LOOKAT", *TV)),
    ]
    for answer in good:
        assert accepts(grammar, answer), answer
    bad = [
        _answer(("SWITCHON", *TV)),                                   # never approached (issue 14's answers)
        _answer(("WALK", *COUCH), ("SWITCHON", *TV)),                 # near the couch, not the television
        _answer(("WALK", *TV), ("WALK", *COUCH), ("SWITCHON", *TV)),  # walked away again
        _answer(("WALK", "home_office", "319"), ("SWITCHON", *TV)),  # a room brings nothing close
        _answer(("WALK", *TV), ("WATCH", *TV)),                       # walking does not make it face the TV
        _answer(("WALK", *COUCH), ("SIT", *COUCH), ("WALK", *TV)),    # seated: EAI drops STANDUP, no more walks
        _answer(("WALK", *TV), ("PUTBACK", *REMOTE, *COUCH)),         # the destination must be close
        _answer(("WALK", "sofa", "352")),                             # unknown object
        _answer(("WALK", *TV), ("FLY", *TV)),                         # unknown action
        _answer(("WALK", *TV), ("PLUGIN", *TV)),                      # a hallucination to EAI
        _answer(("WALK", *TV), ("GRAB", *TV)),                        # typed: not GRABBABLE
        '{\n  "STANDUP": []\n}',                                      # dropped by EAI's parser
        "{\n}",
    ]
    for answer in bad:
        assert not accepts(grammar, answer), answer
    old = answer_grammar(watch, "1.0.4", approach=True)
    assert accepts(old, '{\n  "WALK": ["television"],\n  "SWITCHON": ["television"]\n}')
    assert not accepts(old, '{\n  "SWITCHON": ["television"]\n}')
    with pytest.raises(ValueError, match="open loop"):
        answer_grammar(watch, "1.0.5", approach=True, continuation=True)


CUP, HAIR = ("cup", "1000"), ("hair", "2009")


def test_approach_grammar_drinks_reads_drops_and_puts_only_what_was_grabbed(tasks) -> None:
    drink = tasks["26_1"]   # Drink: couch, faucet, cup (DRINK takes it), hair, television; GRAB takes cup, hair
    grammar = answer_grammar(drink, "1.0.5", approach=True)
    good = [
        _answer(("WALK", *CUP), ("GRAB", *CUP), ("DRINK", *CUP)),
        _answer(("FIND", *CUP), ("GRAB", *CUP), ("WALK", *COUCH), ("SIT", *COUCH), ("DRINK", *CUP)),  # still held
        _answer(("WALK", *CUP), ("GRAB", *CUP), ("WALK", *COUCH), ("PUTBACK", *CUP, *COUCH)),
        _answer(("WALK", *CUP), ("GRAB", *CUP), ("WALK", *HAIR), ("GRAB", *HAIR), ("DROP", *HAIR), ("DRINK", *CUP)),
        _answer(("WALK", *CUP), ("GRAB", *CUP), ("DROP", *CUP), ("DRINK", *CUP)),  # releases are not tracked
    ]
    for answer in good:
        assert accepts(grammar, answer), answer
    bad = [
        _answer(("DRINK", *CUP)),                                         # all 44 Drink/Read book failures
        _answer(("WALK", *CUP), ("DRINK", *CUP)),                         # close to it is not holding it
        _answer(("DROP", *CUP)),                                          # what the model wrote instead
        _answer(("WALK", *HAIR), ("GRAB", *HAIR), ("DRINK", *CUP)),       # holding something else
        _answer(("WALK", *HAIR), ("GRAB", *HAIR), ("WALK", *COUCH), ("PUTBACK", *CUP, *COUCH)),
        _answer(("WALK", *CUP), ("GRAB", *CUP), ("DRINK", *HAIR)),        # typed: hair is not drinkable
    ]
    for answer in bad:
        assert not accepts(grammar, answer), answer
    work = tasks["93_2"]    # READ takes check (1000) and homework (1001), both grabbable
    grammar = answer_grammar(work, "1.0.5", approach=True)
    check, homework = ("check", "1000"), ("homework", "1001")
    assert accepts(grammar, _answer(("WALK", *check), ("GRAB", *check), ("WALK", *homework), ("GRAB", *homework),
                                    ("READ", *check), ("READ", *homework)))
    assert not accepts(grammar, _answer(("WALK", *check), ("GRAB", *check), ("READ", *homework)))
    assert accepts(answer_grammar(drink, "1.0.4", approach=True),
                   '{\n  "WALK": ["cup"],\n  "GRAB": ["cup"],\n  "DRINK": ["cup"]\n}')


def test_approach_grammar_stays_linear_in_the_objects_per_copy(tasks) -> None:
    sizes = []
    for task in tasks.values():   # 1.0.5 (1.0.4 admits one object per name: never more)
        grammar = answer_grammar(task, "1.0.5", approach=True)
        rules = [line for line in grammar.splitlines() if "::=" in line]
        copies = sum(1 for line in rules if re.match(r"start(-g(m|\d+))? ::=", line))   # nothing, one, more grabbed
        if task.task_id == "26_1":   # cup and hair grabbable: nothing, cup, hair, both grabbed
            assert {line.split(" ::=")[0] for line in rules if line.startswith("start")} == {
                "start", "start-g1000", "start-g2009", "start-gm", "start-next", "start-g1000-next",
                "start-g2009-next", "start-gm-next"}
        sizes.append((len(rules), len(task.objects), copies, task.task_id))
        assert len(rules) <= copies * (10 * len(task.objects) + 10), (task.task_id, len(rules))
    most = max(sizes)
    print(f"approach grammar: at most {most[0]} rules ({most[3]}, {most[1]} objects, {most[2]} copies) over "
          f"{len(tasks)} tasks; copies: {sorted({s[2] for s in sizes})}")
    assert max(s[1] for s in sizes) >= 28   # the largest tasks list about 30 objects
    assert max(s[2] for s in sizes) == 12   # 601_2: 10 grabbable objects


def _model_file() -> Path:
    from situated.llm.models import model_path

    return model_path("qwen2.5-coder-0.5b")


def test_grammars_compile_and_accept_in_llama_cpp(lamp, lights, tasks) -> None:
    pytest.importorskip("llama_cpp")
    if not _model_file().is_file():
        pytest.skip("the 0.5B model (its vocabulary) is not assembled")
    check = LlamaGrammarCheck(_model_file())
    for task in list(tasks.values())[:40]:
        for protocol in ("1.0.4", "1.0.5"):
            assert check.compiles(answer_grammar(task, protocol)), task.task_id
    grammar = answer_grammar(lamp, "1.0.5")
    assert check.accepts(grammar, LAMP)
    assert not check.accepts(grammar, '{\n  "WALK": ["kitchen", "205"]\n}')
    assert not check.accepts(grammar, '{\n  "PLUGIN": ["floor_lamp", "1000"]\n}')
    assert not check.accepts(grammar, '{\n  "WALK": ["floor_lamp", "1000"]')   # may not end before "}"
    rest = answer_grammar(lamp, "1.0.5", continuation=True, exclude={("SWITCHON", (1000,))}, may_end=False)
    assert check.compiles(rest)
    assert not check.accepts(rest, '  "SWITCHON": ["floor_lamp", "1000"]\n}')
    assert check.accepts(answer_grammar(lights, "1.0.4"), '{\n  "WALK": ["light"]\n}')
    for task in [*list(tasks.values())[:40], tasks["601_2"], tasks["93_2"]]:   # the most objects (31); 4 copies
        for protocol in ("1.0.4", "1.0.5"):
            assert check.compiles(answer_grammar(task, protocol, approach=True)), task.task_id
    held = answer_grammar(tasks["26_1"], "1.0.5", approach=True)
    assert check.accepts(held, _answer(("WALK", *CUP), ("GRAB", *CUP), ("DRINK", *CUP)))
    assert not check.accepts(held, _answer(("WALK", *CUP), ("DRINK", *CUP)))
    near = answer_grammar(lamp, "1.0.5", approach=True)
    assert check.accepts(near, LAMP)
    assert not check.accepts(near, '{\n  "SWITCHON": ["floor_lamp", "1000"]\n}')


# ------------------------------------------------------------------------------------------- planning


def test_open_loop_plan_is_the_constrained_answer(lamp) -> None:
    llm = ScriptedLLM([LAMP], seconds=0.5)
    plan = plan_task(llm, lamp, "1.0.5")
    assert plan.text == LAMP and plan.mode == "open-loop" and not plan.truncated
    call = llm.calls[0]
    assert call["prompt"] == lamp.prompt("1.0.5") and call["temperature"] == 0.0
    assert call["grammar"] == answer_grammar(lamp, "1.0.5")
    assert plan.cost() == {"calls": 1, "prompt_tokens": 100, "completion_tokens": 10, "seconds": 0.5}
    old = plan_task(ScriptedLLM(['{\n  "WALK": ["floor_lamp"]\n}']), lamp, "1.0.4")
    assert old.text == '{\n  "WALK": ["floor_lamp"]\n}' and old.steps[0].ids == (1000,)


def test_open_loop_with_approach_sends_the_approach_grammar(lamp) -> None:
    llm = ScriptedLLM([LAMP])
    plan = plan_task(llm, lamp, "1.0.5", approach=True)
    assert plan.text == LAMP and plan.mode == "open-loop"
    assert llm.calls[0]["grammar"] == answer_grammar(lamp, "1.0.5", approach=True) != answer_grammar(lamp, "1.0.5")
    with pytest.raises(ValueError, match="grammar"):
        plan_task(llm, lamp, "1.0.5", approach=True, grammar=False)


def test_an_answer_cut_by_max_tokens_keeps_its_complete_steps(lamp) -> None:
    cut = '{\n  "WALK": ["floor_lamp", "1000"],\n  "SWITCHON": ["floor_la'
    plan = plan_task(ScriptedLLM([(cut, "length")], seconds=0.5), lamp, "1.0.5")
    assert plan.truncated and plan.text == '{\n  "WALK": ["floor_lamp", "1000"]\n}'


def test_grounded_rewrites_from_the_failing_step(lamp) -> None:
    first = '{\n  "WALK": ["bedroom", "67"],\n  "SWITCHON": ["floor_lamp", "1000"]\n}'
    fix = '  "WALK": ["floor_lamp", "1000"],\n  "SWITCHON": ["floor_lamp", "1000"],\n  "WALK": ["bedroom", "67"]\n}'
    llm = ScriptedLLM([first, fix], seconds=0.5)
    plan = plan_grounded(llm, lamp, "1.0.5", check=scene_checker(lamp))
    assert plan.mode == "grounded" and plan.checked_ok and plan.repairs == 1
    assert plan.text == '{\n  "WALK": ["bedroom", "67"],\n  "WALK": ["floor_lamp", "1000"],\n' \
                        '  "SWITCHON": ["floor_lamp", "1000"]\n}'   # ends once the goal holds
    assert "not close" in plan.rejected[0] and plan.rejected[0].startswith("step 2:")
    second = llm.calls[1]
    assert second["prompt"].endswith('{\n  "WALK": ["bedroom", "67"],\n  // "SWITCHON": ["floor_lamp", "1000"] '
                                     "is not possible: switchon floor_lamp: the character is not close to "
                                     "floor_lamp (id 1000)\n")
    assert not accepts(second["grammar"], '  "SWITCHON": ["floor_lamp", "1000"]\n}')
    assert accepts(second["grammar"], fix)
    assert plan.calls == 2


def test_grounded_asks_for_more_while_goals_are_unmet(lamp) -> None:
    llm = ScriptedLLM(['{\n  "WALK": ["floor_lamp", "1000"]\n}', '  "SWITCHON": ["floor_lamp", "1000"]\n}'])
    plan = plan_grounded(llm, lamp, "1.0.5", check=scene_checker(lamp), repairs=1)
    assert plan.checked_ok and [s.action for s in plan.steps] == ["WALK", "SWITCHON"]
    assert "goals do not hold yet: floor_lamp (1000) is ON" in llm.calls[1]["prompt"]
    assert not accepts(llm.calls[1]["grammar"], "}")   # ending there was rejected


def test_grounded_keeps_the_last_plan_when_repairs_run_out(lamp) -> None:
    first = '{\n  "SWITCHON": ["floor_lamp", "1000"]\n}'
    llm = ScriptedLLM([first, '  "TOUCH": ["floor_lamp", "1000"]\n}'])
    plan = plan_grounded(llm, lamp, "1.0.5", check=scene_checker(lamp), repairs=1)
    assert plan.repairs == 1 and plan.checked_ok is False
    assert plan.text == '{\n  "TOUCH": ["floor_lamp", "1000"]\n}'


def test_grounded_with_approach_writes_the_first_answer_under_the_approach_grammar(lamp) -> None:
    """The first answer is the approach run's open-loop answer; a rewrite continues under the plain grammar."""
    walked = '{\n  "WALK": ["floor_lamp", "1000"]\n}'
    llm = ScriptedLLM([walked, '  "SWITCHON": ["floor_lamp", "1000"]\n}'])
    plan = plan_grounded(llm, lamp, "1.0.5", check=scene_checker(lamp), repairs=1, approach=True)
    assert plan.mode == "grounded" and plan.checked_ok and plan.repairs == 1
    assert llm.calls[0]["grammar"] == answer_grammar(lamp, "1.0.5", approach=True)
    assert llm.calls[0]["prompt"] == plan_task(ScriptedLLM([walked]), lamp, "1.0.5", approach=True).prompt
    assert not accepts(llm.calls[0]["grammar"], '{\n  "SWITCHON": ["floor_lamp", "1000"]\n}')  # not approached
    assert accepts(llm.calls[1]["grammar"], '  "SWITCHON": ["floor_lamp", "1000"]\n}')
    assert [s.action for s in plan.steps] == ["WALK", "SWITCHON"]


def test_grounded_rewrites_are_written_in_checked_pieces(lamp) -> None:
    first = '{\n  "SWITCHON": ["floor_lamp", "1000"]\n}'
    piece = ('  "WALK": ["bedroom", "67"],\n  "WALK": ["floor_lamp", "1000"],\n  "TOUCH": ["floor', "length")
    llm = ScriptedLLM([first, piece, '  "SWITCHON": ["floor_lamp", "1000"]\n}'])
    plan = plan_grounded(llm, lamp, "1.0.5", check=scene_checker(lamp), piece_tokens=20)
    assert plan.checked_ok and plan.calls == 3 and plan.repairs == 1
    third = llm.calls[2]
    assert third["prompt"].endswith('{\n  "WALK": ["bedroom", "67"],\n  "WALK": ["floor_lamp", "1000"],\n')
    assert "//" not in third["prompt"].split("Output:\n", 1)[1]   # the feedback is not kept
    assert accepts(third["grammar"], "}")


def test_planning_replays_from_a_cassette(lamp, tmp_path: Path) -> None:
    path = tmp_path / "eai.jsonl"
    recorded = plan_task(wrap(ScriptedLLM([LAMP], uri="llamacpp:never-loaded"), path, "record"), lamp, "1.0.5")
    replayed = plan_task(wrap("llamacpp:never-loaded", path, "replay"), lamp, "1.0.5")
    assert replayed.text == recorded.text == LAMP
    request = json.loads(path.read_text().splitlines()[0])["request"]
    assert request["temperature"] == 0.0 and request["grammar"] == answer_grammar(lamp, "1.0.5")


def test_embedded_qwen_models_get_the_prompt_in_their_chat_template(lamp) -> None:
    llm = ScriptedLLM(['{\n  "WALK": ["floor_lamp", "1000"]\n}'], uri="llamacpp:qwen2.5-coder-1.5b")
    plan_task(llm, lamp, "1.0.5")
    prompt = llm.calls[0]["prompt"]
    assert prompt == QWEN_CHATML.wrap(lamp.prompt("1.0.5")) == llm.chat_template.wrap(lamp.prompt("1.0.5"))
    assert chat_template_for("openai:gpt-4o") == RAW and RAW.wrap("{x}") == "{x}"
    assert model_prompt(llm, lamp, "1.0.4", RAW) == lamp.prompt("1.0.4")


def test_chatml_is_the_embedded_models_own_template() -> None:
    pytest.importorskip("llama_cpp")
    if not _model_file().is_file():
        pytest.skip("the 0.5B model is not assembled")
    from situated.llm import load

    llm = load("llamacpp:qwen2.5-coder-0.5b", n_threads=1)
    assert llm.chat_prompt([{"role": "user", "content": "P"}]) == QWEN_CHATML.wrap("P")


def test_grounded_with_hints_puts_the_enabling_steps_before_a_failing_step_without_a_model_call(lamp) -> None:
    llm = ScriptedLLM(['{\n  "WALK": ["bedroom", "67"],\n  "SWITCHON": ["floor_lamp", "1000"]\n}'])
    plan = plan_grounded(llm, lamp, "1.0.5", check=scene_checker(lamp, hints=True), repairs=1)
    assert plan.checked_ok and plan.calls == 1 and plan.repairs == 0
    assert [s.script() for s in plan.steps] == ["[WALK] <bedroom> (67)", "[WALK] <floor_lamp> (1000)",
                                                "[SWITCHON] <floor_lamp> (1000)"]
    assert plan.inserted == ("step 2: [WALK] <floor_lamp> (1000) before [SWITCHON] <floor_lamp> (1000)",)
    plain = plan_grounded(ScriptedLLM(['{\n  "SWITCHON": ["floor_lamp", "1000"]\n}', '  "TOUCH": ["floor_lamp", '
                                       '"1000"]\n}']), lamp, "1.0.5", check=scene_checker(lamp), repairs=1)
    assert plain.inserted == () and plain.repairs == 1 and not plain.checked_ok


def test_grounded_with_hints_tells_the_model_which_action_makes_a_goal_hold(lamp) -> None:
    llm = ScriptedLLM(['{\n  "WALK": ["bedroom", "67"]\n}', '  "SWITCHON": ["floor_lamp", "1000"]\n}'])
    plan = plan_grounded(llm, lamp, "1.0.5", check=scene_checker(lamp, hints=True), repairs=1)
    assert "floor_lamp (1000) is ON (SWITCHON floor_lamp (1000) makes it hold)" in llm.calls[1]["prompt"]
    assert plan.checked_ok and plan.repairs == 1 and len(plan.inserted) == 1   # the WALK it needed was put in


def test_the_check_alone_inserts_enabling_steps_and_cuts_where_the_goals_hold(lamp) -> None:
    """`checked_steps`: the grounded check on an answer already written, with no model (what
    benchmarks/eai_check_only.py applies to a finished run)."""
    answer = ('{\n  "WALK": ["bedroom", "67"],\n  "SWITCHON": ["floor_lamp", "1000"],\n'
              '  "SWITCHOFF": ["floor_lamp", "1000"]\n}')
    steps, inserted, verdict = checked_steps(parse_answer(answer, lamp, "1.0.5"), scene_checker(lamp, hints=True))
    assert [s.script() for s in steps] == ["[WALK] <bedroom> (67)", "[WALK] <floor_lamp> (1000)",
                                           "[SWITCHON] <floor_lamp> (1000)"]
    assert len(inserted) == 1 and verdict.done_at == 3   # switched off again afterwards: cut where it was on
    plain, none, failed = checked_steps(parse_answer(answer, lamp, "1.0.5"), scene_checker(lamp))
    assert none == () and failed.failed_at == 1 and len(plain) == 3   # without hints: nothing added, kept whole

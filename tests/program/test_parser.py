"""Plan programs: parsing ProgPrompt's pseudo-Python (all 34 real plans), the if/for extension, canonical
text, errors with their line and column, and validation against an ActionSpace."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from situated.actions import PROGPROMPT_SPACE, VIRTUALHOME_SPACE
from situated.errors import ParseError, ValidationError
from situated.program import (
    Assert,
    Call,
    Comment,
    Condition,
    For,
    If,
    Program,
    Var,
    call_text,
    condition_text,
    format_program,
    parse,
    require_valid,
    validate,
)


def strip_positions(node: object) -> object:
    """The same program with every line/col set to 0, to compare programs modulo where they were written."""
    if isinstance(node, tuple):
        return tuple(strip_positions(n) for n in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {f.name: strip_positions(getattr(node, f.name)) for f in dataclasses.fields(node)}
        for name in ("line", "col"):
            if name in changes:
                changes[name] = 0
        return dataclasses.replace(node, **changes)
    return node


def statements(body: tuple, kind: type) -> list:
    """Every statement of `kind` in `body`, nested ones included."""
    found = []
    for s in body:
        if isinstance(s, kind):
            found.append(s)
        if isinstance(s, If):
            found += statements(s.then, kind) + statements(s.otherwise, kind)
        if isinstance(s, For):
            found += statements(s.body, kind)
    return found


@pytest.fixture(scope="module")
def real_plans(progprompt_data: Path) -> dict[str, str]:
    return json.loads((progprompt_data / "pythonic_plans/train_complete_plan_set.json").read_text())


# -- the real ProgPrompt plans --------------------------------------------------------------------------

def test_all_34_real_plans_parse_with_their_function_names(real_plans: dict[str, str]) -> None:
    assert len(real_plans) == 34
    for name, text in real_plans.items():
        program = parse(text, source=name)
        assert program.name == name
        assert program.body


def test_statement_counts_match_the_line_shapes_of_each_real_plan(real_plans: dict[str, str]) -> None:
    for name, text in real_plans.items():
        lines = [ln.strip() for ln in text.splitlines()[1:] if ln.strip()]
        program = parse(text)
        body = program.body
        assert len(statements(body, Comment)) == sum(ln.startswith("#") for ln in lines), name
        asserts = statements(body, Assert)
        assert len(asserts) == sum(ln.startswith("assert") for ln in lines), name
        assert sum(len(a.recovery) for a in asserts) == sum(ln.startswith("else:") for ln in lines), name
        plain_calls = [ln for ln in lines if not ln.startswith(("#", "assert", "else:"))]
        assert [call_text(c) for c in statements(body, Call)] == plain_calls, name


def test_throw_away_the_lime_reads_as_written(real_plans: dict[str, str]) -> None:
    program = parse(real_plans["throw_away_the_lime"])
    comments = statements(program.body, Comment)
    assert [c.text for c in comments] == ["0: walk to kitchen", "1: find garbage can", "2: grab lime",
                                          "3: put lime in garbage can", "4: Done"]
    asserts = statements(program.body, Assert)
    first = asserts[0]
    assert first.condition == Condition("close", ("lime",))
    assert strip_positions(first.recovery) == (Call("find", ("lime",)),)
    assert (first.line, first.recovery[0].line) == (8, 9)
    closed = asserts[2]
    assert closed.condition == Condition("state", ("garbagecan", "closed"))
    assert strip_positions(closed.recovery) == (Call("close", ("garbagecan",)),)
    holding = asserts[3]  # two `else:` lines give two recovery calls, in order
    assert holding.condition == Condition("holds", ("lime",))
    assert strip_positions(holding.recovery) == (Call("find", ("lime",)), Call("grab", ("lime",)))
    putin = next(c for c in statements(program.body, Call) if c.action == "putin")
    assert putin.args == ("lime", "garbagecan")
    assert (putin.line, putin.col) == (25, 2)


def test_real_plans_use_only_virtualhome_actions(real_plans: dict[str, str]) -> None:
    for name, text in real_plans.items():
        assert validate(parse(text), VIRTUALHOME_SPACE) == [], name
    # ProgPrompt's own import line lacks two actions two of the plans use
    problems = [p for text in real_plans.values() for p in validate(parse(text), PROGPROMPT_SPACE)]
    assert sorted(p.split(": ", 1)[1] for p in problems) == ["unknown action 'read'",
                                                            "unknown action 'touch'"]


# -- grammar --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, condition", [
    ("assert('close' to 'lime' )", Condition("close", ("lime",))),
    ("assert('kitchencabinet' is 'closed' )", Condition("state", ("kitchencabinet", "closed"))),
    ("assert('tv' is 'SwitchOn')", Condition("state", ("tv", "switchon"))),
    ("assert('lamp' is 'plugged_in')", Condition("state", ("lamp", "plugged_in"))),
    ("assert('wineglass' in 'hands' )", Condition("holds", ("wineglass",))),
    ("assert('salmon' in 'fridge')", Condition("inside", ("salmon", "fridge"))),
    ("assert('plate' on 'table')", Condition("on", ("plate", "table"))),
    ("assert('close'to'lime')", Condition("close", ("lime",))),
    ("assert 'lime' in 'hands'", Condition("holds", ("lime",))),
    ('assert("lime" in "hands")', Condition("holds", ("lime",))),
    ("assert(not 'lime' in 'hands')", Condition("holds", ("lime",), negated=True)),
    ("assert not ('fridge' is 'opened')", Condition("state", ("fridge", "opened"), negated=True)),
    ("assert('fridge' is not 'opened')", Condition("state", ("fridge", "opened"), negated=True)),
    ("assert('salmon' not in 'fridge')", Condition("inside", ("salmon", "fridge"), negated=True)),
    ("assert((('close' to 'lime')))", Condition("close", ("lime",))),
])
def test_assertion_forms(text: str, condition: Condition) -> None:
    (statement,) = parse(text).body
    assert statement == Assert(condition, (), 1)


def test_a_plan_without_def_header_parses_and_has_no_name() -> None:
    program = parse("# 0: go\nwalk('kitchen')\nstandup()\n")
    assert program.name is None
    assert program.body == (Comment("0: go", 1), Call("walk", ("kitchen",), 2, 1), Call("standup", (), 3, 1))


def test_indentation_by_spaces_reads_like_tabs_and_blank_lines_and_trailing_spaces_are_ignored() -> None:
    tabs = "def f():\n\tfind('lime')\n\tassert('close' to 'lime')\n\t\telse: find('lime')\n\tgrab('lime')\n"
    spaces = ("def f():\n\n    find('lime')   \n    assert('close' to 'lime')  \n"
              "        else: find('lime')\n\n    grab('lime')\n")
    assert strip_positions(parse(spaces)) == strip_positions(parse(tabs))
    assert parse(spaces).body[2].line == 7


def test_trailing_comments_are_dropped_and_comment_text_is_trimmed() -> None:
    program = parse("def f():\n\t#   1: grab lime  \n\tgrab('lime')  # now\n"
                    "\tassert('lime' in 'hands')  # ok?\n")
    assert strip_positions(program.body) == (
        Comment("1: grab lime"), Call("grab", ("lime",)), Assert(Condition("holds", ("lime",))))


def test_else_on_its_own_line_takes_the_deeper_calls_as_recovery() -> None:
    program = parse("assert('lime' in 'hands')\n\telse:\n\t\tfind('lime')\n\t\tgrab('lime')\n"
                    "\telse: walk('kitchen')\nstandup()\n")
    first, last = program.body
    assert [call_text(c) for c in first.recovery] == ["find('lime')", "grab('lime')", "walk('kitchen')"]
    assert [c.line for c in first.recovery] == [3, 4, 5]
    assert strip_positions(last) == Call("standup")


def test_else_at_the_same_indentation_right_after_an_assert_is_its_recovery() -> None:
    program = parse("def f():\n\tassert('lime' in 'hands')\n\telse: grab('lime')\n\tstandup()\n")
    assert [call_text(c) for c in program.body[0].recovery] == ["grab('lime')"]
    assert call_text(program.body[1]) == "standup()"


def test_pass_is_a_no_op() -> None:
    assert parse("def f():\n\tpass\n") == Program((), "f")
    assert strip_positions(parse("walk('kitchen')\npass\n").body) == (Call("walk", ("kitchen",)),)


def test_comments_outside_the_function_are_dropped() -> None:
    program = parse("# generated plan\n\ndef f():\n\twalk('kitchen')\n# end\n")
    assert program.name == "f"
    assert strip_positions(program.body) == (Call("walk", ("kitchen",)),)


def test_for_binds_its_variable_in_calls_conditions_and_recovery() -> None:
    program = parse("def f():\n\tfor item in ['lime', 'salmon']:\n\t\tfind(item)\n"
                    "\t\tassert(item in 'hands')\n\t\t\telse: grab(item)\n\t\tputin(item, 'fridge')\n")
    (loop,) = program.body
    assert (loop.var, loop.items, loop.line) == ("item", ("lime", "salmon"), 2)
    find, held, put = loop.body
    assert find.args == (Var("item"),)
    assert held.condition == Condition("holds", (Var("item"),))
    assert held.recovery[0].args == (Var("item"),)
    assert put.args == (Var("item"), "fridge")


def test_if_else_blocks_and_inline_bodies() -> None:
    program = parse("if 'fridge' is 'closed':\n\topen('fridge')\nelse:\n\tclose('fridge')\n"
                    "if ('close' to 'lime'): grab('lime')\nelse: find('lime')\n")
    first, second = program.body
    assert first.condition == Condition("state", ("fridge", "closed"))
    assert strip_positions((first.then, first.otherwise)) == ((Call("open", ("fridge",)),),
                                                             (Call("close", ("fridge",)),))
    assert second.condition == Condition("close", ("lime",))
    assert strip_positions((second.then, second.otherwise)) == ((Call("grab", ("lime",)),),
                                                               (Call("find", ("lime",)),))


def test_nesting_up_to_max_depth_is_accepted() -> None:
    loops = ("\t" * (i + 1) + f"for v{i} in ['lime']:" for i in range(8))
    lines = ["def f():", *loops, "\t" * 9 + "grab(v7)"]
    program = parse("\n".join(lines))
    node = program.body[0]
    for _ in range(7):
        node = node.body[0]
    assert node.body == (Call("grab", (Var("v7"),), 10, 10),)
    with pytest.raises(ParseError) as info:
        parse("\n".join(lines), max_depth=7)
    assert info.value.line == 9
    with pytest.raises(ValueError):
        parse("walk('kitchen')", max_depth=1_000)


def test_bytes_input_is_utf8_and_error_messages_name_the_source() -> None:
    assert parse("walk('café')".encode()).body[0].args == ("café",)
    with pytest.raises(ParseError) as info:
        parse("walk('kitchen')\nimport os\n", source="plans/evil.py")
    assert str(info.value) == "plans/evil.py:line 2, column 1: imports are not allowed"
    assert (info.value.line, info.value.col, info.value.source) == (2, 1, "plans/evil.py")


@pytest.mark.parametrize("text, line, col, message", [
    ("walk('kitchen')\nimport os\n", 2, 1, "imports are not allowed"),
    ("def f():\n\tos.system('ls')\n", 2, 4, "attribute access is not allowed"),
    ("def f():\n\twhile True:\n\t\twalk('a')\n", 2, 2, "'while' loops are not allowed"),
    ("walk(lambda: 'a')", 1, 6, "lambdas are not allowed"),
    ("[grab(x) for x in ['a']]", 1, 10, "comprehensions are not allowed"),
    ("walk(f'{x}')", 1, 6, "f-strings"),
    ("walk('a' + 'b')", 1, 10, "arithmetic"),
    ("walk(3)", 1, 6, "numbers are not allowed"),
    ("x = 'kitchen'", 1, 3, "assignments are not allowed"),
    ("walk(obj='kitchen')", 1, 9, "keyword arguments are not allowed"),
    ("putin(*['a', 'b'])", 1, 7, "star arguments are not allowed"),
    ("walk('a')[0]", 1, 10, "subscripts are not allowed"),
    ("eval('walk')", 1, 1, "'eval' is not allowed"),
    ("walk(__builtins__)", 1, 6, "'__'"),
    ("walk(kitchen)", 1, 6, "unbound name 'kitchen'"),
    ("walk(find('a'))", 1, 6, "nested calls are not allowed"),
    ("walk('a'", 1, 9, "expected ',' or ')'"),
    ("walk('kitchen)", 1, 6, "unterminated string"),
    ("def f():\n\twalk('a')\n\tdef g():\n\t\tpass\n", 3, 2, "nested function definitions"),
    ("def f():\n\twalk('a')\ndef g():\n\tpass\n", 3, 1, "only one function per plan"),
    ("def f(x):\n\twalk(x)\n", 1, 7, "function parameters are not allowed"),
    ("class A:\n\tpass\n", 1, 1, "class definitions are not allowed"),
    ("@d\ndef f():\n\tpass\n", 1, 1, "decorators are not allowed"),
    ("def f():\n\twith x:\n\t\tpass\n", 2, 2, "'with' statements are not allowed"),
    ("try:\n\tpass\n", 1, 1, "'try' statements are not allowed"),
    ("return 'a'", 1, 1, "'return' is not allowed"),
    ("yield 'a'", 1, 1, "'yield' is not allowed"),
    ("global x", 1, 1, "'global' is not allowed"),
    ("del x", 1, 1, "'del' is not allowed"),
    ("raise x", 1, 1, "'raise' is not allowed"),
    ("walk('a')\nelse: grab('a')\n", 2, 1, "'else' without a preceding assert or if"),
    ("def f():\n\twalk('a')\n    grab('a')\n", 3, 1, "inconsistent indentation"),
    ("def f():\n\twalk('a')\n\t\tgrab('a')\n", 3, 1, "unexpected indent"),
    ("assert('lime' in 'hands')\n\tgrab('lime')\n", 2, 2, "only 'else:' lines may follow an assert"),
    ("assert('near' to 'lime')", 1, 8, "only 'close' to X"),
    ("assert('fridge' is 'wide open')", 1, 20, "a state must be a quoted word"),
    ("assert('fridge' at 'kitchen')", 1, 17, "expected 'to', 'is', 'in' or 'on'"),
    ("for i in range(3):\n\twalk('a')\n", 1, 10, "literal list of strings"),
    ("for x in ['a']:\n\tfor x in ['b']:\n\t\tgrab(x)\n", 2, 6, "already bound"),
    ("for f in ['walk']:\n\tf('a')\n", 2, 2, "calling the loop variable"),
    ("if 'fridge' is 'closed':\nopen('fridge')\n", 1, 24, "expected an indented block after 'if'"),
    ("walk('/etc/passwd')", 1, 7, "'/' is not allowed in a name"),
    ("walk('')", 1, 6, "empty strings"),
    ("walk('a\\tb')", 1, 8, "backslashes"),
])
def test_parse_errors_give_line_column_and_what_was_found(text: str, line: int, col: int,
                                                           message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(text)
    assert (info.value.line, info.value.col) == (line, col), info.value
    assert message in info.value.message


def test_the_first_error_in_reading_order_is_reported() -> None:
    with pytest.raises(ParseError) as info:
        parse("def f():\n\twalk(kitchen)\n\tx = eval('1')\n")
    assert info.value.line == 2


# -- canonical text -------------------------------------------------------------------------------------

def test_canonical_text_of_a_real_plan(real_plans: dict[str, str]) -> None:
    text = format_program(parse(real_plans["throw_away_the_lime"]))
    lines = text.splitlines()
    assert lines[0] == "def throw_away_the_lime():"
    assert lines[1] == "\t# 0: walk to kitchen"
    assert lines[7:10] == ["\tassert('close' to 'lime')", "\t\telse: find('lime')", "\tgrab('lime')"]
    assert "\tassert('garbagecan' is 'closed')" in lines
    assert "\tassert('lime' in 'hands')" in lines
    assert "\tputin('lime', 'garbagecan')" in lines
    assert all(line == line.rstrip() for line in lines)


@pytest.mark.parametrize("text", [
    "def f():\n\tfor item in ['lime', 'salmon']:\n\t\tfind(item)\n\t\tassert(item in 'hands')\n"
    "\t\t\telse: grab(item)\n\t\tif 'fridge' is 'closed':\n\t\t\topen('fridge')\n\t\telse:\n"
    "\t\t\tpass\n\t\tputin(item, 'fridge')\n",
    "if not ('close' to 'lime'): find('lime')\nelse:\n\t# already there\n\tgrab('lime')\n",
    "for x in []:\n\tpass\nif 'a' in 'b':\n\tif 'c' on 'd':\n\t\tfor y in ['e',]:\n\t\t\twalk(y)\n",
    "assert('a' is not 'opened')\nassert 'a' not in 'hands'\n",
    "",
])
def test_round_trip_of_for_and_if_programs(text: str) -> None:
    program = parse(text)
    canonical = format_program(program)
    assert strip_positions(parse(canonical)) == strip_positions(program)
    assert format_program(parse(canonical)) == canonical


def test_round_trip_of_all_real_plans(real_plans: dict[str, str]) -> None:
    for name, text in real_plans.items():
        program = parse(text)
        canonical = format_program(program)
        assert strip_positions(parse(canonical)) == strip_positions(program), name
        assert format_program(parse(canonical)) == canonical, name


def test_format_with_another_indent_and_of_empty_blocks() -> None:
    loop = For("x", ("a",), (Call("grab", (Var("x"),)),))
    program = Program((If(Condition("state", ("tv", "switchon")), ()), loop), "f")
    assert format_program(program, indent="    ") == (
        "def f():\n    if 'tv' is 'switchon':\n        pass\n    for x in ['a']:\n        grab(x)\n")
    assert strip_positions(parse(format_program(program))) == program


def test_call_and_condition_text() -> None:
    assert call_text(Call("putin", ("lime", "garbagecan"))) == "putin('lime', 'garbagecan')"
    assert call_text(Call("standup")) == "standup()"
    assert call_text(Call("grab", (Var("item"),))) == "grab(item)"
    assert condition_text(Condition("close", ("lime",))) == "'close' to 'lime'"
    assert condition_text(Condition("state", ("fridge", "opened"))) == "'fridge' is 'opened'"
    assert condition_text(Condition("holds", ("lime",), negated=True)) == "not 'lime' in 'hands'"
    assert condition_text(Condition("inside", ("salmon", "fridge"))) == "'salmon' in 'fridge'"
    assert condition_text(Condition("on", (Var("x"), "table"))) == "x on 'table'"


# -- validation -----------------------------------------------------------------------------------------

OBJECTS = ["kitchen", "lime", "garbagecan", "fridge", "salmon", "table"]


def test_validate_names_each_problem_with_its_line() -> None:
    program = parse("def f():\n\twalk('kitchen')\n\tfly('kitchen')\n\tputin('lime')\n\tgrab('unicorn')\n"
                    "\tassert('close' to 'dragon')\n\t\telse: find('griffin')\n\tstandup('table')\n")
    assert validate(program, PROGPROMPT_SPACE, OBJECTS) == [
        "line 3: unknown action 'fly'",
        "line 4: putin takes 2 arguments, got 1",
        "line 5: unknown object 'unicorn'",
        "line 6: unknown object 'dragon'",
        "line 7: unknown object 'griffin'",
        "line 8: standup takes 0 arguments, got 1",
    ]


def test_hands_and_states_are_not_objects_but_condition_objects_are() -> None:
    program = parse("assert('lime' in 'hands')\nassert('fridge' is 'opened')\nassert('salmon' in 'box')\n"
                    "if 'plate' on 'table':\n\tgrab('lime')\n")
    assert validate(program, PROGPROMPT_SPACE, OBJECTS) == ["line 3: unknown object 'box'",
                                                             "line 4: unknown object 'plate'"]


def test_loop_variables_are_checked_through_the_loop_items() -> None:
    program = parse("for x in ['lime', 'unicorn']:\n\tgrab(x)\n\tassert(x in 'fridge')\n\t\telse: putin(x)\n")
    assert validate(program, PROGPROMPT_SPACE, OBJECTS) == [
        "line 1: unknown object 'unicorn'", "line 4: putin takes 2 arguments, got 1"]
    unbound = Program((Call("grab", (Var("y"),), 3),))
    assert validate(unbound, PROGPROMPT_SPACE) == ["line 3: unbound loop variable 'y'"]


def test_objects_are_checked_only_when_a_vocabulary_is_known() -> None:
    program = parse("grab('unicorn')\n")
    assert validate(program, PROGPROMPT_SPACE) == []
    assert validate(program, PROGPROMPT_SPACE.with_objects(OBJECTS)) == ["line 1: unknown object 'unicorn'"]
    assert validate(program, PROGPROMPT_SPACE.with_objects(OBJECTS), ["unicorn"]) == []


def test_check_raises_with_every_problem_and_passes_a_good_plan(real_plans: dict[str, str]) -> None:
    with pytest.raises(ValidationError) as info:
        require_valid(parse("fly('kitchen')\nputin('lime')\n"), PROGPROMPT_SPACE)
    assert info.value.problems == ["line 1: unknown action 'fly'", "line 2: putin takes 2 arguments, got 1"]
    assert require_valid(parse(real_plans["wash_mug"]), PROGPROMPT_SPACE) is None

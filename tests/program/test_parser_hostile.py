"""Hostile and broken plan texts: each ends in a ParseError or ValidationError with a line; nothing runs.

The corpus in tests/hostile_plans/ holds one attack or breakage per file; its first line says what happens:
`# expect: parse-error line=N` or `# expect: invalid line=N` (parses, but fails validation against
PROGPROMPT_SPACE and OBJECTS). Large, binary and invisible-character inputs are generated here instead.
"""

from __future__ import annotations

import builtins
import json
import random
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from fakes import ROOT
from situated.actions import PROGPROMPT_SPACE
from situated.errors import ParseError, ValidationError
from situated.program import Program, format_program, parse, require_valid, validate

CORPUS = Path(__file__).parent / "hostile_plans"
OBJECTS = ("kitchen", "lime", "salmon", "fridge", "garbagecan", "table", "wineglass", "kitchencabinet")
HEADER = re.compile(r"# expect: (parse-error|invalid) line=(\d+)\n")
SENTINEL = "pwned.txt"
GUARDED = ("exec", "eval", "compile", "__import__", "open", "breakpoint", "input")


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if p.is_file())


def expectation(path: Path) -> tuple[str, int]:
    match = HEADER.match(path.read_text(encoding="utf-8"))
    assert match, f"{path.name}: first line must be '# expect: parse-error|invalid line=N'"
    return match.group(1), int(match.group(2))


@contextmanager
def nothing_may_execute() -> Iterator[list[str]]:
    """Replace the builtins that could run or load code, or touch files, by ones that record and raise."""
    calls: list[str] = []
    saved = {name: getattr(builtins, name) for name in GUARDED}

    def guard(name: str) -> Callable[..., object]:
        def refuse(*args: object, **kwargs: object) -> object:
            calls.append(name)
            raise AssertionError(f"builtins.{name} was called while parsing a plan")
        return refuse

    for name in GUARDED:
        setattr(builtins, name, guard(name))
    try:
        yield calls
    finally:
        for name, value in saved.items():
            setattr(builtins, name, value)


def reject(text: str | bytes, **limits: int) -> tuple[type[Exception], int, str]:
    """Parse and validate under guard; the kind of rejection, its line and message (fails if accepted)."""
    with nothing_may_execute() as calls:
        try:
            program = parse(text, source="hostile", **limits)
            require_valid(program, PROGPROMPT_SPACE, OBJECTS)
        except ParseError as e:
            assert calls == []
            return ParseError, e.line, e.message
        except ValidationError as e:
            assert calls == []
            match = re.match(r"line (\d+): ", e.problems[0])
            assert match, e.problems
            return ValidationError, int(match.group(1)), e.problems[0]
    raise AssertionError(f"accepted: {text[:80]!r}")


def test_the_corpus_is_large_and_every_file_says_what_to_expect() -> None:
    files = corpus_files()
    assert len(files) >= 30
    kinds = {expectation(p)[0] for p in files}
    assert kinds == {"parse-error", "invalid"}


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_each_hostile_plan_is_rejected_at_its_line_and_nothing_runs(path: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    kind, line = expectation(path)
    error, got_line, message = reject(path.read_bytes())
    assert error is (ParseError if kind == "parse-error" else ValidationError), message
    assert got_line == line, message
    assert not (tmp_path / SENTINEL).exists()


@pytest.mark.parametrize("name, expected", [
    ("import_os.py", "imports are not allowed"),
    ("attribute_call.py", "attribute access is not allowed"),
    ("while_true.py", "'while' loops are not allowed"),
    ("lambda.py", "lambdas are not allowed"),
    ("comprehension.py", "comprehensions are not allowed"),
    ("fstring.py", "f-strings"),
    ("arithmetic.py", "arithmetic"),
    ("exec_call.py", "'exec' is not allowed"),
    ("getattr_call.py", "'getattr' is not allowed"),
    ("dunder_import.py", "'__'"),
    ("keyword_args.py", "keyword arguments"),
    ("star_args.py", "star arguments"),
    ("subscript.py", "subscripts"),
    ("assignment.py", "assignments"),
    ("for_over_range.py", "literal list of strings"),
    ("name_as_arg_outside_loop.py", "unbound name 'lime'"),
    ("loop_var_call.py", "calling the loop variable"),
    ("nested_def.py", "nested function definitions"),
    ("function_params.py", "function parameters are not allowed"),
    ("else_without_assert.py", "'else' without a preceding assert or if"),
    ("tab_space_mix_inconsistent.py", "inconsistent indentation"),
    ("unterminated_string.py", "unterminated string"),
    ("unknown_action.py", "unknown action 'fly'"),
    ("wrong_arity.py", "putin takes 2 arguments, got 1"),
    ("unknown_object.py", "unknown object 'unicorn'"),
])
def test_rejections_name_what_was_found(name: str, expected: str) -> None:
    _, _, message = reject((CORPUS / name).read_bytes())
    assert expected in message


def test_an_open_call_with_a_path_is_refused_before_any_action_is_considered() -> None:
    error, line, message = reject((CORPUS / "open_file.py").read_bytes())
    assert (error, line) == (ParseError, 3)
    assert "'/'" in message


# -- generated inputs: too big, too deep, binary, invisible ---------------------------------------------

def test_input_above_max_bytes_is_rejected_with_the_line_where_the_limit_is_crossed() -> None:
    text = "def plan():\n" + "\twalk('kitchen')\n" * 20_000  # 340 kB
    error, line, message = reject(text)
    assert error is ParseError and "max_bytes=200000" in message
    assert line == 1 + 200_000 // len("\twalk('kitchen')\n") + 1
    assert reject(text.encode(), max_bytes=1000)[:2] == (ParseError, 1 + 1000 // 17 + 1)


def test_nesting_deeper_than_max_depth_is_rejected_at_the_first_block_too_deep() -> None:
    depth = 50
    openers = ("if 'fridge' is 'closed':" if i % 2 else f"for x{i} in ['lime']:" for i in range(depth))
    lines = ["def plan():", *("\t" * (i + 1) + opener for i, opener in enumerate(openers))]
    text = "\n".join([*lines, "\t" * (depth + 1) + "grab('lime')"])
    assert reject(text)[:2] == (ParseError, 2 + 8)  # the 9th opener, on line 10
    assert reject(text, max_depth=3)[:2] == (ParseError, 2 + 3)


def test_a_loop_list_longer_than_max_loop_items_is_rejected() -> None:
    items = ", ".join(["'lime'"] * 10_000)
    error, line, message = reject(f"def plan():\n\tfor x in [{items}]:\n\t\tgrab(x)\n")
    assert (error, line) == (ParseError, 2) and "max_loop_items=64" in message
    sixty_five = ", ".join(["'lime'"] * 65)
    assert reject(f"for x in [{sixty_five}]:\n\tgrab(x)\n")[:2] == (ParseError, 1)
    sixty_four = ", ".join(["'lime'"] * 64)
    assert len(parse(f"for x in [{sixty_four}]:\n\tgrab(x)\n").body[0].items) == 64


@pytest.mark.parametrize("data, line", [
    (b"def plan():\n\twalk('kitchen')\n\tgrab('li\xffme')\n", 3),  # not UTF-8
    (b"def plan():\n\twalk('kit\xc3')\n", 2),  # truncated UTF-8 sequence
    (b"\xfe\xff\x00w\x00a\x00l\x00k", 1),  # UTF-16
    (b"def plan():\n\twalk('kitchen')\x00\n", 2),  # NUL byte
    ("def plan():\n\twalk('kitchen')\n\t# harmless\u202e)'nemow'(klaw\n".encode(), 3),  # bidi override
    ("def plan():\n\twalk('kitchen\u200b')\n".encode(), 2),  # zero-width space
    (b"def plan():\n\twalk('kitchen')\x1b[2J\n", 2),  # terminal escape
    (b"def plan():\n\x0c\twalk('kitchen')\n", 2),  # form feed in indentation
])
def test_binary_and_invisible_characters_are_rejected_with_their_line(data: bytes, line: int) -> None:
    assert reject(data)[:2] == (ParseError, line)


def test_str_input_with_an_unpaired_surrogate_is_rejected() -> None:
    assert reject("walk('kitchen')\ngrab('\ud800')\n")[:2] == (ParseError, 2)


@pytest.mark.parametrize("text", [
    "assert" + "(" * 10_000 + "'lime' in 'hands'",  # parentheses never closed
    "walk('kitchen')\n" + " " * 100_000 + "grab('lime')",  # absurd indentation
    "walk(" + "'lime', " * 5_000,  # endless argument list
    "def plan():\n" + "".join("\t" * i + "if 'a' is 'b':\n" for i in range(1, 2_000)),  # deep staircase
])
def test_pathological_but_small_inputs_end_in_a_parse_error(text: str) -> None:
    assert reject(text)[0] is ParseError


def test_balanced_parentheses_are_read_without_recursion() -> None:
    program = parse("assert" + "(" * 5_000 + "'lime' in 'hands'" + ")" * 5_000)
    assert program.body[0].condition.kind == "holds"


def test_non_text_input_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        parse(12345)  # type: ignore[arg-type]


# -- fuzzing --------------------------------------------------------------------------------------------

FRAGMENTS = [*"()[]{}'\":,.#=+-*/\\ \t\n\x00_aZ9é", "\u202e", "else:", "assert ", "if ", "for x in ", " in ",
             " is ", "not ", "def f():", "'''", "__", "pass", "\t\t", "lambda", "import ", "x", "'hands'"]


def mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 4)):
        op, i = rng.randrange(5), rng.randrange(len(text) + 1)
        if op == 0:
            text = text[:i] + rng.choice(FRAGMENTS) + text[i:]
        elif op == 1:
            text = text[:i] + text[i + rng.randint(1, 6):]
        elif op == 2:
            lines = text.split("\n")
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(lines))
            text = "\n".join(lines)
        elif op == 3:
            text = text[:i]
        else:
            lines = text.split("\n")
            j = rng.randrange(len(lines))
            lines[j] = rng.choice(["", "\t", "    ", " ", "\t\t", "\t\t\t"]) + lines[j].lstrip()
            text = "\n".join(lines)
    return text


def test_random_mutations_of_real_plans_end_in_a_program_or_a_parse_error(progprompt_data: Path) -> None:
    path = progprompt_data / "pythonic_plans/train_complete_plan_set.json"
    plans = list(json.loads(path.read_text()).values())
    plans.append("def f():\n\tfor x in ['a', 'b']:\n\t\tif x is 'opened':\n\t\t\tgrab(x)\n\t\telse:\n"
                 "\t\t\tassert(x in 'hands')\n\t\t\t\telse: grab(x)\n")
    rng = random.Random(20240607)
    outcomes = {"program": 0, "error": 0}
    with nothing_may_execute() as calls:
        for _ in range(2_000):
            text = mutate(rng.choice(plans), rng)
            try:
                program = parse(text)
            except ParseError as e:
                assert e.line >= 1 and e.col >= 1, (text, e)
                outcomes["error"] += 1
            else:
                assert isinstance(program, Program)
                canonical = format_program(program)
                assert format_program(parse(canonical)) == canonical, text
                validate(program, PROGPROMPT_SPACE, OBJECTS)
                outcomes["program"] += 1
    assert calls == []
    assert outcomes["program"] > 100 and outcomes["error"] > 100, outcomes


def test_no_source_calls_exec_eval_or_compile_and_the_plan_language_imports_no_escape_hatch() -> None:
    src = ROOT / "src" / "situated"
    modules = sorted(src.rglob("*.py"))
    assert len(modules) > 40
    for path in modules:
        code = path.read_text(encoding="utf-8")
        assert not re.search(r"(?<![\w.])(exec|eval|compile|__import__)\s*\(", code), path
    for path in sorted((src / "program").glob("*.py")):
        code = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from)\s+(ast|tokenize|subprocess|os)\b", code, re.M), path

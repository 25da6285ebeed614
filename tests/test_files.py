"""The guarded reader and the output helpers: every bad input is one DataError line naming file, line and field."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pytest

from situated import files
from situated.errors import DataError


def finishes(call: Callable[[], Any], seconds: float = 5.0) -> Any:
    """Run `call` in a thread; fail (instead of hanging the suite) when it has not returned within `seconds`."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still blocked after {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


# ------------------------------------------------------------------------------------------------- file kinds

def test_fifo_input_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "plan.json"
    os.mkfifo(fifo)
    for reader in (files.read_bytes, files.read_text, files.read_json):
        with pytest.raises(DataError, match=rf"^{fifo}: cannot read .*a FIFO \(named pipe\), not a regular file$"):
            finishes(lambda reader=reader: reader(fifo))
    with pytest.raises(DataError, match="FIFO"):
        finishes(lambda: list(files.read_json_lines(fifo)))


def test_dev_zero_and_other_devices_are_refused() -> None:
    with pytest.raises(DataError, match=r"^/dev/zero: cannot read scene graph: a character device"):
        finishes(lambda: files.read_json("/dev/zero", what="scene graph"))


def test_directory_socket_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=rf"^{tmp_path}: cannot read file: a directory, not a regular file$"):
        files.read_bytes(tmp_path)
    with pytest.raises(DataError, match=r"cannot read file: No such file or directory$"):
        files.read_bytes(tmp_path / "absent.json")
    with pytest.raises(DataError, match=r"cannot read file: Not a directory$"):
        (tmp_path / "f").write_text("x")
        files.read_bytes(tmp_path / "f" / "g")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "s"))
        with pytest.raises(DataError, match="a socket, not a regular file"):
            finishes(lambda: files.read_bytes(tmp_path / "s"))
    with pytest.raises(DataError, match="cannot read file"):
        files.read_bytes("bad\x00path")


def test_symlink_to_a_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "real.json").write_text("[1]")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    assert files.read_json(tmp_path / "link.json") == [1]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file_names_the_os_reason(tmp_path: Path) -> None:
    path = tmp_path / "secret.json"
    path.write_text("{}")
    path.chmod(0)
    with pytest.raises(DataError, match="Permission denied"):
        files.read_json(path)


# ------------------------------------------------------------------------------------------------- size

def test_size_limit_is_checked_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b"x" * 101)
    assert files.read_bytes(path, limit=101) == b"x" * 101
    with pytest.raises(DataError, match=rf"^{path}: tasks is 101 bytes, more than the limit of 100 bytes$"):
        files.read_bytes(path, what="tasks", limit=100)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc")
def test_a_file_that_grows_past_its_stat_size_is_stopped_at_the_limit() -> None:
    # /proc files stat as 0 bytes and then deliver more: the limit is enforced while reading, too.
    assert os.stat("/proc/self/maps").st_size == 0
    with pytest.raises(DataError, match="grew past the limit of 10 bytes while being read"):
        files.read_bytes("/proc/self/maps", limit=10)


# ------------------------------------------------------------------------------------------------- text

def test_non_utf8_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_bytes(b'{\n  "a": "caf\xc3\xa9 \xff"\n}\n')
    with pytest.raises(DataError) as err:
        files.read_text(path)
    assert str(err.value) == f"{path}: line 2, column 14: not UTF-8 text (byte ff: invalid start byte)"


def test_nul_bytes_are_refused_unless_allowed(tmp_path: Path) -> None:
    path = tmp_path / "plan.py"
    path.write_bytes(b"walk()\ngrab(\x00)\n")
    with pytest.raises(DataError, match=rf"^{path}: line 2, column 6: NUL byte in text$"):
        files.read_text(path)
    assert files.read_text(path, allow_nul=True) == "walk()\ngrab(\x00)\n"


def test_byte_order_mark_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf[1, 2]")
    assert files.read_json(path) == [1, 2]


# ------------------------------------------------------------------------------------------------- JSON

def test_deep_nesting_is_refused_before_parsing() -> None:
    for text in ("[" * 100_000, "[" * 100_000 + "]" * 100_000):
        with pytest.raises(DataError, match=r"^g.json: line 1, column 65: JSON nested deeper than 64 levels$"):
            files.parse_json(text, "g.json")
    with pytest.raises(DataError, match=r"^g.json: line 1, column 321: JSON nested deeper than 64 levels$"):
        files.parse_json('{"a":' * 50_000 + "1" + "}" * 50_000, "g.json")
    assert files.parse_json("[" * 64 + "]" * 64, "g.json") is not None
    assert files.parse_json("[" * 10 + "]" * 10, "g.json", max_depth=10) is not None
    with pytest.raises(DataError, match="deeper than 9 levels"):
        files.parse_json("[" * 10 + "]" * 10, "g.json", max_depth=9)


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"s": "[" * 1000, "t": '\\"{' * 500, "u": [[["]]]"]]]})
    assert files.parse_json(text, "x") == json.loads(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": NaN}', "line 1, column 7: NaN is not a JSON number"),
        ('[1,\n Infinity]', "line 2, column 2: Infinity is not a JSON number"),
        ('[-Infinity]', "line 1, column 2: -Infinity is not a JSON number"),
        ('{"x": 1e999}', "line 1, column 7: number 1e999 is out of range"),
        ('[-1.5E+400]', "line 1, column 2: number -1.5E+400 is out of range"),
        ("[" + "7" * 101 + "]", "line 1, column 2: integer with 101 digits (limit 100)"),
        ("[" + "7" * 5000 + "]", "line 1, column 2: integer with 5000 digits (limit 100)"),
        ('{"a": 1,\n "b": }', "line 2, column 7: invalid JSON (Expecting value)"),
        ('{"a": "\\ud800"}', "line 1, column 8: string with an unpaired surrogate escape"),
        ('["ok", "\\udc00"]', "line 1, column 9: string with an unpaired surrogate escape"),
        ("", "line 1, column 1: invalid JSON (Expecting value)"),
    ],
)
def test_values_python_would_accept_or_crash_on_are_refused(text: str, message: str) -> None:
    with pytest.raises(DataError) as err:
        files.parse_json(text, "f.json")
    assert str(err.value) == f"f.json: {message}"


def test_numbers_within_limits_and_strings_of_digits_are_kept() -> None:
    assert files.parse_json("[" + "9" * 100 + ", 1e308, -2.5e-300]", "x") == [int("9" * 100), 1e308, -2.5e-300]
    assert files.parse_json('["' + "9" * 5000 + '", "NaN", "\\ud83d\\ude00"]', "x") == ["9" * 5000, "NaN", "😀"]
    assert files.parse_json("[" + "1" * 300 + "]", "x", max_int_digits=300) == [int("1" * 300)]


def test_duplicate_keys_are_an_option() -> None:
    assert files.parse_json('{"a": 1, "a": 2}', "x") == {"a": 2}
    with pytest.raises(DataError, match=r"^x: duplicate key 'a'$"):
        files.parse_json('{"a": 1, "a": 2}', "x", duplicate_keys="error")


def test_parse_json_reports_lines_of_the_enclosing_file() -> None:
    with pytest.raises(DataError, match=r"^tasks.jsonl: line 41, column 2: invalid JSON"):
        files.parse_json("{\n {", "tasks.jsonl", line=40)


def test_read_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "scene.json"
    path.write_text('{"nodes": [\n  {"id": 1,}\n]}')
    with pytest.raises(DataError, match=rf"^{path}: line 2, column 12: invalid JSON"):
        files.read_json(path)


# ------------------------------------------------------------------------------------------------- JSON lines

def test_json_lines_yield_line_numbers_and_skip_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(b'{"a": 1}\r\n\n   \n[2]\n3')
    assert list(files.read_json_lines(path)) == [(1, {"a": 1}), (4, [2]), (5, 3)]


def test_json_lines_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": \xfe}\n')
    lines = files.read_json_lines(path)
    assert next(lines) == (1, {"a": 1})
    with pytest.raises(DataError, match=rf"^{path}: line 2, column 7: not UTF-8 text"):
        next(lines)
    path.write_bytes(b'{"a": 1}\n\n{"b": [[1]}\n')
    with pytest.raises(DataError, match=rf"^{path}: line 3, column 11: invalid JSON"):
        list(files.read_json_lines(path))
    path.write_bytes(b"[1]\n" + b"[" * 1000 + b"\n")
    with pytest.raises(DataError, match=rf"^{path}: line 2, column 65: JSON nested deeper than 64 levels"):
        list(files.read_json_lines(path))


def test_json_lines_are_read_in_pieces_with_the_limit_on_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    record = json.dumps({"text": "x" * 1000})
    path.write_text((record + "\n") * 3000)  # 3 MB: several read chunks, lines split across them
    assert sum(1 for _ in files.read_json_lines(path)) == 3000
    with pytest.raises(DataError, match="more than the limit of 1000000 bytes"):
        list(files.read_json_lines(path, limit=1_000_000))


# ------------------------------------------------------------------------------------------------- fields

def test_field_checks_types_and_names_the_path() -> None:
    record = {"states": ["OPEN", 3], "id": True, "pos": [1, 2.5], "kind": "edge", "extra": {"k": [1, "x"]}}
    where = "scene.json: line 3"
    with pytest.raises(DataError, match=r"^scene.json: line 3: field states\[1\]: expected string, got integer$"):
        files.field(record, "states", list[str], where)
    with pytest.raises(DataError, match=r"^scene.json: line 3: field id: expected integer, got boolean$"):
        files.field(record, "id", int, where)
    assert files.field(record, "pos", list[float], where) == [1, 2.5]
    assert files.field(record, "kind", Literal["edge", "node"], where) == "edge"
    with pytest.raises(DataError, match=r"field extra.k\[1\]: expected integer, got string$"):
        files.field(record, "extra", dict[str, list[int]], where)
    with pytest.raises(DataError, match=r"^scene.json: line 3: field missing: missing$"):
        files.field(record, "missing", str, where)
    assert files.field(record, "missing", str | None, where, default=None) is None
    with pytest.raises(DataError, match=r"^scene.json: line 3: expected an object, got list$"):
        files.field([1], "states", list[str], where)
    assert files.check_type(["a", 1], tuple[str, int], "x") == ["a", 1]
    with pytest.raises(DataError, match="expected 2 items, got 1"):
        files.check_type(["a"], tuple[str, int], "x")
    with pytest.raises(DataError, match=r"^x: field k: expected integer or null, got string$"):
        files.check_type("3", int | None, "x", name="k")
    with pytest.raises(DataError, match=r"^x: field m\['a\\nb'\]: expected integer, got null$"):
        files.check_type({"a\nb": None}, dict[str, int], "x", name="m")


def test_validate_turns_pydantic_errors_into_one_line() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Node(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(strict=True, extra="forbid")
        id: int
        class_name: str
        states: list[str] = pydantic.Field(default_factory=list)

    class Graph(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(strict=True, extra="forbid")
        nodes: list[Node]

    assert files.validate(Graph, {"nodes": [{"id": 1, "class_name": "mug"}]}, "g.json").nodes[0].id == 1
    with pytest.raises(DataError) as err:
        files.validate(Graph, {"nodes": [{"id": 1, "class_name": "mug", "states": ["ON", 5]}]}, "g.json: line 7")
    assert str(err.value) == "g.json: line 7: field nodes[0].states[1]: Input should be a valid string"
    with pytest.raises(DataError, match=r"^x: field nodes\[0\].id: .* \(and 1 more\)$"):
        files.validate(Graph, {"nodes": [{"id": "1"}]}, "x")
    assert files.validate(list[int], [1, 2], "x") == [1, 2]


# ------------------------------------------------------------------------------------------------- outputs

def test_output_never_overwrites_an_input(tmp_path: Path) -> None:
    scene = tmp_path / "scene.json"
    scene.write_text("{}")
    (tmp_path / "alias.json").symlink_to(scene)
    os.link(scene, tmp_path / "hard.json")
    for out in (scene, tmp_path / "alias.json", tmp_path / "hard.json", tmp_path / "sub" / ".." / "scene.json"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        with pytest.raises(DataError, match=rf"output would overwrite the input {scene}$"):
            files.check_output(out, inputs=[scene], force=True)
    with pytest.raises(DataError, match="output would overwrite the input"):
        files.check_output(scene, inputs=[tmp_path / "hard.json"], appends=True)


def test_output_existing_file_directory_fifo_and_parents(tmp_path: Path) -> None:
    out = tmp_path / "trace.jsonl"
    assert files.check_output(out) == out
    out.write_text("")
    with pytest.raises(DataError, match=rf"^{out}: output exists; pass --force to overwrite it$"):
        files.check_output(out)
    assert files.check_output(out, force=True) == out
    assert files.check_output(out, appends=True) == out
    with pytest.raises(DataError, match="expected an output file, found a directory"):
        files.check_output(tmp_path)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(DataError, match="found a FIFO"):
        files.check_output(tmp_path / "fifo")
    nested = tmp_path / "runs" / "a" / "out.json"
    assert files.check_output(nested) == nested and nested.parent.is_dir()  # parents are created
    with pytest.raises(DataError, match="cannot write output: Not a directory"):
        files.check_output(out / "x.json")
    if Path("/proc/self").exists():  # a folder that cannot be created, even by root
        with pytest.raises(DataError, match="cannot create the output folder /proc/situated-test: "):
            files.check_output("/proc/situated-test/x.json")
    assert files.check_output("/dev/null", force=False) == Path("/dev/null")


def test_write_text_atomic_replaces_in_one_step(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    files.write_text_atomic(out, "one")
    assert out.read_text() == "one" and stat.S_IMODE(out.stat().st_mode) == 0o644
    out.chmod(0o600)
    files.write_text_atomic(out, "two ✓")
    assert out.read_text(encoding="utf-8") == "two ✓" and stat.S_IMODE(out.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary file left behind
    with pytest.raises(DataError, match=rf"^{tmp_path}/missing/r.json: cannot write: No such file or directory$"):
        files.write_text_atomic(tmp_path / "missing" / "r.json", "x")
    files.write_text_atomic("/dev/null", "discarded")


def test_full_disk_is_a_data_error() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    with pytest.raises(DataError, match=r"^/dev/full: cannot write: No space left on device$"):
        files.write_text_atomic("/dev/full", "x")
    with pytest.raises(DataError, match=r"^/dev/full: cannot append: No space left on device$"):
        files.append_line("/dev/full", "{}")


def test_append_line_starts_each_record_on_its_own_line(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    files.append_line(out, '{"a": 1}')
    with out.open("a") as handle:
        handle.write('{"b": 2, "trunc')  # an interrupted writer
    files.append_line(out, '{"c": 3}')
    assert out.read_text().splitlines() == ['{"a": 1}', '{"b": 2, "trunc', '{"c": 3}']
    with pytest.raises(DataError, match=rf"^{tmp_path}: cannot append: Is a directory$"):
        files.append_line(tmp_path, "{}")
    with pytest.raises(ValueError, match="line breaks"):
        files.append_line(out, "a\nb")

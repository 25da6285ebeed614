"""Issue 28's findings, one test each (each failed before the fix): a library file is data to trust or refuse.

1. a bad value in a row is one line `error: FILE: TABLE row N: FIELD: ...` and exit 2, and `integrity` finds it;
2. opening a wide acyclic library parses each body once (not once per path), and the caps hold at import;
3. export never replaces what is not a regular file;
4. a trigger (or view, index, changed column) inside a library file is refused before it can run;
7. a session script is refused by its size before it is read;
8. `situated sandbox library export|import` exist and keep the export's promises;
9. a sandbox error is one line, without pybullet's build-time banner.
(5 and 6, the web server's port and Host checks, are in tests/web/test_host_and_port.py.)
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import situated
from situated.cli import main
from situated.errors import DataError
from situated.sandbox import library as library_module
from situated.sandbox.library import SkillLibrary

PACK_BODY = "pickup(obj)\ngoto('gift_bag')\nrelease()"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def taught(path: Path) -> Path:
    """A small library: an object, two behaviours (one of two versions), a skill, a session with events."""
    with SkillLibrary.open(path) as lib:
        lib.add_object("gift_bag", (0.5, 0.1, 0.0), "A gift bag.")
        lib.add_behaviour("pack", ["obj"], "Pack it.", PACK_BODY, ["pickup", "goto", "release"])
        lib.add_behaviour("pack", ["obj"], "Pack it, then home.", PACK_BODY + "\ngo_home()",
                          ["pickup", "goto", "release", "go_home"])
        lib.add_behaviour("pack_two", ["a", "b"], "Pack two.", "pack(a)\npack(b)", ["pack", "pack"])
        lib.add_skill("wave", [], "Wave.", {"format": "situated-dmp/1", "weights": [0.5]})
        session = lib.start_session("gift_bag", "test")
        lib.log(session, "teaching", {"name": "pack"})
        lib.end_session(session)
    return path


def edit(path: Path, *statements: str) -> None:
    """Change the file behind the library's back (as a user with the sqlite3 shell could)."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA ignore_check_constraints = ON")
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err.strip()


# -- 1. rows --------------------------------------------------------------------------------------------------------

BAD_ROWS = [
    ("UPDATE behaviour_versions SET params = 'not json'", r"behaviour_versions row \d+: params: .*invalid JSON"),
    ("UPDATE behaviour_versions SET params = '5'", r"behaviour_versions row \d+: params: must be a list of names"),
    ("UPDATE skill_versions SET weights = '{'", r"skill_versions row \d+: weights: .*invalid JSON"),
    ("UPDATE object_versions SET x = 'abc'", r"object_versions row \d+: x: must be a number, not str"),
    ("UPDATE events SET payload = 'x'", r"events row \d+: payload: .*invalid JSON"),
    ("UPDATE behaviour_versions SET depth = 'deep'", r"behaviour_versions row \d+: depth: must be an integer"),
    ("UPDATE names SET name = 'Wave!' WHERE name = 'wave'", r"names row \d+: name: 'Wave!' is not a name"),
    ("UPDATE behaviour_calls SET callee = 'Not A Name'", r"behaviour_calls row \d+: callee: 'Not A Name' is not"),
    ("UPDATE sessions SET started_at = X'00'", r"sessions row \d+: started_at: must be a number, not bytes"),
]


@pytest.mark.parametrize(("change", "message"), BAD_ROWS, ids=[c.split(" SET ")[0][7:] + "." + c.split()[3]
                                                               for c, _ in BAD_ROWS])
def test_a_bad_row_value_is_one_line_naming_file_table_row_and_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], change: str, message: str) -> None:
    library = taught(tmp_path / "lib.db")
    edit(library, change)
    before = digest(library)
    outcomes = [run(["sandbox", "library", "--library", str(library)], capsys),
                run(["sandbox", "report", str(library)], capsys),
                run(["sandbox", "library", "export", "--library", str(library), "--out", str(tmp_path / "x.json")],
                    capsys)]
    refused = [(code, err) for code, _, err in outcomes if code != 0]
    assert refused, "no command read the bad row"
    for code, err in refused:
        assert code == 2 and len(err.splitlines()) == 1 and err.startswith(f"error: {library}: "), err
        assert "Traceback" not in err
    assert any(re.search(message, err) for _, err in refused), refused
    with SkillLibrary.open(library) as lib:
        problems = lib.integrity()
    assert problems != "ok" and re.search(message, problems), problems
    assert digest(library) == before
    assert not (tmp_path / "x.json").exists()


# -- 2. opening is linear; caps -------------------------------------------------------------------------------------


def fan_out(path: Path, k: int, levels: int = 8) -> int:
    """`levels` levels of `k` behaviours, each calling all `k` of the next (the last calls a skill)."""
    with SkillLibrary.open(path) as lib:
        for level in reversed(range(levels)):
            callees = [f"b{level + 1}_{j}" for j in range(k)] if level + 1 < levels else ["pickup"]
            body = "".join(f"{c}(obj)\n" for c in callees)
            for j in range(k):
                lib.add_behaviour(f"b{level}_{j}", ["obj"], "", body, callees)
    return k * levels


class SilentModel:
    uri = "none:silent"


def test_opening_a_wide_acyclic_library_parses_each_body_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pybullet")
    from situated.envs.tabletop import TabletopEnv
    from situated.sandbox import behaviours
    from situated.sandbox.session import SandboxSession

    count = fan_out(tmp_path / "wide.db", 4)
    parsed: list[str] = []
    original = behaviours.parse

    def counting(text: str, *args: Any, **kwargs: Any) -> Any:
        parsed.append(text)
        return original(text, *args, **kwargs)

    monkeypatch.setattr(behaviours, "parse", counting)
    env = TabletopEnv("gift_bag", seed=0)
    try:
        with SkillLibrary.open(tmp_path / "wide.db") as lib, \
                SandboxSession(env, SilentModel(), lib, scene="gift_bag") as session:  # type: ignore[arg-type]
            assert {f"b{level}_{j}" for level in range(8) for j in range(4)} <= set(session.space.names)
            assert session.notes == []
    finally:
        env.close()
    # every path of the graph (4**7 from each top behaviour) was walked before; now each body is read once
    assert len(parsed) <= count


def _export(tmp_path: Path, behaviours: list[dict[str, Any]]) -> Path:
    doc = {"format": "situated-library/1", "objects": [], "behaviours": behaviours, "skills": [], "sessions": []}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _behaviour(name: str, calls: list[str], depth: int = 1) -> dict[str, Any]:
    return {"name": name, "versions": [{"version": 1, "params": [], "doc": "", "body": "".join(
        f"{c}()\n" for c in calls), "calls": calls, "depth": depth, "created_at": 0.0}]}


@pytest.mark.parametrize("case", ["behaviours", "calls", "depth", "depth-declared"])
def test_the_caps_are_checked_at_import(tmp_path: Path, case: str) -> None:
    caps = library_module
    MAX_BEHAVIOURS, MAX_CALLS, MAX_DEPTH = caps.MAX_BEHAVIOURS, caps.MAX_CALLS, caps.MAX_DEPTH
    if case == "behaviours":
        document = [_behaviour(f"b{i}", ["pickup"]) for i in range(MAX_BEHAVIOURS + 1)]
        problem = f"more than {MAX_BEHAVIOURS}"
    elif case == "calls":
        document = [_behaviour("b", ["pickup"] * (MAX_CALLS + 1))]
        problem = rf"calls: has {MAX_CALLS + 1} entries, more than {MAX_CALLS}"
    elif case == "depth":  # a chain one deeper than the cap, each declaring depth 1
        document = [_behaviour(f"b{i}", [f"b{i + 1}"] if i < MAX_DEPTH else ["pickup"]) for i in range(MAX_DEPTH + 1)]
        problem = f"composition depth {MAX_DEPTH + 1} is more than {MAX_DEPTH}"
    else:
        document = [_behaviour("b", ["pickup"], depth=MAX_DEPTH + 1)]
        problem = f"depth: must be an integer from 1 to {MAX_DEPTH}"
    with SkillLibrary.open(tmp_path / "lib.db") as lib:
        lib.add_object("bag")
        with pytest.raises(DataError, match=problem):
            lib.import_json(_export(tmp_path, document))
        assert lib.behaviours() == [] and [o.name for o in lib.objects()] == ["bag"]


def test_teaching_past_the_caps_is_refused(tmp_path: Path) -> None:
    MAX_CALLS, MAX_DEPTH = library_module.MAX_CALLS, library_module.MAX_DEPTH
    with SkillLibrary.open(tmp_path / "lib.db") as lib:
        for i in range(MAX_DEPTH):
            lib.add_behaviour(f"b{i}", [], "", "", [f"b{i - 1}"] if i else ["pickup"])
        with pytest.raises(DataError, match=f"composition depth {MAX_DEPTH + 1} is more than {MAX_DEPTH}"):
            lib.add_behaviour("deeper", [], "", "", [f"b{MAX_DEPTH - 1}"])
        with pytest.raises(DataError, match=f"more than {MAX_CALLS}"):
            lib.add_behaviour("busy", [], "", "", ["pickup"] * (MAX_CALLS + 1))


# -- 3. export targets ----------------------------------------------------------------------------------------------


@pytest.fixture
def library(tmp_path: Path) -> Iterator[SkillLibrary]:
    with SkillLibrary.open(taught(tmp_path / "lib.db")) as lib:
        yield lib


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_export_never_replaces_a_fifo_a_directory_or_the_library(tmp_path: Path, library: SkillLibrary) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    link = tmp_path / "link"
    link.symlink_to(fifo)
    for target in (fifo, folder, link, library.path, Path(f"{library.path}-wal"), Path(f"{library.path}-shm")):
        before = os.lstat(target).st_mode if os.path.lexists(target) else None
        with pytest.raises(DataError) as err:
            library.export_json(target, overwrite=True)
        assert str(err.value).startswith(f"{target}: ") and "\n" not in str(err.value)
        assert (os.lstat(target).st_mode if os.path.lexists(target) else None) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    library.export_json(tmp_path / "fine.json")
    assert json.loads((tmp_path / "fine.json").read_text(encoding="utf-8"))["format"] == "situated-library/1"


# -- 4. schema ------------------------------------------------------------------------------------------------------

EXTRA_SCHEMA = [
    ("CREATE TRIGGER wipe AFTER INSERT ON events BEGIN DELETE FROM names; END", "unexpected trigger 'wipe'"),
    ("CREATE TRIGGER quiet BEFORE INSERT ON sessions BEGIN SELECT 1; END", "unexpected trigger 'quiet'"),
    ("CREATE VIEW everything AS SELECT * FROM names", "unexpected view 'everything'"),
    ("CREATE INDEX names_kind ON names (kind)", "unexpected index 'names_kind'"),
    ("ALTER TABLE sessions ADD COLUMN note TEXT", "changed table 'sessions'"),
    ("DROP INDEX events_session", "missing index 'events_session'"),
]


@pytest.mark.parametrize(("statement", "problem"), EXTRA_SCHEMA, ids=[p for _, p in EXTRA_SCHEMA])
def test_a_library_with_anything_else_in_its_schema_is_refused_untouched(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], statement: str, problem: str) -> None:
    library = taught(tmp_path / "lib.db")
    edit(library, statement)
    before = digest(library)
    with pytest.raises(DataError, match=problem) as err:
        SkillLibrary.open(library)
    assert str(err.value).startswith(f"{library}: not a skill library of schema version")
    code, _, message = run(["sandbox", "library", "--library", str(library)], capsys)
    assert code == 2 and len(message.splitlines()) == 1 and problem in message
    assert digest(library) == before
    db = sqlite3.connect(library)
    assert db.execute("SELECT COUNT(*) FROM names").fetchone()[0] == 4  # the trigger never ran
    db.close()


# -- 7. script size -------------------------------------------------------------------------------------------------


def test_a_huge_session_script_is_refused_before_it_is_read(tmp_path: Path) -> None:
    from situated.sandbox.script import MAX_SCRIPT_BYTES, read_script

    script = tmp_path / "huge.session"
    with script.open("wb") as handle:  # sparse: 200 MB that take no disk space
        handle.truncate(200 * 1024 * 1024)
    tracemalloc.start()
    try:
        with pytest.raises(DataError, match=f"more than the limit of {MAX_SCRIPT_BYTES} bytes"):
            read_script(script)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 1024 * 1024


def test_an_endless_line_on_stdin_is_refused_without_holding_it(tmp_path: Path) -> None:
    from situated.sandbox.script import MAX_LINE, iter_script

    stream = io.StringIO("user: pack the ball\n" + "x" * 10_000_000)
    lines = iter_script(stream, "<stdin>")
    assert next(lines).text == "pack the ball"
    with pytest.raises(DataError, match=f"<stdin>:2: line longer than {MAX_LINE} characters"):
        next(lines)
    assert stream.tell() < 10_000  # read no further than the bound


# -- 8. the export and import commands ------------------------------------------------------------------------------


def test_export_and_import_commands_share_a_library(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = taught(tmp_path / "source.db")
    out = tmp_path / "shared.json"
    code, said, _ = run(["sandbox", "library", "export", "--library", str(source), "--out", str(out)], capsys)
    assert code == 0 and said.strip() == f"wrote {out}: 1 objects, 2 behaviours, 1 skills, 1 sessions"
    code, _, err = run(["sandbox", "library", "export", "--library", str(source), "--out", str(out)], capsys)
    assert code == 2 and err == f"error: {out}: output exists; pass --force to overwrite it"
    code, _, err = run(["sandbox", "library", "export", "--library", str(source), "--out", str(source), "--force"],
                       capsys)
    assert code == 2 and "would overwrite the input" in err
    target = tmp_path / "target.db"
    code, said, _ = run(["sandbox", "library", "import", "--library", str(target), str(out)], capsys)
    assert code == 0 and said.startswith(f"imported {out} into {target}: 1 objects, 2 behaviours")
    with SkillLibrary.open(source) as a, SkillLibrary.open(target) as b:
        assert a.versions("pack") == b.versions("pack") and a.skills() == b.skills() and b.integrity() == "ok"
    before = digest(target)
    code, _, err = run(["sandbox", "library", "import", "--library", str(target), str(out)], capsys)
    assert code == 2 and err == f"error: {out}: objects[0].name: 'gift_bag' is already in the library {target}"
    assert digest(target) == before
    bad = tmp_path / "bad.json"
    bad.write_text(out.read_text(encoding="utf-8").replace('"pickup"', '"Pick Up"', 1), encoding="utf-8")
    code, _, err = run(["sandbox", "library", "import", "--library", str(tmp_path / "new.db"), str(bad)], capsys)
    assert code == 2 and "calls[0]" in err and not (tmp_path / "new.db").exists()
    code, _, err = run(["sandbox", "library", "export", "--library", str(tmp_path / "none.db"), "--out",
                        str(tmp_path / "none.json")], capsys)
    assert code == 2 and "no such library file" in err and not (tmp_path / "none.db").exists()


# -- 9. the banner --------------------------------------------------------------------------------------------------


def test_a_sandbox_error_is_one_line_without_pybullets_banner(tmp_path: Path) -> None:
    """An error after the simulator started (here: an unknown model backend) is still the one line."""
    pytest.importorskip("pybullet")
    script = tmp_path / "ok.session"
    script.write_text("user: pack the ball\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(situated.__file__).parents[1])}  # the situated under test
    proc = subprocess.run([sys.executable, "-m", "situated", "sandbox", "--script", str(script), "--library",
                           str(tmp_path / "lib.db"), "--model", "bogus:thing"], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith("error: bad model uri"), proc.stderr
    assert "pybullet build time" not in proc.stdout + proc.stderr

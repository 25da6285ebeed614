"""The skill library: versions, undo, sessions, export/import, refusal of foreign files, crash safety."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from situated.errors import DataError
from situated.sandbox import library_schema as schema
from situated.sandbox.library import EXPORT_FORMAT, BehaviourRecord, ObjectRecord, SkillLibrary

SRC = Path(__file__).resolve().parents[2] / "src"
PACK_BODY = "pickup(obj)\ngoto('gift_bag')\nrelease()"


class Clock:
    """A deterministic clock: 1000.0, 1001.0, ..."""

    def __init__(self) -> None:
        self.now = 999.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.fixture
def lib(tmp_path: Path) -> Iterator[SkillLibrary]:
    with SkillLibrary.open(tmp_path / "lib.db", clock=Clock()) as library:
        yield library


def teach_gift_bag(lib: SkillLibrary) -> None:
    lib.add_object("gift_bag", (0.5, 0.1, 0.0), "A gift bag that can hold items.", "pointed")
    lib.add_object("candy", None, "A gummy, sandwich-shaped candy.", "scene")
    lib.add_behaviour("pack", ["obj"], "Put an object in the gift bag.", PACK_BODY, ["pickup", "goto", "release"])
    lib.add_behaviour("pack", ["obj"], "Put an object in the gift bag and go home.", PACK_BODY + "\ngo_home()",
                      ["pickup", "goto", "release", "go_home"])
    lib.add_behaviour("pack_two", ["a", "b"], "Pack two objects.", "pack(a)\npack(b)", ["pack", "pack"])
    lib.add_skill("wave", [], "Wave at the user.", {"format": "situated-dmp/1", "weights": [0.5, -1.25]})
    session = lib.start_session("gift_bags", "openai:gpt-3.5-turbo-1106")
    lib.log(session, "utterance", {"text": "pack the candy", "nested": {"list": [1, 2.5, None, True]}})
    lib.log(session, "confirmation")
    lib.log(session, "skill_failure", {"skill": "pickup"})
    lib.end_session(session)
    lib.start_session("gift_bags", "llamacpp:qwen2.5-coder-1.5b")


def file_bytes(path: Path) -> bytes:
    return path.read_bytes()


# -- basics --------------------------------------------------------------------------------------------------------


def test_create_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "lib.db"
    with SkillLibrary.open(path, clock=Clock()) as lib:
        teach_gift_bag(lib)
        before = (lib.objects(), lib.behaviours(), lib.skills(), lib.sessions(), lib.events(1))
    with SkillLibrary.open(path) as lib:
        assert (lib.objects(), lib.behaviours(), lib.skills(), lib.sessions(), lib.events(1)) == before
        assert lib.integrity() == "ok"
    assert [o.name for o in before[0]] == ["candy", "gift_bag"]
    assert before[0][1] == ObjectRecord("gift_bag", 1, (0.5, 0.1, 0.0), "A gift bag that can hold items.", "pointed",
                                        1000.0)
    pack, pack_two = before[1]
    assert (pack.version, pack.calls, pack.depth) == (2, ("pickup", "goto", "release", "go_home"), 1)
    assert (pack_two.params, pack_two.depth) == (("a", "b"), 2)
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA application_id").fetchone()[0] == schema.APPLICATION_ID
        assert db.execute("PRAGMA user_version").fetchone()[0] == schema.schema_version()
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        db.close()


def test_versions_and_undo(lib: SkillLibrary) -> None:
    assert lib.add_behaviour("pack", ["obj"], "v1", PACK_BODY, ["pickup"]) == 1
    assert lib.add_behaviour("pack", ["obj"], "v2", PACK_BODY, ["pickup"]) == 2
    assert lib.add_behaviour("pack", ["obj", "bag"], "v3", PACK_BODY, ["pickup"]) == 3
    assert [v.doc for v in lib.versions("pack")] == ["v1", "v2", "v3"]
    undone = lib.undo("pack")
    assert isinstance(undone, BehaviourRecord) and (undone.version, undone.doc) == (2, "v2")
    assert lib.get("pack") == undone
    assert lib.add_behaviour("pack", ["obj"], "v3 again", PACK_BODY) == 3  # numbering continues from what is kept
    lib.undo("pack")
    lib.undo("pack")
    assert lib.undo("pack") is None  # taught once: undo removes the name
    assert lib.get("pack") is None and lib.versions("pack") == [] and lib.behaviours() == []
    with pytest.raises(DataError, match="nothing named 'pack'"):
        lib.undo("pack")
    lib.add_object("bag", (1, 2, 3))
    lib.add_object("bag", None, "moved out of view")
    assert lib.undo("bag") == ObjectRecord("bag", 1, (1.0, 2.0, 3.0), "", "pointed", lib.versions("bag")[0].created_at)
    assert lib.integrity() == "ok"


def test_one_namespace_and_name_rules(lib: SkillLibrary) -> None:
    lib.add_behaviour("pack", ["obj"], "", PACK_BODY)
    with pytest.raises(DataError, match="'pack' is already taught as a behaviour, not an object"):
        lib.add_object("pack")
    for bad in ["Pack", "1bag", "class", "a" * 65, "", "gift-bag", "naïve"]:
        with pytest.raises(DataError, match="is not a name") as err:
            lib.add_object(bad)
        assert str(lib.path) in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(DataError, match="params: repeats a name"):
        lib.add_behaviour("b", ["x", "x"], "", "")
    with pytest.raises(DataError, match="params: must be a list of names"):
        lib.add_behaviour("b", "obj", "", "")  # type: ignore[arg-type]
    with pytest.raises(DataError, match="body: contains the control character"):
        lib.add_behaviour("b", [], "", "pickup(obj)\x00")
    with pytest.raises(DataError, match=r"position\[2\]: must be finite"):
        lib.add_object("bag", (0.0, 0.0, float("nan")))
    with pytest.raises(DataError, match="source: must be one of pointed, scene"):
        lib.add_object("bag", source="guessed")  # type: ignore[arg-type]
    with pytest.raises(DataError, match="kind: must be one of dmp"):
        lib.add_skill("wave", [], "", {}, kind="policy")
    assert lib.objects() == [] and lib.skills() == []


def test_composition_depth_and_cycles(lib: SkillLibrary) -> None:
    lib.add_object("gift_bag")
    assert lib.add_behaviour("pack", ["obj"], "", PACK_BODY, ["pickup", "goto", "release"]) == 1
    lib.add_behaviour("pack_two", ["a", "b"], "", "pack(a)\npack(b)", ["pack", "pack"])
    lib.add_behaviour("pack_all", [], "", "pack_two(x, y)\npack(z)", ["pack_two", "pack"])
    assert [(b.name, b.depth) for b in lib.behaviours()] == [("pack", 1), ("pack_all", 3), ("pack_two", 2)]
    with pytest.raises(DataError, match=r"calls\[0\]: behaviour 'pack' calls itself"):
        lib.add_behaviour("pack", ["obj"], "", "pack(obj)", ["pack"])
    with pytest.raises(DataError, match=r"would make a cycle: pack -> pack_all -> pack$"):
        lib.add_behaviour("pack", ["obj"], "", "pack_all()", ["pack_all"])
    with pytest.raises(DataError, match="'gift_bag' is an object"):
        lib.add_behaviour("bad", [], "", "", ["gift_bag"])
    assert lib.dependents("pack") == ["pack_all", "pack_two"]
    assert lib.get("pack") is not None and lib.get("pack").version == 1  # type: ignore[union-attr]


def test_the_librarys_depth_cap_is_the_one_plans_keep() -> None:
    from situated.sandbox.behaviours import MAX_COMPOSITION_DEPTH
    from situated.sandbox.library import MAX_DEPTH

    assert MAX_DEPTH == MAX_COMPOSITION_DEPTH


def test_sessions_and_events(lib: SkillLibrary) -> None:
    first = lib.start_session("gift_bags", "openai:gpt-3.5-turbo")
    second = lib.start_session("stop_motion", "llamacpp:qwen2.5-coder-1.5b")
    lib.log(first, "teaching", {"name": "pack", "depth": 1})
    lib.log(second, "correction", {"utterance": "no, the other bag"})
    lib.log(first, "confirmation")
    lib.end_session(first)
    assert [(s.id, s.scene, s.ended_at is None) for s in lib.sessions()] == [(1, "gift_bags", False),
                                                                          (2, "stop_motion", True)]
    assert [(e.kind, e.payload) for e in lib.events(first)] == [("teaching", {"name": "pack", "depth": 1}),
                                                                ("confirmation", {})]
    assert lib.events(first)[0].at < lib.events(first)[1].at
    with pytest.raises(DataError, match="session 1 has ended"):
        lib.log(first, "confirmation")
    with pytest.raises(DataError, match="session 1 has ended"):
        lib.end_session(first)
    with pytest.raises(DataError, match="no session 7"):
        lib.log(7, "confirmation")
    with pytest.raises(DataError, match=r"payload\.x: must be finite"):
        lib.log(second, "confirmation", {"x": float("inf")})
    with pytest.raises(DataError, match="key 1 is not a string"):
        lib.log(second, "confirmation", {1: "a"})  # type: ignore[dict-item]
    with pytest.raises(DataError, match="set is not a JSON value"):
        lib.log(second, "confirmation", {"a": {1}})
    with pytest.raises(DataError, match="nested deeper"):
        deep: dict = {}
        node = deep
        for _ in range(40):
            node["a"] = {}
            node = node["a"]
        lib.log(second, "confirmation", deep)
    with pytest.raises(DataError, match="event kind"):
        lib.log(second, "Skill Failure")
    assert len(lib.events(second)) == 1


# -- export / import -----------------------------------------------------------------------------------------------


def test_export_import_round_trip(tmp_path: Path, lib: SkillLibrary) -> None:
    teach_gift_bag(lib)
    lib.export_json(tmp_path / "out.json")
    document = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert document["format"] == EXPORT_FORMAT
    assert [len(b["versions"]) for b in document["behaviours"]] == [2, 1]
    with SkillLibrary.open(tmp_path / "fresh.db") as fresh:
        fresh.import_json(tmp_path / "out.json")
        assert fresh.objects() == lib.objects()
        assert fresh.behaviours() == lib.behaviours()
        assert fresh.skills() == lib.skills()
        assert fresh.versions("pack") == lib.versions("pack")
        assert fresh.sessions() == lib.sessions()
        assert [fresh.events(s.id) for s in fresh.sessions()] == [lib.events(s.id) for s in lib.sessions()]
        assert fresh.integrity() == "ok"
        fresh.export_json(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == (tmp_path / "out.json").read_bytes()


def test_export_refuses_to_overwrite(tmp_path: Path, lib: SkillLibrary) -> None:
    target = tmp_path / "out.json"
    target.write_text("precious", encoding="utf-8")
    with pytest.raises(DataError, match="output exists"):
        lib.export_json(target)
    assert target.read_text(encoding="utf-8") == "precious"
    lib.export_json(target, overwrite=True)
    assert json.loads(target.read_text(encoding="utf-8"))["format"] == EXPORT_FORMAT
    with pytest.raises(DataError, match="would overwrite the input"):
        lib.export_json(lib.path, overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def _set(*path_and_value: object) -> Callable[[dict], None]:
    """A change to an export: set the field at `path` (keys and indexes) to `value`; a value DELETE removes it."""
    *path, value = path_and_value

    def change(doc: dict) -> None:
        node: Any = doc
        for key in path[:-1]:
            node = node[key]
        if value is DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value

    return change


DELETE = object()
B0V = ("behaviours", 0, "versions")
MUTATIONS = [  # (a change to a valid export, the field the DataError must name)
    (_set("format", "situated-library/2"), "format"),
    (_set("extra", 1), "unknown field 'extra'"),
    (_set("sessions", DELETE), "lacks sessions"),
    (_set("behaviours", 0, "name", "Pack"), r"behaviours\[0\]\.name"),
    (_set("behaviours", 1, "name", "pack"), r"behaviours\[1\]\.name: 'pack' appears twice"),
    (_set("objects", 0, "name", "pack"), r"behaviours\[0\]\.name: 'pack' appears twice"),
    (_set(*B0V, 1, "version", 3), r"behaviours\[0\]\.versions\[1\]: version"),
    (_set(*B0V, 0, "params", ["obj", 7]), r"versions\[0\]: params\[1\]"),
    (_set(*B0V, 0, "depth", 0), r"versions\[0\]: depth"),
    (_set(*B0V, []), r"behaviours\[0\]\.versions: must not be empty"),
    (_set("objects", 1, "versions", 0, "position", [1, 2]), r"objects\[1\]\.versions\[0\]: position"),
    (_set("skills", 0, "versions", 0, "weights", [1]), r"skills\[0\]\.versions\[0\]: weights"),
    (_set("skills", 0, "versions", 0, "created_at", "noon"), "created_at: must be a number"),
    (_set("sessions", 0, "events", 1, "kind", "Bad Kind"), r"sessions\[0\]\.events\[1\]: kind"),
    (_set("sessions", 1, "ended_at", True), r"sessions\[1\]: ended_at"),
    (_set(*B0V, 1, "calls", ["gift_bag"]), "'gift_bag' is an object"),
    (_set(*B0V, 1, "calls", ["pack_two"]), "'pack' would call itself"),
]


@pytest.mark.parametrize(("mutation", "field"), MUTATIONS, ids=[field for _, field in MUTATIONS])
def test_import_validates_every_field_all_or_nothing(tmp_path: Path, lib: SkillLibrary,
                                                     mutation: Callable[[dict], None], field: str) -> None:
    teach_gift_bag(lib)
    lib.export_json(tmp_path / "out.json")
    doc = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    mutation(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    with SkillLibrary.open(tmp_path / "fresh.db") as fresh:
        fresh.add_object("existing")
        with pytest.raises(DataError, match=field) as err:
            fresh.import_json(bad)
        assert str(err.value).startswith(f"{bad}:") and "\n" not in str(err.value)
        assert [o.name for o in fresh.objects()] == ["existing"]
        assert fresh.behaviours() == [] and fresh.skills() == [] and fresh.sessions() == []


@pytest.mark.parametrize(("text", "problem"), [
    (b'{"format": "situated-library/1", "format": "x"}', "duplicate key 'format'"),
    (b'{"format": NaN}', "NaN is not a JSON number"),
    (b"\xff\xfe", "not UTF-8"),
    (b'{"format": ', "invalid JSON"),
    (b"[" * 100_000, "nested deeper"),
    (b"[]", r"\(top level\): must be an object"),
])
def test_import_rejects_malformed_json(tmp_path: Path, lib: SkillLibrary, text: bytes, problem: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(text)
    with pytest.raises(DataError, match=problem):
        lib.import_json(bad)


def test_import_conflict_changes_nothing(tmp_path: Path, lib: SkillLibrary) -> None:
    teach_gift_bag(lib)
    lib.export_json(tmp_path / "out.json")
    with SkillLibrary.open(tmp_path / "other.db") as other:
        other.add_behaviour("pack_two", [], "mine", "")
        with pytest.raises(DataError, match="'pack_two' is already in the library"):
            other.import_json(tmp_path / "out.json")
        assert [b.doc for b in other.behaviours()] == ["mine"] and other.objects() == [] and other.sessions() == []


# -- files that are not (healthy, current) libraries ---------------------------------------------------------------


def _foreign(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("PRAGMA application_id = 1234")
    db.execute("CREATE TABLE notes (x)")
    db.commit()
    db.close()


def _unknown_tables(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (x)")
    db.commit()
    db.close()


def _ours_plus_table(path: Path) -> None:
    SkillLibrary.open(path).close()
    _unknown_tables(path)


def _newer(path: Path) -> None:
    SkillLibrary.open(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {schema.schema_version() + 1}")
    db.commit()
    db.close()


def _corrupt(path: Path) -> None:
    with SkillLibrary.open(path) as lib:
        for i in range(40):
            lib.add_behaviour(f"b{i}", ["obj"], "x" * 2000, PACK_BODY)
    data = bytearray(path.read_bytes())
    assert len(data) > 8 * 4096
    data[4096 * 3:4096 * 6] = random.Random(0).randbytes(4096 * 3)
    path.write_bytes(bytes(data))


def _truncated(path: Path) -> None:
    _corrupt(path)
    path.write_bytes(path.read_bytes()[:4096 * 2 + 100])


@pytest.mark.parametrize(("make", "problem"), [
    (lambda p: p.write_bytes(b"just some notes\n" * 20), "not an SQLite database"),
    (lambda p: p.write_bytes(b"SQLite format 3\x00"), "not an SQLite database"),
    (lambda p: p.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 20), "not a usable skill library"),
    (_foreign, "another application"),
    (_unknown_tables, r"not a skill library \(tables: 'notes'\)"),
    (_ours_plus_table, "unexpected table 'notes'"),
    (_newer, "newer than this situated understands"),
    (_corrupt, "corrupt|malformed"),
    (_truncated, "corrupt|malformed"),
], ids=["text", "short", "garbage", "foreign", "unknown-tables", "extra-table", "newer", "corrupt", "truncated"])
def test_refuses_files_that_are_not_libraries(tmp_path: Path, make, problem: str) -> None:
    path = tmp_path / "lib.db"
    make(path)
    before = file_bytes(path)
    with pytest.raises(DataError, match=problem) as err:
        SkillLibrary.open(path)
    message = str(err.value)
    assert message.startswith(f"{path}:") and "\n" not in message and "Traceback" not in message
    assert file_bytes(path) == before
    with pytest.raises(DataError):  # and again: nothing was "repaired" or half-migrated on the first try
        SkillLibrary.open(path)
    assert file_bytes(path) == before


def test_open_paths_that_cannot_be_libraries(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not a regular file"):
        SkillLibrary.open(tmp_path)
    with pytest.raises(DataError, match="no directory"):
        SkillLibrary.open(tmp_path / "missing" / "lib.db")


def test_empty_file_becomes_a_library(tmp_path: Path) -> None:
    path = tmp_path / "lib.db"
    path.write_bytes(b"")  # e.g. left by a process killed while creating it
    with SkillLibrary.open(path) as lib:
        assert lib.integrity() == "ok"


def test_migrations_run_in_one_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "lib.db"
    with SkillLibrary.open(path) as lib:
        lib.add_behaviour("pack", ["obj"], "", PACK_BODY)
    version = schema.schema_version()
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, ("CREATE TABLE extra (x)", "CREATE TABLE (")))
    monkeypatch.setattr(schema, "TABLES", schema.TABLES | {"extra"})
    with pytest.raises(DataError, match="not a usable skill library"):
        SkillLibrary.open(path)
    db = sqlite3.connect(path)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert db.execute("PRAGMA user_version").fetchone()[0] == version and "extra" not in tables
    db.close()
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS[:-1], ("CREATE TABLE extra (x)",)))
    with SkillLibrary.open(path) as lib:
        assert [b.name for b in lib.behaviours()] == ["pack"] and lib.integrity() == "ok"
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == version + 1
    db.close()


def test_integrity_reports_problems(tmp_path: Path) -> None:
    path = tmp_path / "lib.db"
    with SkillLibrary.open(path) as lib:
        lib.add_object("bag")
        assert lib.integrity() == "ok"
    db = sqlite3.connect(path)  # foreign keys are off on this connection
    db.execute("INSERT INTO names (name, kind) VALUES ('ghost', 'behaviour')")
    db.execute("INSERT INTO object_versions (name_id, version, description, source, created_at) "
               "VALUES (999, 1, '', 'scene', 0)")
    db.commit()
    db.close()
    with SkillLibrary.open(path) as lib:
        problems = lib.integrity().splitlines()
    assert "behaviour 'ghost' has no versions" in problems
    assert any(p.startswith("foreign key: object_versions") for p in problems)


# -- processes -----------------------------------------------------------------------------------------------------

CHILD = """
import sys
from situated.sandbox.library import SkillLibrary
lib = SkillLibrary.open(sys.argv[1])
session = lib.start_session("gift_bags", "test")
print("open", flush=True)
i = 0
while True:
    name = f"{sys.argv[2]}{i % 100}"  # re-taught after 100: a library holds at most 256 behaviours
    lib.add_behaviour(name, ["obj"], f"Behaviour {i}.", "pickup(obj)\\ngoto('gift_bag')\\nrelease()", ["pickup"])
    print(name, flush=True)
    version = lib.add_behaviour("pack", ["obj"], f"Version of {name}.", "pickup(obj)")
    print(f"pack {version}", flush=True)
    lib.log(session, "teaching", {"name": name})
    i += 1
    if i == int(sys.argv[3]):
        break
"""


def _child(path: Path, prefix: str, count: int = 0) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.Popen([sys.executable, "-c", CHILD, str(path), prefix, str(count)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


@pytest.mark.parametrize("seed", range(8))
def test_sigkill_at_a_random_moment_loses_nothing_committed(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "lib.db"
    if seed % 2:  # half the runs: the library exists already
        SkillLibrary.open(path).close()
    child = _child(path, "b")
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(line.strip() for line in child.stdout))  # type: ignore[union-attr]
    reader.start()
    rng = random.Random(seed)  # the first runs are killed while starting or creating the file, the rest later
    time.sleep(rng.uniform(0.02, 0.08) if seed < 3 else rng.uniform(0.1, 1.0))
    child.send_signal(signal.SIGKILL)
    child.wait()
    reader.join()
    child.stderr.close()  # type: ignore[union-attr]
    assert child.returncode == -signal.SIGKILL
    reported = [line for line in lines if line.startswith("b")]
    packs = [int(line.split()[1]) for line in lines if line.startswith("pack ")]
    with SkillLibrary.open(path) as lib:
        assert lib.integrity() == "ok"
        names = {b.name for b in lib.behaviours()}
        assert set(reported) <= names
        assert len(lib.versions("pack")) >= max(packs, default=0)
    print(f"seed {seed}: killed after {len(reported)} reported commits")  # shown with -s


def test_two_processes_write_one_library(tmp_path: Path) -> None:
    path = tmp_path / "lib.db"
    children = [_child(path, prefix, 25) for prefix in ("a", "b")]  # both create the file at once
    for child in children:
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
    with SkillLibrary.open(path) as lib:
        names = {b.name for b in lib.behaviours()}
        assert {f"a{i}" for i in range(25)} | {f"b{i}" for i in range(25)} | {"pack"} == names
        assert len(lib.versions("pack")) == 50
        assert [len(lib.events(s.id)) for s in lib.sessions()] == [25, 25]
        assert lib.integrity() == "ok"

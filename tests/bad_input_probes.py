"""Probes of `situated`'s promises under bad input, through the real command line of a given source tree.

Each probe writes a small hostile input (or a hostile OpenAI-compatible server on 127.0.0.1 answers), runs
`python -m situated ...` from `--src` in a subprocess with a time limit, and checks what a user would notice:

- the exit code: 2 for bad input, 130 for Ctrl-C ("aborted"), 0 where the input is fine after all;
- for exit 2, stderr is one line starting with `error:` that names the file, line or field given by the probe;
- no "Traceback", no hang (a probe that outlives its limit is killed and reported as a hang);
- no input changed (a hash of every input file before and after), and the probe's own extra checks.

One probe per defect class of the issue "Hold every promise under bad input" (see docs/robustness.md, "Probes:
before and after"). `tests/cli/test_bad_input.py` runs the same probes against this tree; this script prints a
table for any tree, e.g. the old main checked out elsewhere:

    .venv/bin/python tests/bad_input_probes.py --src ../base/src       # before
    .venv/bin/python tests/bad_input_probes.py                         # after (this tree)

Prints one row per probe (class, exit code, seconds, first stderr line, problems) and, as its last line, JSON:
{"src", "probes", "kept", "broken": [names]}.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.server
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_LIMIT = 30.0
"""Seconds a probe may run before it counts as a hang (an honest run takes 1-5 s)."""


# ------------------------------------------------------------------------------------------------- outcomes

@dataclass
class Call:
    """One command line to run and what it must do: exit `expect`; for exit 2, name each of `names` in its one
    error line; leave `inputs` unchanged; pass `check` (problems found after the run, as strings)."""

    args: list[str]
    expect: int = 2
    names: tuple[str, ...] = ()
    inputs: list[Path] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    limit: float = DEFAULT_LIMIT
    interrupt_when: Callable[[], bool] | None = None
    finished_when: Callable[[], bool] | None = None  # the work was all done (an interrupt then came too late)
    check: Callable[[Outcome], list[str]] | None = None
    cleanup: Callable[[], None] | None = None
    stdout: str | None = None  # a file to send stdout to (else it is captured)


INTERRUPTIBLE = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
                 "sys.argv[0] = 'situated'; runpy.run_module('situated', run_name='__main__', alter_sys=True)")
"""`python -m situated` with Ctrl-C handled as in a terminal: a probe started from a background job inherits
SIGINT ignored (POSIX shells ignore it in asynchronous commands), and Python then never raises KeyboardInterrupt;
the interrupt probes must not depend on how the prober itself was started."""


def situated_command(*args: str) -> list[str]:
    """The command line of the CLI under test, interruptible with SIGINT whatever the prober inherited."""
    return [sys.executable, "-c", INTERRUPTIBLE, *args]


@dataclass
class Outcome:
    """What one probe did: exit code (None: killed as a hang), output, seconds and the broken promises."""

    probe: str
    kind: str
    code: int | None
    stdout: str
    stderr: str
    seconds: float
    problems: list[str] = field(default_factory=list)

    @property
    def first_line(self) -> str:
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return lines[0] if lines else ""


@dataclass(frozen=True)
class Probe:
    """A defect class (`kind`) and one concrete attack on it (`name`); `prepare` writes the inputs into a fresh
    folder and returns the call to make."""

    name: str
    kind: str
    prepare: Callable[[Kit], Call]


# ------------------------------------------------------------------------------------------------- running

class Kit:
    """What a probe prepares its inputs with: its own folder, the tree under test, sample inputs, the server."""

    def __init__(self, folder: Path, src: Path, server: FakeServer) -> None:
        self.folder = folder
        self.src = src
        self.server = server
        self.examples = src.parent / "examples"

    def env(self, **extra: str) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if not k.startswith(("SITUATED_", "OPENAI_"))}
        return {**keep, "PYTHONPATH": str(self.src), "COLUMNS": "200", "NO_COLOR": "1", **extra}

    def cli(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run the command line synchronously (to prepare inputs, e.g. a results store)."""
        return subprocess.run([sys.executable, "-m", "situated", *args], cwd=self.folder, env=self.env(**(env or {})),
                              capture_output=True, text=True, timeout=120, check=False)

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(situated_command(*args), cwd=self.folder, env=self.env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)

    def path(self, name: str) -> Path:
        return self.folder / name

    def write(self, name: str, data: str | bytes) -> Path:
        path = self.folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
        return path

    def scene(self, name: str = "scene.json", change: Callable[[dict], None] | None = None) -> Path:
        """The example apartment as a scene file, optionally changed first."""
        graph = json.loads((self.examples / "scenes" / "apartment.json").read_text(encoding="utf-8"))
        if change is not None:
            change(graph)
        return self.write(name, json.dumps(graph))

    def plan(self, name: str = "plan.py") -> Path:
        return self.write(name, (self.examples / "plans" / "microwave_salmon.py").read_text(encoding="utf-8"))

    def streets(self, name: str = "map2seq_unseen", *, instances: int = 3, nodes: str | None = None,
                links: str | None = None, lines: Sequence[str] | None = None) -> Path:
        """A small street dataset in the VELMA layout (a street running north with a side street and a spur)."""
        folder = self.folder / name
        (folder / "graph").mkdir(parents=True, exist_ok=True)
        (folder / "data").mkdir(exist_ok=True)
        (folder / "graph" / "nodes.txt").write_text(nodes if nodes is not None else STREET_NODES)
        (folder / "graph" / "links.txt").write_text(links if links is not None else STREET_LINKS)
        if lines is None:
            routes = (["A", "B", "C", "D"], ["A", "B", "W"], ["A", "B", "C", "K"])
            lines = [json.dumps({"id": k + 1, "route_panoids": routes[k % 3], "navigation_text": "Go.",
                                 "start_heading": 0}) for k in range(instances)]
        (folder / "data" / "dev.json").write_text("".join(line + "\n" for line in lines))
        return folder

    def url(self, mode: str) -> str:
        return f"http://127.0.0.1:{self.server.port}/{mode}/v1"


STREET_NODES = "A,0,40.0000,-74.0,unseen\nB,0,40.0001,-74.0,unseen\nC,0,40.0002,-74.0,unseen\n" \
               "D,0,40.0003,-74.0,unseen\nE,0,40.0004,-74.0,unseen\nW,90,40.0001,-74.0001,unseen\n" \
               "K,90,40.0002,-73.9999,unseen\n"
STREET_LINKS = "A,0,B\nB,180,A\nB,0,C\nB,270,W\nW,90,B\nC,180,B\nC,0,D\nC,90,K\nK,270,C\nD,180,C\nD,0,E\nE,180,D\n"


def _digest(path: Path) -> str | None:
    try:
        if path.is_dir():
            return "dir:" + ",".join(sorted(p.name for p in path.iterdir()))
        if not path.is_file():
            return "special"
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


INTERRUPT_TRIES = 3
"""An interrupt probe whose command finished before the interrupt could be sent (a starved probe thread on a
loaded machine) is prepared and run again, at most this many times in all."""


def run_probe(probe: Probe, src: Path, folder: Path, server: FakeServer) -> Outcome:
    """Prepare, run and judge one probe in `folder` (created empty) against the tree `src`."""
    for attempt in range(INTERRUPT_TRIES):
        outcome, interrupted = _run_once(probe, src, folder / f"try{attempt}" if attempt else folder, server)
        if interrupted is not False:
            break
    if interrupted is False:
        outcome.problems.append(f"the command finished before it could be interrupted ({INTERRUPT_TRIES} tries)")
    return outcome


def _run_once(probe: Probe, src: Path, folder: Path, server: FakeServer) -> tuple[Outcome, bool | None]:
    """One try of `run_probe`; the second value says whether the interrupt was sent (None: no interrupt)."""
    folder.mkdir(parents=True, exist_ok=True)
    kit = Kit(folder, src, server)
    try:
        call = probe.prepare(kit)
    except Exception as exc:  # the tree under test could not even prepare the inputs (an old tree)
        return Outcome(probe.name, probe.kind, None, "", "", 0.0, [f"could not prepare: {exc!r}"[:300]]), None
    before = {p: _digest(p) for p in call.inputs}
    start = time.monotonic()
    sink = open(call.stdout, "w") if call.stdout else None  # noqa: SIM115 - closed below
    process = subprocess.Popen(situated_command(*call.args), cwd=folder, env=kit.env(**call.env),
                               stdout=sink or subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               text=True, errors="replace")
    interrupted: bool | None = None
    try:
        if call.interrupt_when is not None:
            while process.poll() is None and not call.interrupt_when():
                if time.monotonic() - start > call.limit:
                    break
                time.sleep(0.02)
            interrupted = process.poll() is None and not (call.finished_when and call.finished_when())
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        try:
            stdout, stderr = process.communicate(timeout=max(1.0, call.limit - (time.monotonic() - start)))
            code: int | None = process.returncode
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            code = None
    finally:
        if sink is not None:
            sink.close()
        if call.cleanup is not None:
            call.cleanup()
    outcome = Outcome(probe.name, probe.kind, code, stdout or "", stderr, time.monotonic() - start)
    outcome.problems = _judge(call, outcome, before)
    return outcome, interrupted


def _names(err: str, name: str) -> bool:
    """Whether the error line names `name` (a line `line N` may also be written `FILE:N:`)."""
    return name in err or (name.startswith("line ") and f":{name.removeprefix('line ')}:" in err)


def _judge(call: Call, outcome: Outcome, before: dict[Path, str | None]) -> list[str]:
    problems: list[str] = []
    err = outcome.stderr.strip()
    if outcome.code is None:
        problems.append(f"no result within {call.limit:.0f} s (a hang)")
    elif outcome.code != call.expect:
        problems.append(f"exit {outcome.code}, expected {call.expect}")
    if "Traceback" in outcome.stderr:
        problems.append("a traceback")
    if call.expect == 2 and outcome.code == 2:
        if len(err.splitlines()) != 1 or not err.startswith("error: "):
            problems.append(f"stderr is not one line starting with 'error: ' ({len(err.splitlines())} lines)")
        problems += [f"the error does not name {name!r}" for name in call.names if not _names(err, name)]
    if call.expect == 130 and not err.endswith("aborted"):
        problems.append("stderr does not end with 'aborted'")
    for path, digest in before.items():
        if _digest(path) != digest:
            problems.append(f"input {path.name} was changed")
    if call.check is not None and outcome.code is not None:
        try:
            problems += call.check(outcome)
        except Exception as exc:  # the files the check reads are not as this tree writes them
            problems.append(f"check failed: {exc!r}"[:200])
    return problems


# ------------------------------------------------------------------------------------------------- server

class FakeServer:
    """An OpenAI-compatible server on 127.0.0.1 whose answer depends on the first path segment (the mode):
    `plan` a short valid plan body, `bad56k` the same, `huge` a 200 MB body, `drip` one byte every 0.2 s,
    `types` wrongly typed fields. Tokenizer routes answer 404 at once."""

    def __init__(self) -> None:
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


PLAN_BODY = "\tfind('salmon')\n\tgrab('salmon')\n"
BAD_LINE = "\tgrab(\n"


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0") or 0)
        self.rfile.read(length)
        mode = self.path.strip("/").split("/")[0]
        if "tokenize" in self.path:
            self._send(404, b'{"error": "no tokenizer"}')
        elif mode == "huge":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            with contextlib.suppress(OSError):
                self.wfile.write(b'{"choices": [{"text": "')
                chunk = b"x" * (1 << 20)
                for _ in range(200):
                    self.wfile.write(chunk)
            self.close_connection = True
        elif mode == "drip":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            with contextlib.suppress(OSError):
                for _ in range(600):  # at most 2 minutes
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.2)
            self.close_connection = True
        elif mode == "types":
            self._send(200, json.dumps({"choices": [{"text": 5, "finish_reason": "stop"}],
                                        "usage": {"prompt_tokens": "many"}}).encode())
        else:
            self._send(200, json.dumps({"choices": [{"text": PLAN_BODY, "finish_reason": "stop"}],
                                        "usage": {"prompt_tokens": 10, "completion_tokens": 5,
                                                  "total_tokens": 15}}).encode())

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(body)


# ------------------------------------------------------------------------------------------------- probes

def _plan_args(kit: Kit, task: str, scene: Path, mode: str, *extra: str) -> list[str]:
    return ["plan", task, "--scene", str(scene), "--model", "openai:probe", "--base-url", kit.url(mode),
            "--examples-file", str(kit.examples / "plans"), *extra]


def _results_file(out: Path) -> Path | None:
    """The episodes file a run wrote under `out` (`<store>/episodes.jsonl`; older trees: `<store>.jsonl`)."""
    found = sorted(out.rglob("*.jsonl")) if out.is_dir() else []
    return found[0] if found else None


def _episodes(out: Path) -> list[str]:
    path = _results_file(out)
    return path.read_text(encoding="utf-8", errors="replace").split("\n") if path else []


def _task_of(line: str) -> str:
    """The task id of a results line (`task`; older trees wrote `id`)."""
    record = json.loads(line)
    return str(record.get("task", record.get("id")))


def _lines_of(out: Path) -> Callable[[], int]:
    def count() -> int:
        path = _results_file(out)
        try:
            return path.read_bytes().count(b"\n") if path else 0
        except OSError:
            return 0
    return count


# --- Ctrl-C and the results store

def ctrl_c(kit: Kit) -> Call:
    data = kit.streets(instances=1500)
    out = kit.path("out")
    count = _lines_of(out)

    def check(outcome: Outcome) -> list[str]:
        again = kit.cli("navigate", "--data", str(data), "--agent", "gold", "--out", str(out))
        lines = [line for line in _episodes(out) if line.strip()]
        ids = {_task_of(line) for line in lines}
        problems = [] if again.returncode == 0 else [f"resuming after Ctrl-C: exit {again.returncode}"]
        if len(lines) != 1500 or len(ids) != 1500:
            problems.append(f"after resuming: {len(lines)} lines, {len(ids)} episodes of 1500")
        return problems

    return Call(["navigate", "--data", str(data), "--agent", "gold", "--out", str(out)], expect=130,
                interrupt_when=lambda: count() >= 5, finished_when=lambda: count() >= 1500, check=check, limit=60)


def _store(kit: Kit) -> tuple[Path, Path, Path]:
    data = kit.streets()
    out = kit.path("out")
    done = kit.cli("navigate", "--data", str(data), "--agent", "gold", "--out", str(out), "--limit", "2")
    if done.returncode != 0:
        raise RuntimeError(f"preparing the store failed: {done.stderr.strip()[-200:]}")
    episodes = _results_file(out)
    if episodes is None:
        raise RuntimeError("the run wrote no episodes file")
    return data, out, episodes


def store_record_without_newline(kit: Kit) -> Call:
    data, out, episodes = _store(kit)
    episodes.write_bytes(episodes.read_bytes().rstrip(b"\n"))  # killed before its newline reached the disk

    def check(outcome: Outcome) -> list[str]:
        text = episodes.read_text(encoding="utf-8")
        tasks = [_task_of(line) for line in text.splitlines()]
        ok = sorted(tasks) == ["1", "2", "3"] and text.endswith("\n")
        return [] if ok else [f"episodes afterwards: {tasks} (expected 1, 2, 3, each once, on its own line)"]

    return Call(["navigate", "--data", str(data), "--agent", "gold", "--out", str(out)], expect=0, check=check,
                inputs=[data / "data" / "dev.json"])


def store_invalid_last_line(kit: Kit) -> Call:
    data, out, episodes = _store(kit)
    with episodes.open("a", encoding="utf-8") as handle:
        handle.write('{"task": "3", "run": 0, "metrics": {\n')
    return Call(["navigate", "--data", str(data), "--agent", "gold", "--out", str(out)],
                names=(episodes.name, "line 3"), inputs=[episodes])


def store_wrong_field_type(kit: Kit) -> Call:
    data, out, episodes = _store(kit)
    lines = episodes.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["run"] = [0]
    episodes.write_text(lines[0] + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    return Call(["navigate", "--data", str(data), "--agent", "gold", "--out", str(out)],
                names=(episodes.name, "line 2", "run"), inputs=[episodes])


def store_deep_record(kit: Kit) -> Call:
    data, out, episodes = _store(kit)
    episodes.write_text(episodes.read_text(encoding="utf-8") + "[" * 50_000 + "]" * 50_000 + "\n")
    return Call(["navigate", "--data", str(data), "--agent", "gold", "--out", str(out)],
                names=(episodes.name, "line 3"), inputs=[episodes])


def store_two_writers(kit: Kit) -> Call:
    data = kit.streets(instances=5000)
    out = kit.path("out")
    first = kit.start("navigate", "--data", str(data), "--agent", "gold", "--out", str(out))
    count = _lines_of(out)
    deadline = time.monotonic() + 60
    while count() < 2 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if first.poll() is not None:
        raise RuntimeError("the first writer ended before the second could start")
    first.send_signal(signal.SIGSTOP)  # it holds the store while stopped: the second writer meets it, however slow

    def stop() -> None:
        first.send_signal(signal.SIGCONT)
        first.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            first.wait(timeout=30)
        if first.poll() is None:
            first.kill()

    return Call(["navigate", "--data", str(data), "--agent", "gold", "--out", str(out)],
                names=("another evaluation",), cleanup=stop)


def store_other_data(kit: Kit) -> Call:
    data, out, episodes = _store(kit)
    other = kit.path("copy") / data.name
    shutil.copytree(data, other)
    return Call(["navigate", "--data", str(other), "--agent", "gold", "--out", str(out)],
                names=("data",), inputs=[episodes])


# --- model output and servers

def quadratic_repair(kit: Kit) -> Call:
    scene = kit.scene()
    cassette = kit.path("bad56k.jsonl")
    recorded = kit.cli(*_plan_args(kit, "microwave salmon", scene, "plan", "--cassette", str(cassette),
                                   "--cassette-mode", "record"))
    if not cassette.exists():
        raise RuntimeError(f"recording failed: {recorded.stderr.strip()[-200:]}")
    bad = BAD_LINE * (56_000 // len(BAD_LINE))
    entries = [json.loads(line) for line in cassette.read_text(encoding="utf-8").splitlines() if line.strip()]
    for entry in entries:
        if isinstance(entry.get("response"), dict) and "text" in entry["response"]:
            entry["response"]["text"] = bad
    cassette.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return Call(_plan_args(kit, "microwave salmon", scene, "plan", "--cassette", str(cassette),
                           "--cassette-mode", "auto"), expect=0, inputs=[scene], limit=60)


def openai_huge_body(kit: Kit) -> Call:
    return Call(_plan_args(kit, "microwave salmon", kit.scene(), "huge"), names=("larger than",),
                env={"SITUATED_OPENAI_RETRIES": "0"})


def openai_dripping(kit: Kit) -> Call:
    return Call(_plan_args(kit, "microwave salmon", kit.scene(), "drip"), names=("timed out",),
                env={"SITUATED_OPENAI_TIMEOUT": "2", "SITUATED_OPENAI_RETRIES": "0"})


def openai_wrong_types(kit: Kit) -> Call:
    return Call(_plan_args(kit, "microwave salmon", kit.scene(), "types"), names=("field",),
                env={"SITUATED_OPENAI_RETRIES": "0"})


def keyword_task_name(kit: Kit) -> Call:
    return Call(_plan_args(kit, "class", kit.scene(), "plan"), expect=0)


# --- hostile file content

def deep_scene(kit: Kit) -> Call:
    scene = kit.write("deep.json", "[" * 100_000 + "]" * 100_000)
    return Call(["run", str(kit.plan()), "--scene", str(scene)], names=("deep.json",), inputs=[scene])


def deep_instance(kit: Kit) -> Call:
    data = kit.streets(lines=['{"id": 1, "route_panoids": ' + "[" * 50_000 + "]" * 50_000 + "}"])
    return Call(["navigate", "--data", str(data)], names=("dev.json", "line 1"))


def non_utf8_scene(kit: Kit) -> Call:
    scene = kit.write("latin1.json", '{"nodes": [{"id": 1, "class_name": "caf\xe9"}], "edges": []}'.encode("latin-1"))
    return Call(["run", str(kit.plan()), "--scene", str(scene)], names=("latin1.json", "line 1"), inputs=[scene])


def non_utf8_streets(kit: Kit) -> Call:
    data = kit.streets(nodes=STREET_NODES)
    (data / "graph" / "nodes.txt").write_bytes(STREET_NODES.encode() + b"Z\xff,0,40.0,-74.0,unseen\n")
    return Call(["navigate", "--data", str(data)], names=("nodes.txt", "line 8"))


def non_utf8_cassette(kit: Kit) -> Call:
    cassette = kit.write("cassette.jsonl", b'{"key": "\xff"}\n')
    return Call(_plan_args(kit, "microwave salmon", kit.scene(), "plan", "--cassette", str(cassette),
                           "--cassette-mode", "replay"), names=("cassette.jsonl", "line 1"), inputs=[cassette])


def typed_node_states(kit: Kit) -> Call:
    def change(graph: dict) -> None:
        graph["nodes"][5]["states"] = [1, 2]
    scene = kit.scene(change=change)
    return Call(["run", str(kit.plan()), "--scene", str(scene)], names=("scene.json", "nodes[5].states"),
                inputs=[scene])


def typed_node_properties(kit: Kit) -> Call:
    def change(graph: dict) -> None:
        graph["nodes"][7]["properties"] = "GRABBABLE"
    scene = kit.scene(change=change)
    return Call(["run", str(kit.plan()), "--scene", str(scene)], names=("scene.json", "nodes[7].properties"),
                inputs=[scene])


def typed_list_id(kit: Kit) -> Call:
    def change(graph: dict) -> None:
        graph["edges"][3]["from_id"] = [graph["edges"][3]["from_id"]]
    scene = kit.scene(change=change)
    return Call(["run", str(kit.plan()), "--scene", str(scene)], names=("scene.json", "edges[3]"), inputs=[scene])


def duplicate_node_id(kit: Kit) -> Call:
    def change(graph: dict) -> None:
        salmon = next(n for n in graph["nodes"] if n["class_name"] == "salmon")
        microwave = next(n for n in graph["nodes"] if n["class_name"] == "microwave")
        graph["nodes"].append({**microwave, "id": salmon["id"]})
    scene = kit.scene(change=change)
    return Call(["run", str(kit.plan()), "--scene", str(scene)], names=("scene.json", "duplicate"), inputs=[scene])


def no_character(kit: Kit) -> Call:
    def change(graph: dict) -> None:
        gone = {n["id"] for n in graph["nodes"] if n["class_name"] == "character"}
        graph["nodes"] = [n for n in graph["nodes"] if n["id"] not in gone]
        graph["edges"] = [e for e in graph["edges"] if e["from_id"] not in gone and e["to_id"] not in gone]
    scene = kit.scene(change=change)
    return Call(["run", str(kit.plan()), "--scene", str(scene)], names=("scene.json", "character"), inputs=[scene])


def typed_cassette_field(kit: Kit) -> Call:
    record = {"key": "k", "request": {"call": "complete"},
              "response": {"text": 5, "finish_reason": "stop", "prompt_tokens": 1, "completion_tokens": 1}}
    cassette = kit.write("cassette.jsonl", json.dumps(record) + "\n")
    return Call(_plan_args(kit, "microwave salmon", kit.scene(), "plan", "--cassette", str(cassette),
                           "--cassette-mode", "replay"), names=("cassette.jsonl", "line 1", "response.text"),
                inputs=[cassette])


def typed_instance_route(kit: Kit) -> Call:
    data = kit.streets(lines=[json.dumps({"id": 1, "route_panoids": "ABC", "navigation_text": "Go.",
                                          "start_heading": 0})])
    return Call(["navigate", "--data", str(data)], names=("dev.json", "line 1", "route_panoids"))


def nan_in_nodes(kit: Kit) -> Call:
    data = kit.streets(nodes=STREET_NODES.replace("B,0,40.0001", "B,nan,40.0001"))
    return Call(["navigate", "--data", str(data)], names=("nodes.txt", "line 2", "yaw"))


def inf_in_links(kit: Kit) -> Call:
    data = kit.streets(links=STREET_LINKS.replace("B,180,A", "B,inf,A"))
    return Call(["navigate", "--data", str(data)], names=("links.txt", "line 2", "heading"))


def huge_number_in_nodes(kit: Kit) -> Call:
    data = kit.streets(nodes=STREET_NODES.replace("40.0002,-74.0", "4" * 4400 + ",-74.0"))
    return Call(["navigate", "--data", str(data)], names=("nodes.txt", "line 3", "lat"))


def huge_number_in_instance(kit: Kit) -> Call:
    data = kit.streets(lines=['{"id": ' + "7" * 4400 + ', "route_panoids": ["A", "B"], "navigation_text": "x", '
                              '"start_heading": 0}'])
    return Call(["navigate", "--data", str(data)], names=("dev.json", "line 1"))


def nan_heading(kit: Kit) -> Call:
    data = kit.streets(lines=['{"id": 1, "route_panoids": ["A", "B"], "navigation_text": "x", "start_heading": NaN}'])
    return Call(["navigate", "--data", str(data)], names=("dev.json", "line 1"))


def nan_heading_text(kit: Kit) -> Call:
    data = kit.streets(lines=['{"id": 1, "route_panoids": ["A", "B"], "navigation_text": "x", "start_heading": "nan"}'])
    return Call(["navigate", "--data", str(data)], names=("dev.json", "line 1", "start_heading"))


def empty_split(kit: Kit) -> Call:
    data = kit.streets(lines=[])
    return Call(["navigate", "--data", str(data)], names=("dev.json", "no instances"))


# --- inputs that are not regular files

def dev_zero_scene(kit: Kit) -> Call:
    return Call(["run", str(kit.plan()), "--scene", "/dev/zero"], names=("/dev/zero",), limit=20)


def dev_zero_plan(kit: Kit) -> Call:
    return Call(["run", "/dev/zero", "--scene", str(kit.scene())], names=("/dev/zero",), limit=20)


def fifo_scene(kit: Kit) -> Call:
    fifo = kit.path("scene.fifo")
    os.mkfifo(fifo)
    return Call(["run", str(kit.plan()), "--scene", str(fifo)], names=("scene.fifo",), limit=20)


def fifo_plan(kit: Kit) -> Call:
    fifo = kit.path("plan.fifo")
    os.mkfifo(fifo)
    return Call(["run", str(fifo), "--scene", str(kit.scene())], names=("plan.fifo",), limit=20)


def fifo_nodes(kit: Kit) -> Call:
    data = kit.streets()
    (data / "graph" / "nodes.txt").unlink()
    os.mkfifo(data / "graph" / "nodes.txt")
    return Call(["navigate", "--data", str(data)], names=("nodes.txt",), limit=20)


# --- outputs

def trace_is_plan(kit: Kit) -> Call:
    plan, scene = kit.plan(), kit.scene()
    return Call(["run", str(plan), "--scene", str(scene), "--trace", str(plan), "--force"], names=("plan.py",),
                inputs=[plan, scene])


def trace_is_scene(kit: Kit) -> Call:
    plan, scene = kit.plan(), kit.scene()
    return Call(["run", str(plan), "--scene", str(scene), "--trace", str(scene), "--force"], names=("scene.json",),
                inputs=[plan, scene])


def cassette_is_scene(kit: Kit) -> Call:
    scene = kit.scene()
    return Call(_plan_args(kit, "microwave salmon", scene, "plan", "--cassette", str(scene), "--cassette-mode",
                           "record"), names=("scene.json",), inputs=[scene])


def trace_is_directory(kit: Kit) -> Call:
    folder = kit.path("traces")
    folder.mkdir()
    return Call(["run", str(kit.plan()), "--scene", str(kit.scene()), "--trace", str(folder)], names=("traces",))


def trace_dev_full(kit: Kit) -> Call:
    return Call(["run", str(kit.plan()), "--scene", str(kit.scene()), "--trace", "/dev/full"], names=("/dev/full",))


def stdout_dev_full(kit: Kit) -> Call:
    return Call(["run", str(kit.plan()), "--scene", str(kit.scene())], names=("No space left",), stdout="/dev/full")


def trace_exists(kit: Kit) -> Call:
    old = kit.write("old-trace.jsonl", "{}\n")
    return Call(["run", str(kit.plan()), "--scene", str(kit.scene()), "--trace", str(old)],
                names=("old-trace.jsonl", "--force"), inputs=[old])


def trace_missing_folder(kit: Kit) -> Call:
    target = kit.path("new/folder/trace.jsonl")

    def check(outcome: Outcome) -> list[str]:
        return [] if target.is_file() and target.stat().st_size > 0 else ["the trace was not written"]

    return Call(["run", str(kit.plan()), "--scene", str(kit.scene()), "--trace", str(target)], expect=0,
                check=check)


def cassette_directory(kit: Kit) -> Call:
    folder = kit.path("tapes")
    folder.mkdir()
    return Call(_plan_args(kit, "microwave salmon", kit.scene(), "plan", "--cassette", str(folder),
                           "--cassette-mode", "record"), names=("tapes",))


def figure_directory(kit: Kit) -> Call:
    data = kit.streets()
    folder = kit.path("figure.png")
    folder.mkdir()
    return Call(["navigate", "show", "1", "--data", str(data), "--out", str(folder)], names=("figure.png",))


def figure_without_suffix(kit: Kit) -> Call:
    data = kit.streets()

    def check(outcome: Outcome) -> list[str]:
        written = [p.name for p in kit.folder.iterdir() if p.name.startswith("route")]
        told = outcome.stdout.split("wrote", 1)[-1].strip() if "wrote" in outcome.stdout else ""
        if not told or not (kit.folder / told).is_file():  # an absolute path replaces the folder
            return [f"says it wrote {told!r}; the folder holds {written}"]
        return []

    return Call(["navigate", "show", "1", "--data", str(data), "--out", "route"], expect=0, check=check)


def step_cap_negative(kit: Kit) -> Call:
    return Call(["run", str(kit.plan()), "--scene", str(kit.scene()), "--step-cap", "-1"], names=("--step-cap",))


def replan_negative(kit: Kit) -> Call:
    return Call(_plan_args(kit, "microwave salmon", kit.scene(), "plan", "--replan", "-2"), names=("--replan",))


def limit_zero(kit: Kit) -> Call:
    return Call(["navigate", "--data", str(kit.streets()), "--limit", "0"], names=("--limit",))


PROBES: tuple[Probe, ...] = (
    Probe("ctrl-c", "Ctrl-C exit code", ctrl_c),
    Probe("store-no-newline", "results file damaged", store_record_without_newline),
    Probe("store-invalid-line", "results file damaged", store_invalid_last_line),
    Probe("store-typed-field", "results file damaged", store_wrong_field_type),
    Probe("store-deep-record", "results file damaged", store_deep_record),
    Probe("store-two-writers", "results file damaged", store_two_writers),
    Probe("store-other-data", "results file damaged", store_other_data),
    Probe("quadratic-repair", "quadratic repair", quadratic_repair),
    Probe("openai-huge-body", "OpenAI responses", openai_huge_body),
    Probe("openai-dripping", "OpenAI responses", openai_dripping),
    Probe("openai-wrong-types", "OpenAI responses", openai_wrong_types),
    Probe("deep-scene", "deeply nested JSON", deep_scene),
    Probe("deep-instance", "deeply nested JSON", deep_instance),
    Probe("non-utf8-scene", "non-UTF-8 input", non_utf8_scene),
    Probe("non-utf8-streets", "non-UTF-8 input", non_utf8_streets),
    Probe("non-utf8-cassette", "non-UTF-8 input", non_utf8_cassette),
    Probe("typed-node-states", "wrongly typed fields", typed_node_states),
    Probe("typed-node-properties", "wrongly typed fields", typed_node_properties),
    Probe("typed-list-id", "wrongly typed fields", typed_list_id),
    Probe("typed-cassette-field", "wrongly typed fields", typed_cassette_field),
    Probe("typed-instance-route", "wrongly typed fields", typed_instance_route),
    Probe("nan-in-nodes", "NaN/inf/huge numbers", nan_in_nodes),
    Probe("inf-in-links", "NaN/inf/huge numbers", inf_in_links),
    Probe("huge-number-nodes", "NaN/inf/huge numbers", huge_number_in_nodes),
    Probe("huge-number-instance", "NaN/inf/huge numbers", huge_number_in_instance),
    Probe("nan-heading", "NaN headings", nan_heading),
    Probe("nan-heading-text", "NaN headings", nan_heading_text),
    Probe("empty-split", "empty split", empty_split),
    Probe("dev-zero-scene", "/dev/zero and FIFO inputs", dev_zero_scene),
    Probe("dev-zero-plan", "/dev/zero and FIFO inputs", dev_zero_plan),
    Probe("fifo-scene", "/dev/zero and FIFO inputs", fifo_scene),
    Probe("fifo-plan", "/dev/zero and FIFO inputs", fifo_plan),
    Probe("fifo-nodes", "/dev/zero and FIFO inputs", fifo_nodes),
    Probe("trace-is-plan", "output equal to an input", trace_is_plan),
    Probe("trace-is-scene", "output equal to an input", trace_is_scene),
    Probe("cassette-is-scene", "output equal to an input", cassette_is_scene),
    Probe("trace-directory", "output paths", trace_is_directory),
    Probe("trace-dev-full", "output paths", trace_dev_full),
    Probe("stdout-dev-full", "output paths", stdout_dev_full),
    Probe("trace-exists", "output paths", trace_exists),
    Probe("trace-missing-folder", "output paths", trace_missing_folder),
    Probe("cassette-directory", "output paths", cassette_directory),
    Probe("figure-directory", "output paths", figure_directory),
    Probe("figure-no-suffix", "navigate show --out NAME", figure_without_suffix),
    Probe("duplicate-node-id", "duplicate node id", duplicate_node_id),
    Probe("no-character", "errors name their file", no_character),
    Probe("keyword-task", "keyword task names", keyword_task_name),
    Probe("step-cap-negative", "count options", step_cap_negative),
    Probe("replan-negative", "count options", replan_negative),
    Probe("limit-zero", "count options", limit_zero),
)


@contextlib.contextmanager
def probing() -> Iterator[FakeServer]:
    """The fake server the probes share, running while the block runs."""
    with FakeServer() as server:
        yield server


def run_all(src: Path, folder: Path, probes: Sequence[Probe] = PROBES, jobs: int = 4) -> list[Outcome]:
    """Every probe against `src`, `jobs` at a time, each in its own subfolder of `folder`."""
    with probing() as server, ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_probe, p, src, folder / p.name, server) for p in probes]
        return [f.result() for f in futures]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="source tree to probe (default: this one)")
    parser.add_argument("--only", nargs="*", help="probe names to run (default: all)")
    parser.add_argument("--jobs", type=int, default=4, help="probes run at once")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args(argv)
    chosen = [p for p in PROBES if not args.only or p.name in args.only]
    import tempfile

    with tempfile.TemporaryDirectory(prefix="situated-probes-") as folder:
        outcomes = run_all(args.src.resolve(), Path(folder), chosen, args.jobs)
    for o in outcomes:
        code = "-" if o.code is None and o.seconds == 0 else "hang" if o.code is None else str(o.code)
        verdict = "kept" if not o.problems else "; ".join(o.problems)
        first = o.first_line.replace(folder, "…")[:110]
        if args.markdown:
            print(f"| {o.kind} | `{o.probe}` | {code} | {o.seconds:.1f} | `{first}` | {verdict} |")
        else:
            print(f"{o.kind:28} {o.probe:22} {code:>4} {o.seconds:5.1f}s  {first}  [{verdict}]")
    broken = [o.probe for o in outcomes if o.problems]
    print(json.dumps({"src": str(args.src), "probes": len(outcomes), "kept": len(outcomes) - len(broken),
                      "broken": broken}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

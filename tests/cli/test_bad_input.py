"""Bad input through the real command line: one subprocess per defect class of the issue "Hold every promise
under bad input" — exit 2 with one `error:` line naming the file or field (130 and "aborted" for Ctrl-C), no
traceback, no hang, no input changed.

The probes (inputs, command lines, expectations) are those of `tests/bad_input_probes.py`, which prints
the same table for any source tree (the before/after table of docs/robustness.md); here they run against this
tree, four at a time, sharing one hostile OpenAI-compatible server on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

import bad_input_probes as probes
from fakes import ROOT

# One probe per defect class (sub-cases the issue names separately count as classes); the script runs the
# rest of its probes too (more files and fields of the same classes).
TESTED = (
    "ctrl-c",
    "store-no-newline", "store-invalid-line", "store-typed-field", "store-two-writers", "store-other-data",
    "quadratic-repair",
    "openai-huge-body", "openai-dripping", "openai-wrong-types",
    "deep-scene",
    "non-utf8-scene", "non-utf8-streets", "non-utf8-cassette",
    "typed-node-states", "typed-list-id", "typed-cassette-field",
    "nan-in-nodes", "huge-number-instance",
    "trace-directory", "trace-missing-folder", "trace-dev-full", "stdout-dev-full", "trace-exists",
    "cassette-directory", "figure-directory",
    "dev-zero-scene", "fifo-plan",
    "trace-is-plan", "trace-is-scene", "cassette-is-scene",
    "duplicate-node-id", "no-character",
    "figure-no-suffix",
    "keyword-task",
    "step-cap-negative",
    "nan-heading",
    "empty-split",
)
BY_NAME = {p.name: p for p in probes.PROBES}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Future]]:
    """Every tested probe started at once (four at a time); each test waits for its own."""
    folder = tmp_path_factory.mktemp("probes")
    with probes.probing() as server, ThreadPoolExecutor(max_workers=4) as pool:
        yield {name: pool.submit(probes.run_probe, BY_NAME[name], ROOT / "src", folder / name, server)
               for name in TESTED}


def test_every_tested_probe_exists_and_every_class_is_tested() -> None:
    assert set(TESTED) <= set(BY_NAME)
    assert {BY_NAME[name].kind for name in TESTED} == {p.kind for p in probes.PROBES}


@pytest.mark.parametrize("name", TESTED, ids=[f"{BY_NAME[n].kind}: {n}" for n in TESTED])
def test_promise_holds(name: str, outcomes: dict[str, Future]) -> None:
    outcome = outcomes[name].result()
    assert outcome.problems == [], (
        f"{name}: exit {outcome.code} after {outcome.seconds:.1f} s; stderr: {outcome.stderr[-600:]!r}")
    if outcome.code == 2:
        assert outcome.stderr.count("\n") == 1 and outcome.stderr.startswith("error: ")
    assert "Traceback" not in outcome.stderr


def test_a_probe_notices_a_broken_promise(tmp_path: Path) -> None:
    """The judge is not vacuous: a call that exits 0 where 2 is expected, or changes its input, is reported."""
    def prepare(kit: probes.Kit) -> probes.Call:
        target = kit.write("input.txt", "before")
        return probes.Call(["--help"], expect=2, inputs=[target], cleanup=lambda: target.write_text("after"))

    with probes.probing() as server:
        outcome = probes.run_probe(probes.Probe("sham", "sham", prepare), ROOT / "src", tmp_path, server)
    assert outcome.code == 0
    assert outcome.problems == ["exit 0, expected 2", "input input.txt was changed"]

"""Fidelity of our engine against VirtualHome's evolving-graph executor, on the same real programs.

Programs: the eai-eval VirtualHome program set (installed with the optional `eai-eval` package) and ProgPrompt's
env1/env2 ground truth. Each program runs step by step through both executors; a failed step leaves the state
unchanged and the run goes on, so every step gets a verdict from both. Compared per program: the list of step
verdicts, and the final id-level fact sets (every edge `(from, relation, to)`, CLOSE and FACING included, and every
node state). Our derived states are switched off here, because VirtualHome's executor has none. Both executors are
timed on the same programs, in two parts: loading the initial graph from its JSON data, and executing the program
from that loaded initial state (VirtualHome: a fresh EnvironmentState and every step; ours: reset() and every
step). The speedup reported is the execution one; load times are reported beside it. Parsing is untimed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import files
from ...envs.household.env import HouseholdEnv
from ...envs.household.script import ScriptStep, parse_script
from ...errors import DataError

Fact = tuple


@dataclass(frozen=True)
class ProgramCase:
    """One program to run: where it comes from, its initial graph and its grounded steps."""

    name: str
    init: dict[str, Any] = field(repr=False)
    steps: tuple[ScriptStep, ...]


@dataclass(frozen=True)
class ProgramResult:
    name: str
    vh_ok: tuple[bool, ...]
    our_ok: tuple[bool, ...]
    only_vh: frozenset[Fact]       # final facts VirtualHome has and we lack
    only_ours: frozenset[Fact]
    vh_errors: tuple[str, ...] = ()  # exceptions VirtualHome raised (counted as failed steps)

    @property
    def agree_exec(self) -> bool:
        return self.vh_ok == self.our_ok

    @property
    def agree_final(self) -> bool:
        return not self.only_vh and not self.only_ours


@dataclass(frozen=True)
class FidelityReport:
    results: tuple[ProgramResult, ...]
    vh_seconds: float            # executing the programs from a loaded initial graph
    our_seconds: float
    vh_load_seconds: float = 0.0   # building the initial graphs from JSON data
    our_load_seconds: float = 0.0

    @property
    def programs(self) -> int:
        return len(self.results)

    @property
    def agree_exec(self) -> int:
        return sum(r.agree_exec for r in self.results)

    @property
    def agree_final(self) -> int:
        return sum(r.agree_final for r in self.results)

    @property
    def speedup(self) -> float:
        return self.vh_seconds / self.our_seconds if self.our_seconds > 0 else float("inf")

    def summary(self) -> dict[str, float | int]:
        return {"programs": self.programs, "agree_exec": self.agree_exec, "agree_final": self.agree_final,
                "speedup": round(self.speedup, 1)}


# ---------------------------------------------------------------------------------------------- programs

def eai_cases(root: Path | None = None, names: set[str] | None = None) -> Iterator[ProgramCase]:
    """The eai-eval programs (sorted by file name) with their initial graphs; only `names` when given."""
    from ...datasets.eai import eai_root, read_eai_program

    base = eai_root() if root is None else root
    for scene, pid, path in _eai_list(root):
        name = f"eai/{scene}/{pid}"
        if names is None or name in names:
            prog = read_eai_program(base, scene, path)
            yield ProgramCase(name, prog.init_graph(), prog.steps)


def _eai_list(root: Path | None) -> list[tuple[str, str, Path]]:
    from ...datasets.eai import list_eai_programs

    return list_eai_programs(root)


def progprompt_cases(data_root: Path) -> Iterator[ProgramCase]:
    """ProgPrompt's env1/env2 ground-truth programs with their initial graphs (`data_root` = .../progprompt)."""
    for env in (1, 2):
        tasks_path = data_root / "new_env" / f"env{env}_annotated.json"
        init_path = data_root / "final_states" / f"initial_states_env{env}.json"
        tasks = list(files.read_json_lines(tasks_path, what="task file"))
        inits = list(files.read_json_lines(init_path, what="initial graphs file"))
        if len(tasks) != len(inits):
            raise DataError(f"{init_path}: {len(inits)} graphs for the {len(tasks)} tasks of {tasks_path}")
        for (number, task), (init_number, init) in zip(tasks, inits, strict=True):
            where = files.at(str(tasks_path), number)
            if not isinstance(task, dict) or len(task) != 1:
                raise DataError(f"{where}: expected one task object {{name: {{step: [script lines]}}}}")
            name, subgoals = next(iter(task.items()))
            files.check_type(subgoals, dict[str, list[str]], where, name=files.field_path("", name))
            files.check_type(init, dict[str, Any], files.at(str(init_path), init_number))
            lines = [line for step_lines in subgoals.values() for line in step_lines]
            steps = parse_script(lines, source=f"{tasks_path}:{number}")
            yield ProgramCase(f"progprompt/env{env}/{name}", init, tuple(steps))


def mutants(cases: list[ProgramCase]) -> list[ProgramCase]:
    """Each program with every third step dropped: plans with missing finds, opens and grabs, so that the
    verdicts of failing steps (and the states after them) are compared too."""
    return [ProgramCase(c.name + "#drop3", c.init, tuple(s for k, s in enumerate(c.steps) if k % 3 != 2))
            for c in cases]


def load_cases(progprompt_root: Path | None, limit: int | None = None,
               eai: Path | None = None) -> list[ProgramCase]:
    """All cases (eai-eval first, then ProgPrompt); with `limit`, an evenly spaced subset of that size."""
    names = _eai_names(eai)
    pp = list(progprompt_cases(progprompt_root)) if progprompt_root is not None else []
    total = len(names) + len(pp)
    chosen = range(total) if limit is None or limit >= total else \
        sorted({round(k * (total - 1) / max(limit - 1, 1)) for k in range(limit)})
    wanted_eai = {names[k] for k in chosen if k < len(names)}
    cases = list(eai_cases(eai, wanted_eai)) if wanted_eai else []
    cases += [pp[k - len(names)] for k in chosen if k >= len(names)]
    return cases


def _eai_names(root: Path | None) -> list[str]:
    return [f"eai/{scene}/{pid}" for scene, pid, _ in _eai_list(root)]


# ---------------------------------------------------------------------------------------------- executors

def _facts(graph: dict[str, Any]) -> frozenset[Fact]:
    facts: set[Fact] = {(e["from_id"], e["relation_type"], e["to_id"]) for e in graph["edges"]}
    facts.update((n["id"], s) for n in graph["nodes"] for s in n["states"])
    return frozenset(facts)


def run_ours(case: ProgramCase) -> tuple[tuple[bool, ...], frozenset[Fact], float, float]:
    """Our verdicts, final facts, load seconds and execution seconds."""
    start = time.perf_counter()
    env = HouseholdEnv(case.init, derived_states=False)
    loaded = time.perf_counter()
    env.reset()
    verdicts = tuple(env.step(s.call()).ok for s in case.steps)
    done = time.perf_counter()
    return verdicts, _facts(env.snapshot()), loaded - start, done - loaded


def run_virtualhome(case: ProgramCase) -> tuple[tuple[bool, ...], frozenset[Fact], float, float, tuple[str, ...]]:
    """VirtualHome's verdicts, final facts, load seconds, execution seconds and the exceptions it raised."""
    from virtualhome_eval.simulation.evolving_graph.environment import EnvironmentGraph, EnvironmentState
    from virtualhome_eval.simulation.evolving_graph.execution import ScriptExecutor
    from virtualhome_eval.simulation.evolving_graph.scripts import Action, Script, ScriptLine, ScriptObject

    lines = []
    for k, s in enumerate(case.steps, 1):
        objects = [ScriptObject(n, i) for n, i in zip(s.names, s.ids, strict=True)]
        lines.append(Script([ScriptLine(Action[s.action.upper()], objects, k)]))
    errors: list[str] = []
    start = time.perf_counter()
    graph = EnvironmentGraph(case.init)
    loaded = time.perf_counter()
    executor = ScriptExecutor(graph, {})
    state = EnvironmentState(graph, {}, instance_selection=True)
    verdicts = []
    for script in lines:
        try:
            ok, state = executor.execute_one_step(script, state)
        except Exception as exc:   # VirtualHome crashes on some inputs; that step did not execute
            ok = False
            errors.append(f"{script[0]}: {type(exc).__name__}: {exc}")
        verdicts.append(ok)
    done = time.perf_counter()
    return tuple(verdicts), _facts(state.to_dict()), loaded - start, done - loaded, tuple(errors)


def compare(cases: list[ProgramCase]) -> FidelityReport:
    """Run every case through both executors and compare."""
    results = []
    times = [0.0, 0.0, 0.0, 0.0]   # VirtualHome exec, ours exec, VirtualHome load, ours load
    for case in cases:
        vh_ok, vh_final, vh_load, vh_exec, errors = run_virtualhome(case)
        our_ok, our_final, our_load, our_exec = run_ours(case)
        for k, value in enumerate((vh_exec, our_exec, vh_load, our_load)):
            times[k] += value
        results.append(ProgramResult(case.name, vh_ok, our_ok, vh_final - our_final, our_final - vh_final, errors))
    return FidelityReport(tuple(results), *times)

"""Loader of the eai-eval VirtualHome programs (skipped where the optional eai-eval package is missing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from situated.datasets.eai import list_eai_programs, load_eai_programs
from situated.errors import DataError


def test_missing_program_set_is_a_clear_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="executable_programs"):
        list_eai_programs(tmp_path)


def test_loads_programs_with_their_graphs() -> None:
    pytest.importorskip("virtualhome_eval")
    assert len(list_eai_programs()) >= 500
    program = next(load_eai_programs())
    assert program.title and program.steps and len(program.steps) == len(program.lines)
    graph = program.init_graph()
    ids = {n["id"] for n in graph["nodes"]}
    assert all(i in ids for step in program.steps for i in step.ids)   # ids point into the paired graph
    assert program.final_graph()["nodes"]

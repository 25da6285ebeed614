"""The registry of systems: every System says what its reports need, consistently, and its name is the one its
evaluation writes into run.json."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from situated.errors import DataError
from situated.eval.report.build import SECTIONS
from situated.eval.report.tasks import EXTRACTORS
from situated.eval.systems.base import System
from situated.eval.systems.registry import SYSTEMS, system_named


@pytest.mark.parametrize("system", SYSTEMS.values(), ids=list(SYSTEMS))
def test_a_system_says_what_its_report_needs(system: System) -> None:
    keys = system.metric_keys
    assert len(set(keys)) == len(keys) and keys
    assert set(system.paper_metrics) <= set(keys) and set(system.task_panels) <= set(keys)
    assert all(set(row.metrics) <= set(system.paper_metrics) for row in system.papers)
    assert all(row.system == system.name for row in system.papers)
    assert set(system.sections) <= {*SECTIONS, "cost", "maps"}
    assert {t.source for t in system.failure_tables} <= set(EXTRACTORS)
    if system.job is None:  # the sandbox study runs scripted sessions (sandbox_study_run), not episode jobs
        assert system.name == "sandbox_study" and system.config is None
        return
    assert dataclasses.is_dataclass(system.job) and callable(system.job.build)
    assert "tasks" in inspect.signature(system.config).parameters or "instances" in inspect.signature(
        system.config).parameters
    source = inspect.getsource(inspect.getmodule(system.job))
    assert f'system="{system.name}"' in source  # the store of its job carries this name


def test_an_unknown_system_is_one_line() -> None:
    with pytest.raises(DataError, match=r"'sandbox'.*household, navigation, tabletop, eai and sandbox_study"):
        system_named("sandbox", "runs/x")

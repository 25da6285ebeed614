"""The grounded variant's check of an EAI plan on a private copy of the task's scene."""

from __future__ import annotations

import pytest

from situated.eval.eai_check import REPEAT_REASON, ZERO_ARG_REASON, check_plan
from situated.planners.eai import Step, parse_answer

pytest.importorskip("virtualhome_eval")

LAMP = '{\n  "WALK": ["floor_lamp", "1000"],\n  "SWITCHON": ["floor_lamp", "1000"]\n}'


@pytest.fixture(scope="module")
def lamp():
    from situated.datasets.eai_actions import load_tasks

    return next(t for t in load_tasks() if t.task_id == "11_1")  # Turn on light: floor_lamp (1000) ON


def test_check_plan_runs_steps_and_goals_on_a_private_scene(lamp) -> None:
    assert check_plan(lamp, parse_answer(LAMP, lamp, "1.0.5")).done_at == 2
    no_walk = check_plan(lamp, [Step("SWITCHON", ("floor_lamp",), (1000,))])
    assert no_walk.failed_at == 0 and "not close" in no_walk.reason
    assert check_plan(lamp, [Step("WALK", ("bedroom",), (67,))]).unmet == ("floor_lamp (1000) is ON",)
    assert check_plan(lamp, [Step("STANDUP")]).reason == ZERO_ARG_REASON
    walk = Step("WALK", ("bedroom",), (67,))
    assert check_plan(lamp, [walk, walk]) .reason == REPEAT_REASON


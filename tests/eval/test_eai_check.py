"""The grounded variant's check of an EAI plan on a private copy of the task's scene."""

from __future__ import annotations

import pytest

from situated.eval.systems.eai_check import REPEAT_REASON, ZERO_ARG_REASON, check_plan
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



@pytest.fixture(scope="module")
def tv():
    from situated.datasets.eai_actions import load_tasks

    return next(t for t in load_tasks() if t.task_id == "1057_1")  # Watch TV: television (410) ON, FACING, LOOKAT


def test_hints_name_the_steps_a_failing_step_needs(tv) -> None:
    walk, look = Step("WALK", ("television",), (410,)), Step("LOOKAT", ("television",), (410,))
    facing = check_plan(tv, [walk, look], hints=True)
    assert facing.failed_at == 1 and facing.enabler == (Step("TURNTO", ("television",), (410,)),)
    switch = Step("SWITCHON", ("television",), (410,))
    far = check_plan(tv, [Step("WALK", ("bedroom",), (67,)), switch], hints=True)
    assert far.failed_at == 1 and far.enabler == (walk,)   # the plan's own way of getting there
    assert check_plan(tv, [Step("WALK", ("bedroom",), (67,)), *far.enabler, switch], hints=True).failed_at is None
    unwalked = check_plan(tv, [switch], hints=True).enabler   # no WALK yet: the first action that gets there
    assert len(unwalked) == 1 and unwalked[0].ids == (410,) and unwalked[0].action in ("FIND", "WALK")
    assert check_plan(tv, [walk, look]).enabler == ()   # without hints the check says only what failed


def test_no_enabler_undoes_an_effect_that_already_holds(tv) -> None:
    walk, on = Step("WALK", ("television",), (410,)), Step("SWITCHON", ("television",), (410,))
    again = check_plan(tv, [walk, on, on], hints=True)
    assert again.failed_at == 2 and "on" in again.reason and again.enabler == ()   # never SWITCHOFF first


def test_hints_name_the_action_that_makes_each_unmet_goal_hold(tv) -> None:
    unmet = check_plan(tv, [Step("WALK", ("bedroom",), (67,))], hints=True).unmet
    assert unmet[0] == "television (410) is ON (SWITCHON television (410) makes it hold)"
    assert unmet[1].endswith("(TURNTO television (410) makes it hold)")
    assert unmet[2] == "the actions must include LOOKAT or WATCH"   # action goals name their actions already
    plain = check_plan(tv, [Step("WALK", ("bedroom",), (67,))]).unmet
    assert [u.split(" (", 2)[:2] for u in unmet[:2]] == [u.split(" (", 2)[:2] for u in plain[:2]]
    assert "makes it hold" not in " ".join(plain)


def test_a_hint_is_left_out_when_no_short_search_reaches_the_goal(lamp, monkeypatch) -> None:
    import situated.eval.systems.eai_check as eai_check

    monkeypatch.setattr(eai_check, "HINT_BUDGET", 1)   # one try: WALK alone never switches the lamp on
    assert check_plan(lamp, [Step("WALK", ("bedroom",), (67,))], hints=True).unmet == ("floor_lamp (1000) is ON",)

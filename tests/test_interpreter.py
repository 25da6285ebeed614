"""The interpreter on the project's own apartment scene: sub-goal caps, recovery, failure feedback, budget."""

from __future__ import annotations

import json

import pytest

from fakes import APARTMENT
from situated.envs.household import HouseholdEnv
from situated.interpreter import Limits, interpret
from situated.program import parse
from situated.trace import CheckEvent, SkipEvent, StepEvent, StopEvent, Trace

SCENE = APARTMENT


@pytest.fixture()
def env() -> HouseholdEnv:
    e = HouseholdEnv.from_file(SCENE, seed=0)
    e.reset()
    return e


def program(body: str):
    return parse("def task():\n" + "".join(f"\t{line}\n" for line in body.strip().splitlines()))


def test_recovery_runs_only_when_the_assertion_fails(env):
    trace = interpret(program("""
# 1: grab salmon
assert('close' to 'salmon' )
\telse: find('salmon')
grab('salmon')
assert('salmon' in 'hands' )
\telse: grab('salmon')
"""), env)
    checks = [e for e in trace if isinstance(e, CheckEvent)]
    assert [c.held for c in checks] == [False, True]
    steps = trace.steps
    assert [(s.call, s.recovery, s.ok) for s in steps] == [
        ("find('salmon')", True, True), ("grab('salmon')", False, True)]
    assert env.holds(parse("def t():\n\tassert('salmon' in 'hands')\n").body[0].condition)


def test_failed_action_is_recorded_with_its_reason_and_execution_continues(env):
    trace = interpret(program("""
grab('salmon')
find('salmon')
grab('salmon')
"""), env)
    first, _, last = trace.steps
    assert not first.ok and "salmon" in first.reason and "close" in first.reason
    assert last.ok
    assert trace.exec_rate == pytest.approx(2 / 3)


def test_subgoal_step_cap_skips_the_rest_of_a_subgoal_and_a_comment_resets_it(env):
    many = "\n".join(["walk('kitchen')"] * 12)
    trace = interpret(program(f"# 1: pace\n{many}\n# 2: next\nwalk('bedroom')"), env, limits=Limits(subgoal_steps=10))
    skips = [e for e in trace if isinstance(e, SkipEvent)]
    assert len(skips) == 2 and "cap of 10" in skips[0].reason
    assert trace.attempted == 11  # 10 in the first sub-goal, 1 after the comment opened the next


def test_operation_budget_stops_a_runaway_program(env):
    items = ", ".join(["'kitchen'", "'bedroom'"] * 30)
    trace = interpret(program(f"for room in [{items}]:\n\tfor r in [{items}]:\n\t\twalk(r)"), env,
                limits=Limits(subgoal_steps=10_000, operations=100))
    assert isinstance(trace.events[-1], StopEvent) and "budget" in trace.events[-1].reason
    assert trace.attempted < 100


def test_stop_on_failure_stops_at_the_first_failed_action_for_replanning(env):
    trace = interpret(program("grab('salmon')\nfind('salmon')"), env, limits=Limits(stop_on_failure=True))
    assert trace.attempted == 1 and trace.stop is not None and trace.stop.line == 2
    assert trace.first_failure is not None and trace.first_failure.call == "grab('salmon')"


def test_loops_bind_items_and_if_takes_the_branch_the_state_says(env):
    plan = program("""
for item in ['salmon', 'apple']:
\tfind(item)
find('fridge')
if 'fridge' is 'closed':
\topen('fridge')
else:
\tclose('fridge')
""")
    assert env.holds(parse("def t():\n\tassert('fridge' is 'closed')\n").body[0].condition)
    trace = interpret(plan, env)
    assert [s.call for s in trace.steps] == ["find('salmon')", "find('apple')", "find('fridge')", "open('fridge')"]
    assert all(s.ok for s in trace.steps)
    # run again from the new state: the fridge is open now, so the else branch closes it
    again = interpret(plan, env)
    assert again.steps[-1].call == "close('fridge')" and again.steps[-1].ok


def test_trace_round_trips_through_json_lines(env, tmp_path):
    trace = interpret(program("# 1: go\nwalk('kitchen')\nassert('close' to 'salmon')\n\telse: find('salmon')"), env)
    rows = [json.loads(line) for line in trace.to_jsonl().splitlines()]
    again = Trace.from_dicts(rows)
    assert again.events == trace.events
    assert isinstance(again.events[1], StepEvent)


def test_example_plans_run_on_the_apartment_scene():
    plans = sorted((SCENE.parents[1] / "plans").glob("*.py"))
    assert len(plans) >= 6
    for path in plans:
        env = HouseholdEnv.from_file(SCENE, seed=0)
        env.reset()
        trace = interpret(parse(path.read_text(), source=str(path)), env)
        assert trace.attempted > 0 and trace.exec_rate == 1.0, (path.name, trace.first_failure)

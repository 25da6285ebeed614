"""Every environment passes the conformance kit (tests/envs/conformance.py), and the kit fails on one that breaks
the protocol: household, EAI's no-derived-states household driven by node ids, streets, tabletop, the sandbox
world and the documentation's example world (examples/lamp_world.py)."""

from __future__ import annotations

import re
import runpy
from collections.abc import Callable
from typing import Any

import pytest

from envs.conformance import NonConformance, check_environment
from fakes import EXAMPLES, kitchen
from situated.envs.base import Environment, StepResult
from situated.envs.checked import CallWording, CheckedEnv, call_problem
from situated.envs.household import HouseholdEnv, InstanceCall
from situated.envs.streets.env import NavInstance, StreetEnv
from situated.envs.streets.graph import Node, StreetGraph
from situated.program import Call, Condition, Var

LAMP = runpy.run_path(str(EXAMPLES / "lamp_world.py"))

# S - B - N running north, B a crossing with W and E.
STREETS = StreetGraph(
    {n: Node(n, 0, 40.0 + i * 1e-4, -74.0, "unseen") for i, n in enumerate("BENSW")},
    {"S": {0: "B"}, "B": {180: "S", 270: "W", 0: "N", 90: "E"}, "W": {90: "B"}, "N": {180: "B"},
     "E": {270: "B"}},
)


def test_household_conforms() -> None:
    check_environment(HouseholdEnv(kitchen(), seed=0),
                      calls=[Call("find", ("salmon",)), Call("grab", ("salmon",)), Call("standup")],
                      condition=Condition("holds", ("salmon",)))


def test_eai_household_driven_by_node_ids_conforms() -> None:
    check_environment(HouseholdEnv(kitchen(), derived_states=False),
                      calls=[InstanceCall("walk", ("plate",), ids=(32,)), InstanceCall("grab", ("plate",), ids=(32,))],
                      condition=Condition("close", ("sofa",)))


def test_streets_conform() -> None:
    task = NavInstance("t1", "touchdown", ("S", "B", "N"), 0.0, "go north")
    check_environment(StreetEnv(STREETS), calls=[Call("forward"), Call("left"), Call("forward")],
                      condition=Condition("close", ("B",)), task=task, corrects_unknown=True)


@pytest.fixture(scope="module")
def tabletop() -> Any:
    pytest.importorskip("pybullet")
    from situated.envs.tabletop import TabletopEnv

    env = TabletopEnv("gift_bag", seed=0)
    yield env
    env.close()


def test_tabletop_conforms(tabletop: Any) -> None:
    calls = [Call("grab_and_putin", ("duck", "tray")), Call("go_home")]
    for call in calls:  # the engine's first episode after loading runs on empty contact caches: warm them once
        tabletop.step(call)
    check_environment(tabletop, calls=calls, condition=Condition("inside", ("duck", "tray")), tolerance=1e-3)


def test_sandbox_world_conforms(tabletop: Any) -> None:
    from situated.sandbox.world import SandboxWorld

    check_environment(SandboxWorld(tabletop), calls=[Call("pickup", ("ball",)), Call("release")],
                      condition=Condition("holds", ("ball",)), tolerance=1e-3)


def test_the_documentations_example_world_conforms() -> None:
    check_environment(LAMP["lamp_world"](), calls=[Call("switchon", ("lamp",))],
                      condition=Condition("state", ("lamp", "switchon")))


class _ForgetfulLamp(LAMP["LampWorld"]):  # type: ignore[misc]
    def reset(self, task: object = None) -> str:
        return "The lamp is as it was."


class _LampWithAClock(LAMP["LampWorld"]):  # type: ignore[misc]
    def snapshot(self) -> dict:
        return {"lamp": self.on, "since": object()}


class _LampThatMovesWhenRefusing(LAMP["LampWorld"]):  # type: ignore[misc]
    def step(self, call: Call) -> StepResult:
        if call.action in ("switchon", "switchoff"):
            return super().step(call)
        self.on = True
        return StepResult(False, f"unknown action {call.action!r}")


def _checked(world: Callable[[], Environment]) -> Callable[[], Environment]:
    return lambda: CheckedEnv(world(), LAMP["LAMP_SPACE"])


@pytest.mark.parametrize(("make", "rule"), [
    (LAMP["LampWorld"], "an unknown action must be refused"),          # the example world without its check
    (_checked(_ForgetfulLamp), "reset() must restore the initial state"),
    (_checked(_LampWithAClock), "snapshot() must be JSON data"),
    (_LampThatMovesWhenRefusing, "must leave the state as it was"),
])
def test_the_kit_fails_on_a_world_that_breaks_the_protocol(make: Callable[[], Environment], rule: str) -> None:
    with pytest.raises(NonConformance, match=re.escape(rule)):
        check_environment(make(), calls=[Call("switchon", ("lamp",))],
                          condition=Condition("state", ("lamp", "switchon")))


def test_one_call_check_in_each_worlds_words() -> None:
    space = LAMP["LAMP_SPACE"]
    assert call_problem(Call("switchon", ("lamp",)), space) is None
    assert call_problem(Call("fly", ("lamp",)), space) == "unknown action 'fly'"
    assert call_problem(Call("switchon"), space) == "switchon takes 1 argument(s), got 0"
    assert call_problem(Call("switchon", (Var("x"),)), space) == "switchon: loop variable 'x' is not bound"
    assert call_problem(Call("SWITCHON", ("lamp",)), space, CallWording(fold_case=True)) is None
    assert call_problem(Call("fly"), space, CallWording(unknown=None)) is None      # the world corrects it


def test_the_example_world_runs_a_plan_through_the_interpreter() -> None:
    from situated.interpreter import interpret
    from situated.program import parse

    world = LAMP["lamp_world"]()
    world.reset()
    trace = interpret(parse("switchon('lamp')\nassert('lamp' is 'switchon')\nswitchon('lamp', 'lamp')"), world)
    assert [(s.ok, s.reason) for s in trace.steps] == [(True, ""), (False, "switchon takes 1 argument(s), got 2")]
    assert world.unwrapped.on

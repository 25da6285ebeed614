"""Grounded decoding's room walks (`--room-walks`): a move into another room is preceded by a walk to that room,
so what the character carries ends in the room it was brought to (VirtualHome's rule, docs/fidelity.md), on env1's
released scene."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes import ScriptedLLM
from situated.actions import PROGPROMPT_SPACE
from situated.datasets.progprompt import HouseholdTask, load_split
from situated.envs.household import HouseholdEnv
from situated.eval.systems.household_episodes import household_episode, simulator_verifier
from situated.interpreter import interpret
from situated.planners.progprompt import ProgPromptPlanner

STRAIGHT = "find('barsoap')\n\tgrab('barsoap')\n\tfind('sofa')\n\tputback('barsoap', 'sofa')\n"
"""Soap from the bathroom to the living room's sofa, going straight to each object."""


@pytest.fixture(scope="module")
def task(progprompt_data: Path) -> HouseholdTask:
    return next(t for t in load_split(progprompt_data, "env1") if t.name == "put the soap in the bathroomcabinet")


def plan(task: HouseholdTask, answers: list[str], examples: dict[str, str], *, room_walks: bool = True):
    planner = ProgPromptPlanner(ScriptedLLM(list(answers)), PROGPROMPT_SPACE, examples, max_repairs=3,
                                room_walks=room_walks)
    env = HouseholdEnv(task.initial_graph)
    result = planner.plan("bring the soap to the sofa", env.object_names(), affordances=env.object_properties(),
                          verify=simulator_verifier(HouseholdEnv(task.initial_graph)))
    env.reset()
    return result, env


def test_a_move_into_another_room_walks_to_that_room_first(task: HouseholdTask, examples: dict[str, str]) -> None:
    result, env = plan(task, [STRAIGHT], examples)
    body = [line.strip() for line in result.text.split("\n")[1:] if line.strip()]
    assert body == ["walk('bathroom')", "find('barsoap')", "grab('barsoap')", "walk('livingroom')", "find('sofa')",
                    "putback('barsoap', 'sofa')"]
    assert result.walks == ("line 2: walk('bathroom')", "line 5: walk('livingroom')")
    trace = interpret(result.program, env)
    assert trace.executed == trace.attempted == 6
    assert "barsoap INSIDE livingroom" in env.conditions() and "barsoap ON sofa" in env.conditions()


def test_without_room_walks_the_carried_soap_stays_in_the_bathroom(task: HouseholdTask,
                                                                   examples: dict[str, str]) -> None:
    result, env = plan(task, [STRAIGHT], examples, room_walks=False)
    assert "walk(" not in result.text and result.walks == ()
    interpret(result.program, env)
    assert "barsoap INSIDE bathroom" in env.conditions() and "barsoap INSIDE livingroom" not in env.conditions()


def test_a_plan_that_already_walks_room_by_room_is_left_as_written(task: HouseholdTask,
                                                                  examples: dict[str, str]) -> None:
    rooms = ("walk('bathroom')\n\tfind('barsoap')\n\tgrab('barsoap')\n\twalk('livingroom')\n\tfind('sofa')\n"
             "\tputback('barsoap', 'sofa')\n")
    result, _ = plan(task, [rooms], examples)
    assert result.text.endswith(rooms) and result.walks == ()


def test_a_rewritten_line_moves_with_the_walks_written_above_it(task: HouseholdTask,
                                                                examples: dict[str, str]) -> None:
    # line 3's grab is rejected (not close to the soap) and rewritten as find('barsoap'); the walk to the bathroom
    # then goes before that find, and the rewrite is recorded at the find's new line
    forgets = "# 0: soap\n\tgrab('barsoap')\n\tfind('sofa')\n"
    rest = "grab('barsoap')\n\tfind('sofa')\n\tputback('barsoap', 'sofa')\n"
    result, env = plan(task, [forgets, "find('barsoap')\n", rest], examples)
    (rewrite,) = result.rewrites
    lines = result.text.split("\n")
    assert lines[rewrite.line - 2].strip() == "walk('bathroom')"
    assert lines[rewrite.line - 1].strip() == rewrite.replacement == "find('barsoap')"
    trace = interpret(result.program, env)
    assert trace.executed == trace.attempted and "barsoap INSIDE livingroom" in env.conditions()


def test_an_episode_records_the_walks_and_abandons_nothing(task: HouseholdTask, examples: dict[str, str]) -> None:
    planner = ProgPromptPlanner(ScriptedLLM([STRAIGHT]), PROGPROMPT_SPACE, examples, max_repairs=3, room_walks=True)
    episode = household_episode(task, 0, planner)
    assert episode.details["walks"] == ["line 2: walk('bathroom')", "line 5: walk('livingroom')"]
    assert episode.details["abandoned"] == 0 and episode.metrics["exec"] == 1.0

"""`eval progprompt --preconditions`: its runs are named and stored apart, and its planners search for a failing
call's missing steps (a scripted model writes a plan that grabs the soap from afar)."""

from __future__ import annotations

from pathlib import Path

from fakes import ScriptedLLM
from situated.datasets.progprompt import load_split
from situated.envs.household import HouseholdEnv
from situated.eval.systems.household_episodes import HouseholdJob, simulator_verifier
from situated.eval.systems.household_run import HouseholdSettings, variant_name

PLANS = (("throw_away_the_lime", "def throw_away_the_lime():\n\tfind('lime')\n\tgrab('lime')\n"),)


def test_precondition_runs_have_their_own_name() -> None:
    assert variant_name(HouseholdSettings(Path("data"), "env1", preconditions=True), 5, 5, "minilm") == (
        "progprompt-full-grounded5-minilm5-scene-pre-rooms-open")
    assert variant_name(HouseholdSettings(Path("data"), "env1"), 5, 5, "minilm") == (
        "progprompt-full-grounded5-minilm5-scene-rooms-open")
    assert variant_name(HouseholdSettings(Path("data"), "env1", keep_steps=True), 5, 5, "minilm") == (
        "progprompt-full-grounded5-minilm5-scene-keep-rooms-open")
    assert variant_name(HouseholdSettings(Path("data"), "env1", room_walks=False, open_first=False), 5, 5,
                        "minilm") == "progprompt-full-grounded5-minilm5-scene"
    # without grounded decoding there is no copy of the scene to search on, or to walk through
    assert variant_name(HouseholdSettings(Path("data"), "env1", preconditions=True), 0, 5, "minilm") == (
        "progprompt-full-minilm5-scene")


def test_the_jobs_planners_search_for_missing_steps_only_when_asked(progprompt_data: Path) -> None:
    task = next(t for t in load_split(progprompt_data, "env1") if t.name == "put the soap in the bathroomcabinet")
    env = HouseholdEnv(task.initial_graph)
    env.reset()
    for preconditions in (False, True):
        llm = ScriptedLLM([("grab('barsoap')\n", "stop"), ("find('barsoap')\n", "stop"), ("", "stop")])
        job = HouseholdJob(None, PLANS, n_examples=1, repairs=3, preconditions=preconditions)  # type: ignore[arg-type]
        result = job.planner_factory(llm)().plan(task.name, env.object_names(), affordances=env.object_properties(),
                                                 verify=simulator_verifier(HouseholdEnv(task.initial_graph)))
        # with the search the model's grab stands after a find it did not write; without, the model rewrites it
        assert ("find('barsoap')\n\tgrab('barsoap')" in result.text) == preconditions
        assert (len(llm.calls) == 1) == preconditions


def test_the_jobs_planners_keep_a_step_the_model_gives_up_only_when_asked(progprompt_data: Path) -> None:
    task = next(t for t in load_split(progprompt_data, "env1") if t.name == "put the soap in the bathroomcabinet")
    env = HouseholdEnv(task.initial_graph)
    env.reset()
    for keep_steps in (False, True):
        llm = ScriptedLLM([("grab('barsoap')\n", "stop"), ("", "stop")])  # the rewrite ends the plan
        job = HouseholdJob(None, PLANS, n_examples=1, repairs=3, keep_steps=keep_steps)  # type: ignore[arg-type]
        result = job.planner_factory(llm)().plan(task.name, env.object_names(), affordances=env.object_properties(),
                                                 verify=simulator_verifier(HouseholdEnv(task.initial_graph)))
        assert ("find('barsoap')\n\tgrab('barsoap')" in result.text) == keep_steps
        assert len(llm.calls) == 2


def test_skip_done_runs_have_their_own_name_and_reach_the_planner(progprompt_data: Path) -> None:
    assert variant_name(HouseholdSettings(Path("data"), "env1", skip_done=True), 5, 5, "minilm") == (
        "progprompt-full-grounded5-minilm5-scene-rooms-open-done")
    task = next(t for t in load_split(progprompt_data, "env1") if t.name == "put the soap in the bathroomcabinet")
    env = HouseholdEnv(task.initial_graph)
    twice = "find('barsoap')\n\tgrab('barsoap')\n\tgrab('barsoap')\n"
    for skip_done in (False, True):
        llm = ScriptedLLM([(twice, "stop"), ("", "stop")])
        job = HouseholdJob(None, PLANS, n_examples=1, repairs=3, skip_done=skip_done)  # type: ignore[arg-type]
        job.planner_factory(llm)().plan(task.name, env.object_names(), affordances=env.object_properties(),
                                        verify=simulator_verifier(HouseholdEnv(task.initial_graph)))
        # dropped by the checker, the second grab costs no model call; without the lever the model is asked
        assert len(llm.calls) == (1 if skip_done else 2)

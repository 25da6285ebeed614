"""`eval progprompt --scene-examples`: its runs are named and stored apart, and its planners prompt with the
examples chosen for the task's scene (a scripted model records the prompt)."""

from __future__ import annotations

from pathlib import Path

from fakes import ScriptedLLM
from situated.eval.systems.household_episodes import HouseholdJob
from situated.eval.systems.household_run import HouseholdSettings, variant_name

PLANS = (("throw_away_the_lime", "def throw_away_the_lime():\n\tfind('lime')\n\tgrab('lime')\n"),
         ("put_salmon_in_the_fridge", "def put_salmon_in_the_fridge():\n\tfind('salmon')\n\tgrab('salmon')\n"))


def test_scene_examples_runs_have_their_own_name() -> None:
    default = HouseholdSettings(Path("data"), "env1")
    plain = HouseholdSettings(Path("data"), "env1", scene_examples=False)
    assert variant_name(default, 5, 5, "minilm") == "progprompt-full-grounded5-minilm5-scene-rooms-open"
    assert variant_name(plain, 5, 5, "minilm") == "progprompt-full-grounded5-minilm5-rooms-open"
    assert variant_name(default, 5, 3, None) == "progprompt-full-grounded5-rooms-open"  # fixed: the paper's examples
    fixed_scene = HouseholdSettings(Path("data"), "env1", scene_examples=True)
    assert variant_name(fixed_scene, 5, 3, None) == "progprompt-full-grounded5-scene-rooms-open"


def test_the_jobs_planners_prompt_with_examples_the_scene_can_run() -> None:
    for scene_examples, shown in ((False, "throw_away_the_lime"), (True, "put_salmon_in_the_fridge")):
        llm = ScriptedLLM([("find('salmon')\n", "stop")])
        job = HouseholdJob(None, PLANS, n_examples=1, scene_examples=scene_examples)  # type: ignore[arg-type]
        job.planner_factory(llm)().plan("microwave salmon", ["kitchen", "microwave", "salmon", "fridge"])
        assert f"def {shown}():" in llm.prompts[0]
        assert llm.prompts[0].count("def ") == 2  # one example and the task's header

"""Examples chosen for the scene (`scene_examples`, issue 29 point 4): prompt examples that name objects the
task's scene lacks give way to ones that do not, in the fixed or retrieved order among equals; and the
development-set benchmark counts such prompts without a model."""

from __future__ import annotations

import subprocess
import sys

from fakes import ROOT, ScriptedLLM
from situated.actions import PROGPROMPT_SPACE
from situated.planners.progprompt import ProgPromptPlanner
from situated.planners.progprompt_prompt import ProgPromptPrompt
from situated.planners.retrieval import Bm25Retriever


def _plan(name: str, *lines: str) -> str:
    return f"def {name}():\n" + "".join(f"\t{line}\n" for line in lines)


PLANS = {
    "put_the_wine_glass_in_the_kitchen_cabinet": _plan(
        "put_the_wine_glass_in_the_kitchen_cabinet", "find('wineglass')", "grab('wineglass')",
        "putin('wineglass', 'kitchencabinet')"),
    "throw_away_the_lime": _plan("throw_away_the_lime", "find('lime')", "grab('lime')",
                                 "putin('lime', 'garbagecan')"),
    "wash_mug": _plan("wash_mug", "find('mug')", "grab('mug')", "putin('mug', 'sink')"),
    "put_salmon_in_the_fridge": _plan("put_salmon_in_the_fridge", "find('salmon')", "grab('salmon')",
                                      "putin('salmon', 'fridge')"),
    "throw_away_apple": _plan("throw_away_apple", "find('apple')", "grab('apple')", "putin('apple', 'garbagecan')"),
}
SCENE = ["apple", "fridge", "garbagecan", "kitchen", "microwave", "salmon"]


def _defs(prompt: str) -> list[str]:
    return [line[4:-3] for line in prompt.split("\n") if line.startswith("def ")]


def test_fixed_examples_for_the_scene_leave_out_objects_it_lacks() -> None:
    paper = ProgPromptPrompt(PROGPROMPT_SPACE, PLANS, n_examples=2).scene_prompt("microwave salmon", SCENE)
    assert _defs(paper) == ["put_the_wine_glass_in_the_kitchen_cabinet", "throw_away_the_lime", "microwave_salmon"]
    assert paper.count("objects = [") == 2  # the paper's other-scene set-up: the examples' objects, then the scene's
    fitted = ProgPromptPrompt(PROGPROMPT_SPACE, PLANS, n_examples=2,
                              scene_examples=True).scene_prompt("microwave salmon", SCENE)
    assert _defs(fitted) == ["put_salmon_in_the_fridge", "throw_away_apple", "microwave_salmon"]
    assert fitted.count("objects = [") == 1 and "wineglass" not in fitted and "lime" not in fitted


def test_retrieved_examples_for_the_scene_keep_the_nearest_that_fit_nearest_last() -> None:
    prompts = ProgPromptPrompt(PROGPROMPT_SPACE, PLANS, n_examples=2, retriever=Bm25Retriever(), scene_examples=True)
    shown = prompts.examples_for("throw away the banana", SCENE)
    assert shown[-1] == "throw_away_apple"  # nearest of those the scene can run; 'the lime' is not in it
    assert "throw_away_the_lime" not in shown
    assert all(not prompts.absent_objects(name, SCENE) for name in shown)
    plain = ProgPromptPrompt(PROGPROMPT_SPACE, PLANS, n_examples=2, retriever=Bm25Retriever())
    assert "throw_away_the_lime" in plain.examples_for("throw away the banana", SCENE)


def test_when_no_example_fits_the_fewest_absent_objects_come_first() -> None:
    prompts = ProgPromptPrompt(PROGPROMPT_SPACE, PLANS, n_examples=1, scene_examples=True)
    # every plan needs an object a bare kitchen lacks; the wine glass one needs two, the lime one only the lime
    assert prompts.examples_for("tidy up", ["garbagecan", "kitchen"]) == ["throw_away_the_lime"]


def test_the_planner_prompts_with_examples_chosen_for_its_scene() -> None:
    llm = ScriptedLLM([("find('salmon')\n", "stop")])
    planner = ProgPromptPlanner(llm, PROGPROMPT_SPACE, PLANS, n_examples=2, scene_examples=True)
    planner.plan("microwave salmon", SCENE)
    assert _defs(llm.prompts[0]) == ["put_salmon_in_the_fridge", "throw_away_apple", "microwave_salmon"]


def _devset(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "progprompt_devset.py"), *args],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)


def test_devset_benchmark_counts_prompts_with_absent_objects_per_candidate() -> None:
    done = _devset("--prompts-only", "--apartment", "--limit", "10", "--candidate", "bm25:retriever=bm25",
                   "--candidate", "bm25-scene:retriever=bm25,scene=1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    counts = [line for line in lines if "prompts naming objects absent from the scene" in line]
    assert len(counts) == 4  # per candidate: the development tasks, then environment 0's (reporting only)
    assert "absent from the scene 0/10 " in counts[2] and "environment 0, reporting only: 0/10" in counts[3]
    assert "absent from the scene 0/10 " not in counts[0]  # BM25 alone shows other scenes' objects
    assert "environment 0, reporting only: 0/10" not in counts[1]


def test_devset_benchmark_refuses_a_bad_scene_value_in_one_line() -> None:
    done = _devset("--prompts-only", "--candidate", "s:scene=2")
    assert done.returncode == 2
    assert done.stderr.strip() == "error: --candidate 's:scene=2': scene must be 0 or 1, not '2'"


def test_devset_benchmark_refuses_a_negative_offset_in_one_line() -> None:
    done = _devset("--prompts-only", "--limit", "10", "--offset", "-1")
    assert done.returncode == 2
    assert done.stderr.strip() == "error: --offset must be >= 0, got -1"

"""The tabletop system (ProgPrompt's real-robot variant on a simulated arm): `situated eval tabletop`."""

from __future__ import annotations

from .base import FAILED, RAW, UNMET, Part, System, detail_total, episodes_where
from .papers import PAPER_RESULTS
from .tabletop_episodes import METRICS, TabletopJob, tabletop_config, tabletop_summary

TABLETOP = System(
    name="tabletop", title="Tabletop", command="situated eval tabletop", metrics=METRICS,
    definitions="SR (every goal condition holds in the simulated arm's world at the end), Exec (executed / attempted "
                "steps; a pick-and-place the physics defeats, such as a slipped grasp, counts as not executed) and "
                "Plan SR (the goal holds after running the same plan in a symbolic world where every pick-and-place "
                "succeeds)",
    sections=("tasks", "cost", "failures"),
    paper_metrics=("success", "exec", "plan_success"),
    papers=tuple(r for r in PAPER_RESULTS if r.system == "tabletop"),
    paper_notes=("ProgPrompt's tabletop numbers are one run per task on a real Franka arm, on the paper's own four "
                 "tasks; these runs are on this project's tasks in a simulated arm's world, so the rows are a "
                 "reference, not a like-for-like comparison. The paper's Exec counts whether each step was "
                 "executable; Exec here also counts a pick-and-place the physics defeated as not executed.",),
    split_of=lambda config: "tabletop",
    setting_of=lambda config: str(config.get("planner") or ""),
    cases="Each tabletop task runs without and with its distractors; the two count as separate tasks "
          "(<task> and <task>+distractors) in every table and in the bootstrap, and are also shown apart.",
    parts=(Part("no distractors", "distractors", False), Part("with distractors", "distractors", True)),
    task_panels=("success", "plan_success"),
    failure_counts=(("wrong plans (Plan SR 0)", episodes_where(lambda e: not e.metrics.get("plan_success"))),
                    ("right plans that failed in the world",
                     episodes_where(lambda e: bool(e.metrics.get("plan_success")) and not e.success)),
                    ("dropped calls", detail_total("dropped"))),
    failure_tables=(FAILED, UNMET, RAW),
    failure_note="A wrong plan would have failed even had every pick-and-place succeeded (Plan SR 0); a right plan "
                 "that failed in the world lost to the physics (a slipped grasp, a blocked move, an item that "
                 "landed outside).",
    config=tabletop_config, job=TabletopJob, summary=tabletop_summary,
)

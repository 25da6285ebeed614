"""The sandbox user study (Vocal Sandbox's gift-bag study, scripted): `situated sandbox study --out DIR`.

Each condition's sessions are one results store; each session an episode whose task is a participant's bag, so a
report of both stores compares teaching against the no-teaching baseline bag by bag (paired).
"""

from __future__ import annotations

from .base import Metric, System, detail_total

SYSTEM_NAME = "sandbox_study"
METRICS = (
    Metric("person_supervision_minutes", "Supervision (min, person model)", higher_is_better=False),
    Metric("person_teaching_minutes", "Teaching (min, person model)", higher_is_better=False),
    Metric("supervision_minutes", "Supervision (min, events)", higher_is_better=False),
    Metric("skills_per_behaviour", "Skills per behaviour call"),
    Metric("skills_per_command", "Seed skills per command"),
    Metric("mean_depth", "Call depth"),
    Metric("utterances_per_task", "Utterances per task", higher_is_better=False),
    Metric("skill_failures", "Skill failures", higher_is_better=False),
    Metric("met_rate", "Expectations met", scale=100, digits=1),
)
PAPER_NOTE = ("Vocal Sandbox (Grannen et al., CoRL 2024; arXiv:2411.02599), abstract: 8 non-expert participants "
              "packing gift bags; 22.1% less active supervision than the baselines, more complex autonomous "
              "behaviour (+19.7%) and fewer failures (-67.1%). Those are people at a real arm; these are scripted "
              "sessions in a simulator with a person-time model, so compare the direction and size of the "
              "changes, not the minutes.")

SANDBOX_STUDY = System(
    name=SYSTEM_NAME, title="Sandbox user study", command="situated sandbox study", metrics=METRICS,
    definitions="Supervision (the person-time model over everything the person did: speaking each utterance, "
                "reading each plan and deciding, pointing, demonstrating, in minutes; and the same from the "
                "events' timestamps: each plan shown to its decision plus each lesson), teaching (the person's "
                "time inside lessons), skills per behaviour call (the seed skills a behaviour call ran), seed "
                "skills per command (per plan run), call depth (a seed skill 1, a behaviour of skills 2, of "
                "behaviours 3), utterances per task (per expectation checked), skill failures and the share of "
                "expectations met",
    sections=("bags", "cost"),
    paper_notes=(PAPER_NOTE,),
    split_of=lambda config: str(config.get("scene") or ""),
    setting_of=lambda config: str(config.get("condition") or ""),
    cases="Each session is one participant's bag (a task such as p1/bag2); the same bag under the other condition "
          "is the same task, so differences are paired by bag.",
    failure_counts=(("skill failures", detail_total("skill_failures")),),
)

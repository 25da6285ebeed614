"""The user study's measures and its no-teaching baseline, as a person running the study would see them: times
read from a known event log and from the person-time model, the composition depth of a behaviour of behaviours,
a baseline where nothing can be taught (and the planner's grammar cannot even ask), and study headers checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakes import ScriptedLLM, accepts
from situated.actions import SANDBOX_SPACE
from situated.errors import DataError
from situated.planners.toolcall import Memory, ObjectEntry, ToolCallPlanner
from situated.sandbox.library import EventRecord
from situated.sandbox.metrics import PersonModel, study_measures
from situated.sandbox.script import read_script, read_study_fields
from situated.sandbox.study import trial_rows

OBJECTS = [ObjectEntry("ball", "a ball", "item"), ObjectEntry("gift_bag", "a gift bag", "container")]


def _log(*events: tuple[float, str, dict[str, Any]]) -> list[EventRecord]:
    return [EventRecord(i, 1, kind, payload, at) for i, (at, kind, payload) in enumerate(events, start=1)]


LESSON_LOG = _log(
    (0.0, "study", {"participant": "p1", "condition": "teaching", "trial": 2}),
    (1.0, "utterance", {"text": "pack the ball"}),                      # 3 words
    (3.0, "unknown_behaviour", {"utterance": "pack the ball", "name": "pack", "objects": ["ball"]}),
    (4.0, "utterance", {"text": "pick up the ball"}),                   # 4 words
    (6.0, "plan", {"calls": ["pickup('ball')"], "depth": 0}),
    (9.0, "confirmation", {"calls": ["pickup('ball')"]}),              # 2 words read
    (10.0, "execution", {"calls": [{"call": "pickup('ball')", "behaviour": False, "skills": 1, "failed": 0,
                                    "ran": True, "depth": 1}], "ok": True}),
    (11.0, "utterance", {"text": "that's it"}),                         # 2 words
    (15.0, "teaching", {"kind": "behaviour", "name": "pack"}),
    (16.0, "utterance", {"text": "pack the candy"}),                    # 3 words
    (18.0, "plan", {"calls": ["pack('candy')"], "depth": 1}),
    (23.0, "confirmation", {"calls": ["pack('candy')"]}),              # 2 words read
    (30.0, "execution", {"calls": [{"call": "pack('candy')", "behaviour": True, "skills": 3, "failed": 1,
                                    "ran": True, "depth": 2}], "ok": False}),
    (30.5, "skill_failure", {"skill": "release()", "reason": "dropped"}),
    (31.0, "expectation", {"condition": "'ball' in 'gift_bag'", "met": True}),
    (32.0, "expectation", {"condition": "'candy' in 'gift_bag'", "met": False}),
)


def test_times_and_counts_come_from_the_event_log() -> None:
    person = PersonModel(speak_words_per_minute=60, read_words_per_minute=60, decide_seconds=2.0)
    m = study_measures(LESSON_LOG, person)
    assert (m.participant, m.condition, m.trial) == ("p1", "teaching", 2)
    assert m.lessons == 1 and m.behaviours_taught == 1 and m.objects_taught == 0
    assert m.teaching_seconds == 12.0          # asked to be taught at 3 s, saved at 15 s
    assert m.review_seconds == 5.0             # only the plan outside the lesson: shown 18 s, confirmed 23 s
    assert m.supervision_seconds == 17.0
    # the person model: 12 words spoken (1 s each); 2 plans of 2 words read (1 s each) + 2 s to decide each; the
    # robot's question read (2 s); inside the lesson: the question, 4 + 2 words spoken, one plan reviewed
    assert m.person_supervision_seconds == 12 + 2 * (2 + 2) + 2
    assert m.person_teaching_seconds == 2 + 4 + 2 + (2 + 2)
    assert m.tasks == 2 and m.utterances_per_task == 2.0
    assert m.commands == 2 and m.skills_per_command == 2.0 and m.mean_depth == 1.5 and m.max_call_depth == 2


def test_per_trial_rows_average_participants_per_condition_and_bag() -> None:
    rows = [{"condition": "teaching", "trial": 1, "participant": p, "person_supervision_minutes": v,
             "skills_per_behaviour": s} for p, v, s in (("p1", 2.0, 3.0), ("p2", 4.0, 6.0))]
    rows.append({"condition": "no-teaching", "trial": 1, "participant": "p1", "person_supervision_minutes": 5.0})
    trials = trial_rows(rows)
    assert [(t["condition"], t["trial"], t["sessions"]) for t in trials] == [("no-teaching", 1, 1),
                                                                             ("teaching", 1, 2)]
    assert trials[1]["person_supervision_minutes"] == 3.0 and trials[1]["skills_per_behaviour"] == 4.5


def test_the_no_teaching_grammar_cannot_produce_an_unknown_answer() -> None:
    gbnf = pytest.importorskip("llama_cpp.llama_grammar")
    calls = {"goal": [], "calls": ["go_home()"]}
    for teaching, unknown_allowed in ((True, True), (False, False)):
        llm = ScriptedLLM([calls])
        ToolCallPlanner(llm).plan("wave at me", SANDBOX_SPACE, OBJECTS, Memory(), teaching=teaching)
        grammar = gbnf.json_schema_to_gbnf(json.dumps(llm.calls[-1]["schema"]))
        assert accepts(grammar, json.dumps(calls, separators=(",", ":")))
        for unknown in ({"unknown_behaviour": "wave", "objects": []}, {"unknown_object": "marker"}):
            assert accepts(grammar, json.dumps(unknown, separators=(",", ":"))) is unknown_allowed


def test_study_headers_are_read_and_bad_values_name_the_line(tmp_path: Path) -> None:
    good = tmp_path / "p1_bag2.session"
    good.write_text("# situated-session/1\n# participant: p1\n# condition: no-teaching\n# trial: 2\nuser: go home\n")
    fields = read_study_fields(good)
    assert (fields.participant, fields.condition, fields.trial) == ("p1", "no-teaching", 2)
    for header, problem in (("# trial: two", "trial: expected a whole number from 1 to 1000, got 'two'"),
                            ("# condition: teach", "condition: expected teaching or no-teaching, got 'teach'"),
                            ("# participant: p 1", "participant: expected a label")):
        bad = tmp_path / "bad.session"
        bad.write_text(f"# situated-session/1\n{header}\nuser: go home\n")
        with pytest.raises(DataError, match=f"bad.session:2: {problem}"):
            read_script(bad)


# ---------------------------------------------------------------------------------------------- in a session
BEHAVIOURS = (("pack", ["obj"], "pickup(obj)\ngoto('gift_bag')\nrelease()\n", ["pickup", "goto", "release"]),
              ("make_gift", ["toy"], "pack(toy)\npack('candy')\n", ["pack"]),
              ("fill_bag", ["toy"], "make_gift(toy)\npack('cube')\n", ["make_gift", "pack"]))


def test_a_behaviour_of_behaviours_is_measured_by_its_depth_and_skills(fresh: Any, tmp_path: Path) -> None:
    from situated.sandbox import SkillLibrary
    from situated.sandbox.session import SandboxSession

    llm = ScriptedLLM([{"goal": [], "calls": ["fill_bag(DUCK)"]}])
    with SkillLibrary.open(tmp_path / "lib.db") as library:
        for name, params, body, calls in BEHAVIOURS:
            library.add_behaviour(name, params, f"{name}.", body, calls=calls)
        with SandboxSession(fresh, llm, library, scene="gift_bag", study={"participant": "p1", "trial": 4}) as s:
            assert s.say("fill the bag with the duck").kind == "plan"
            assert s.confirm().kind == "executed"
            m = study_measures(library.events(s.session_id))
            counts = s.metrics()
    assert m.max_call_depth == 4 and m.mean_depth == 4.0   # fill_bag → make_gift → pack → seed skills
    assert counts.behaviour_calls == 1 and counts.skills_per_behaviour == 9.0, counts
    assert (m.participant, m.condition, m.trial) == ("p1", "teaching", 4)


def test_no_teaching_refuses_lessons_and_loads_none(fresh: Any, tmp_path: Path) -> None:
    from situated.sandbox import SkillLibrary
    from situated.sandbox.session import SandboxSession

    with SkillLibrary.open(tmp_path / "lib.db") as library:
        library.add_behaviour(*BEHAVIOURS[0][:2], "Pack.", BEHAVIOURS[0][2], calls=BEHAVIOURS[0][3])
        with SandboxSession(fresh, ScriptedLLM([]), library, condition="no-teaching") as s:
            assert "pack" not in s.space           # the baseline has the seed skills only
            for reply in (s.teach("wrap"), s.point("marker", (0.5, 0.1, 0.02)),
                          s.demo("tap", [(0.5, 0.0, 0.3), (0.5, 0.0, 0.2)])):
                assert reply.kind == "error" and "no-teaching" in reply.say
            assert s.mode == "ready" and s.teaching is None
        assert [r.name for r in library.behaviours()] == ["pack"] and library.skills() == []
        assert library.objects() == []
    with SkillLibrary.open(tmp_path / "other.db") as library, pytest.raises(DataError, match="condition: expected"):
        SandboxSession(fresh, ScriptedLLM([]), library, condition="teach")

"""Places taught by pointing at the bare table: used by goto and put, checked by `'ITEM' on 'PLACE'`, offered to
the planner, kept in the library across processes; and the copy of the table sees what the camera sees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fakes import ScriptedLLM

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from situated.envs.tabletop import TabletopEnv
from situated.program import Call
from situated.sandbox import SkillLibrary
from situated.sandbox.session import SandboxSession, parse_condition
from situated.sandbox.world import free_spot

ROOT = Path(__file__).resolve().parents[2]
PUT = {"goal": ["DUCK on SPOT"],
       "calls": ["pickup(DUCK)", "goto(SPOT)",
                 "release()"]}


def bare_table(env: TabletopEnv) -> tuple[float, float, float]:
    spot = free_spot(env.snapshot())
    assert spot is not None
    return spot


def test_pointing_at_the_bare_table_teaches_a_place_that_goto_and_put_use(fresh: TabletopEnv, tmp_path) -> None:
    x, y, _ = bare_table(fresh)
    u, v = (round(c) for c in fresh.camera.project((x, y, 0.0)))
    llm = ScriptedLLM([PUT])
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, llm, lib) as s:
        taught = s.point("spot", (u, v))
        assert taught.kind == "taught" and taught.taught.name == "spot"
        assert np.hypot(fresh.locations["spot"][0] - x, fresh.locations["spot"][1] - y) < 0.01   # lifted pixel
        assert next(o for o in s.objects if o.name == "spot").kind == "place"
        assert s.point("far_spot", (x + 0.1, y, 0.0)).kind == "taught"                            # or x y z
        shown = s.say("put the duck on spot")
        assert "SPOT" in json.dumps(llm.calls[0]["schema"])                   # offered to the planner
        assert shown.kind == "plan" and shown.plan.note == ""                 # the copy reaches the goal
        done = s.confirm()
        assert done.execution.ok and done.say == "Done.", done.say
        assert s.check("'duck' on 'spot'") and s.check("'duck' on 'table'")
        assert not s.check("'duck' on 'far_spot'") and not s.check("'ball' on 'spot'")
        assert "duck ON spot" in fresh.conditions() and s.table().where["duck"] == "spot"
        record = lib.get("spot")
        assert record.source == "pointed" and record.description == "A place the person pointed at."


def test_on_a_place_means_resting_on_the_table_within_6_cm(fresh: TabletopEnv) -> None:
    duck = fresh.world.centre("duck")
    away = np.array([-0.5, -0.87, 0.0])                     # from the duck toward free table (gift_bag, seed 0)
    for name, distance in (("near", 0.05), ("edge", 0.07), ("far", 0.16)):
        assert fresh.add_location(name, tuple(duck + distance * away)).ok
    assert fresh.holds(parse_condition("'duck' on 'near'")) and not fresh.holds(parse_condition("'duck' on 'edge'"))
    assert fresh.step(Call("pickup", ("duck",))).ok
    assert not fresh.holds(parse_condition("'duck' on 'near'"))                  # held: on nothing
    assert fresh.step(Call("goto", ("far",))).ok and fresh.step(Call("release")).ok
    assert fresh.holds(parse_condition("'duck' on 'far'")) and fresh.holds(parse_condition("not 'duck' on 'near'"))


def test_pointing_where_no_table_is_or_an_object_stands_is_not_a_place(fresh: TabletopEnv, tmp_path) -> None:
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, ScriptedLLM([]), lib) as s:
        assert s.point("sky", (0, 0)).say == "Pixel (0, 0) shows no table."
        assert s.point("high", (0.5, -0.3, 0.3)).say == "(0.50, -0.30, 0.30) is not on the table."
        ball = fresh.world.centre("ball")
        assert s.point("orange", (ball[0], ball[1], 0.0)).kind == "taught"     # an object there: it is named
        assert fresh.resolve("orange") == "ball" and "orange" not in fresh.locations


def test_a_place_survives_a_new_process_through_the_library(fresh: TabletopEnv, tmp_path) -> None:
    x, y, _ = bare_table(fresh)
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, ScriptedLLM([]), lib) as s:
        assert s.point("spot", (x, y, 0.0)).kind == "taught"
    code = f"""
import json, sys
sys.path.insert(0, {str(ROOT / 'tests')!r})
from fakes import ScriptedLLM
from situated.envs.tabletop import TabletopEnv
from situated.sandbox import SkillLibrary
from situated.sandbox.session import SandboxSession
env = TabletopEnv("gift_bag", seed=0)
with SkillLibrary.open({str(tmp_path / 'lib.db')!r}) as lib, SandboxSession(env, ScriptedLLM([{PUT!r}]), lib) as s:
    plan = s.say("put the duck on spot")
    done = s.confirm()
    print(json.dumps({{"place": list(env.locations["spot"]), "ok": done.execution.ok, "notes": s.notes,
                      "on": s.check("'duck' on 'spot'")}}))
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert np.allclose(out["place"][:2], (x, y), atol=1e-6) and out["notes"] == []
    assert out["ok"] and out["on"]


def test_the_copy_of_the_table_cannot_reach_what_the_camera_cannot_see(fresh: TabletopEnv, tmp_path) -> None:
    pick = {"calls": ["pickup(DUCK)"]}
    with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(fresh, ScriptedLLM([pick, pick]), lib) as s:
        # the duck falls under the table after the session has started: the planner still knows it
        fresh.world.client.resetBasePositionAndOrientation(fresh.world.bodies["duck"].uid, [0.5, 0.0, -0.3],
                                                           [0, 0, 0, 1])
        fresh.world.step(1)
        shown = s.say("pick up the duck")
        assert shown.plan.note == "Careful: on a copy of the table, pickup('duck'): I cannot see the duck."
        done = s.confirm()
        assert not done.execution.ok and done.say == "That did not work: pickup: I cannot see the duck."


def test_grab_and_putin_puts_an_item_at_a_place(fresh: TabletopEnv) -> None:
    assert fresh.add_location("spot", bare_table(fresh)).ok
    result = fresh.step(Call("grab_and_putin", ("candy", "spot")))
    assert result.ok, result.reason
    assert "+ candy ON spot" in result.changes and fresh.holds(parse_condition("'candy' on 'spot'"))

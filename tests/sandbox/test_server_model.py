"""A server model (`--model openai:...`) plans through the same checks as the embedded one: llama-cpp-python's own
OpenAI-compatible server on the 0.5B model answers under the JSON schema, the plan is tried on the copy of the
table before it is shown, and "Done." means the stated goal holds."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("pybullet")
pytest.importorskip("movement_primitives")

from fakes import llama_server
from situated.envs.tabletop import TabletopEnv
from situated.llm.openai import OpenAILLM
from situated.sandbox import SkillLibrary
from situated.sandbox.checking import try_plan
from situated.sandbox.session import SandboxSession


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """llama_cpp.server on the 0.5B model, with room for the sandbox's prompt."""
    with llama_server(n_ctx=8192, ready_within=120) as url:
        yield url


@pytest.mark.slow
def test_a_server_model_plans_through_the_same_checks(server: str, tmp_path) -> None:
    llm = OpenAILLM("qwen2.5-coder-0.5b", base_url=server, timeout=600, retries=0)
    env = TabletopEnv("gift_bag", seed=0)
    try:
        with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(env, llm, lib, scene="gift_bag") as s:
            shown = s.say("put the candy in the gift bag")
            assert shown.kind in ("plan", "teach", "unknown_object"), shown.say
            planned = [e.payload for e in lib.events(s.session_id) if e.kind == "plan"]
            if shown.kind == "plan":
                plan = shown.plan
                # what is shown either reaches its goal on the copy or says why it may not
                trial = try_plan(plan.calls, s.space, s.table(), plan.goal)
                assert trial.achieves or plan.note, (plan.text, plan.goal)
                assert planned and "goal" in planned[0]
                done = s.confirm()
                unmet = [c for c in plan.goal if not s.world.holds(c)]
                assert (done.say == "Done.") == (done.execution.ok and not unmet)
            usage = s.metrics()
            assert usage.model_calls >= 1 and usage.prompt_tokens > 1000
    finally:
        env.close()

"""Conversations' prompt states on disk: a new process restores the prefix it shares and answers as a cold one."""

from __future__ import annotations

from pathlib import Path

import pytest

from situated.llm.llamacpp_disk_states import MIN_DISK_TOKENS, DiskStates
from situated.llm.models import prompt_states_dir


def test_the_longest_shared_prefix_is_found_and_old_states_are_evicted(tmp_path: Path) -> None:
    disk = DiskStates(tmp_path / "states", keep=2)
    base = list(range(1000, 1000 + MIN_DISK_TOKENS))
    short, long_ = disk.write([*base, 1, 2], b"short"), disk.write([*base, 1, 2, 3, 4, 5], b"long")
    assert short is not None and long_ is not None
    assert disk.best([*base, 1, 2, 3, 9]) == (MIN_DISK_TOKENS + 3, long_)
    assert disk.read(long_) == (tuple([*base, 1, 2, 3, 4, 5]), b"long")
    assert disk.best(list(range(5000, 5000 + MIN_DISK_TOKENS))) is None    # nothing shared
    assert disk.write(base[:10], b"too short") is None                     # not worth a file
    disk.read(short)                                                         # used again: the newest
    disk.write([*base, 7], b"third")
    kept = {p.name for p in (tmp_path / "states").glob("*.tokens")}
    assert len(kept) == 2 and long_.name not in kept and short.name in kept
    disk.forget(short)
    assert not short.exists() and not short.with_suffix(".kv").exists()


def test_the_states_directory_is_chosen_by_the_environment(tmp_path: Path) -> None:
    assert prompt_states_dir({"SITUATED_PROMPT_STATES": "off"}) is None
    assert prompt_states_dir({"SITUATED_PROMPT_STATES": str(tmp_path)}) == tmp_path
    assert prompt_states_dir({"SITUATED_CACHE_DIR": str(tmp_path)}) == tmp_path / "prompt-states"


@pytest.mark.slow
def test_a_new_process_restores_the_prompt_and_answers_as_a_cold_one(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp", reason="needs llama-cpp-python")
    from situated.llm import llamacpp

    def fresh(states: Path | None) -> llamacpp.LlamaCppLLM:
        monkeypatch.setattr(llamacpp, "_ENGINES", {})  # a new engine, as a new process would load
        return llamacpp.LlamaCppLLM("qwen2.5-coder-0.5b", n_ctx=1024, n_threads=2, exact_prefix=False,
                                    prompt_states=states)

    system = "You plan for a robot arm. Objects: ball, cube, duck, tray, bag. Answer with one call. " * 12
    first = fresh(tmp_path).complete(system + "Request: grab the ball.\nCall:", max_tokens=6)
    assert first.cached_tokens == 0
    assert list(tmp_path.rglob("*.kv"))                                      # the fresh prompt left its state
    ask = system + "Request: put the duck in the tray.\nCall:"
    warm = fresh(tmp_path).complete(ask, max_tokens=6)
    cold = fresh(None).complete(ask, max_tokens=6)
    assert warm.cached_tokens >= MIN_DISK_TOKENS and cold.cached_tokens == 0
    assert warm.text == cold.text

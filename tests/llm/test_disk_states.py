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


def test_states_past_the_byte_budget_go_least_recently_used_first(tmp_path: Path) -> None:
    disk = DiskStates(tmp_path / "states", keep=10, max_bytes=3500)   # (a .tokens file adds 4 bytes a token)
    base = list(range(1000, 1000 + MIN_DISK_TOKENS))
    scene = disk.write([*base, 1], b"s" * 1000)          # a scene's prompt every process needs
    side = disk.write([*base, 2], b"q" * 300)            # a side question's
    assert scene is not None and side is not None
    disk.used(scene)                                     # restored again from memory by a later process
    library = disk.write([*base, 3], b"l" * 1000)        # one session's taught library: over the budget
    kept = {p.name for p in (tmp_path / "states").glob("*.tokens")}
    assert library is not None and kept == {scene.name, library.name}
    huge = disk.write([*base, 4], b"h" * 5000)           # bigger than the budget alone: the newest still stays
    assert huge is not None and {p.name for p in (tmp_path / "states").glob("*.tokens")} == {huge.name}
    disk.used(tmp_path / "states" / "gone.tokens")       # a state another process removed: no error


@pytest.mark.slow
def test_a_side_questions_prompt_is_kept_and_marked_used_when_restored_from_memory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp", reason="needs llama-cpp-python")
    from situated.llm import llamacpp

    def fresh(states: Path | None) -> llamacpp.LlamaCppLLM:
        monkeypatch.setattr(llamacpp, "_ENGINES", {})  # a new engine, as a new process would load
        return llamacpp.LlamaCppLLM("qwen2.5-coder-0.5b", n_ctx=2048, n_threads=2, exact_prefix=False,
                                    prompt_states=states, state_cache=4)

    plan = "You plan for a robot arm. Objects: ball, cube, duck, tray, bag. Answer with one call. " * 12
    side = "Say whether the word names a thing or an action. Answer thing or action. " * 8
    assert MIN_DISK_TOKENS <= fresh(None).count_tokens(side) < 2 * MIN_DISK_TOKENS   # shorter than a scene's
    first = fresh(tmp_path)
    first.complete(plan + "Request: grab the ball.\nCall:", max_tokens=4)
    asked = first.complete(side + "Word: stash\nAnswer:", max_tokens=3)
    assert asked.cached_tokens == 0                  # the side question evaluated from its start, then kept
    files = sorted(tmp_path.rglob("*.tokens"), key=lambda p: p.stat().st_mtime_ns)
    assert len(files) == 2
    scene_file = files[0]
    before = scene_file.stat().st_mtime_ns
    first.complete(plan + "Request: put the duck in the tray.\nCall:", max_tokens=4)   # the scene's from memory
    assert scene_file.stat().st_mtime_ns > before    # its disk copy is marked used too
    ask = side + "Word: ball\nAnswer:"
    warm = fresh(tmp_path).complete(ask, max_tokens=3)
    cold = fresh(None).complete(ask, max_tokens=3)
    assert warm.cached_tokens >= MIN_DISK_TOKENS and cold.cached_tokens == 0
    assert warm.text == cold.text


@pytest.mark.slow
def test_a_prompt_sharing_the_live_ones_first_part_is_restored_from_disk(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # a second scene's prompt shares the system prompt with the first scene's, live in the context: its state on
    # disk is restored all the same (it had been evaluated cold in every new process)
    pytest.importorskip("llama_cpp", reason="needs llama-cpp-python")
    from situated.llm import llamacpp

    def fresh(states: Path) -> llamacpp.LlamaCppLLM:
        monkeypatch.setattr(llamacpp, "_ENGINES", {})  # a new engine, as a new process would load
        return llamacpp.LlamaCppLLM("qwen2.5-coder-0.5b", n_ctx=2048, n_threads=2, exact_prefix=False,
                                    prompt_states=states)

    system = "You plan for a robot arm. Answer with one call. " * 16
    first, second = system + "Objects: ball, cube, tray. " * 2, system + "Objects: apple, pear, bowl, plate. " * 120
    done = fresh(tmp_path)
    done.complete(first + "Request: grab the ball.\nCall:", max_tokens=3)
    done.complete(second + "Request: grab the pear.\nCall:", max_tokens=3)     # mostly new: kept on disk too
    later = fresh(tmp_path)
    shared = later.complete(first + "Request: grab the cube.\nCall:", max_tokens=3).cached_tokens
    again = later.complete(second + "Request: grab the apple.\nCall:", max_tokens=3)
    assert again.cached_tokens > shared + llamacpp.CHUNK    # from disk, not only the live system prompt

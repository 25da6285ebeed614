"""The batched embedded backend on the real 0.5B model: calls from several threads decoded together answer as
the single-sequence backend does (greedy, grammar, stop, max_tokens), a shared prompt prefix is evaluated once,
and a failing call leaves the engine usable."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from fakes import accepts
from situated.errors import BackendError

llama_cpp = pytest.importorskip("llama_cpp", reason="needs llama-cpp-python")

from situated.llm import load  # noqa: E402
from situated.llm.base import Completion  # noqa: E402
from situated.llm.llamacpp_batched import BatchedLlamaCppLLM  # noqa: E402

pytestmark = pytest.mark.slow

MODEL = "qwen2.5-coder-0.5b"
PREFIX = ("You write short robot programs. Available actions: walk(obj), grab(obj), open(obj), close(obj). "
          "Objects: kitchen, fridge, mug, sink.\n") * 3
GRAMMAR = ('root ::= " " ("walk" | "grab" | "open" | "close") "(\'" ("kitchen" | "fridge" | "mug" | "sink") '
           '"\')\\n"')
# Tasks whose answer is clear to the model. ("close the fridge" is a near-tie between open and close that flips
# even in the single-sequence backend between a cold and a warm prompt; see llm/llamacpp_batched.py.)
TASKS = ["open the fridge", "grab the mug", "go to the kitchen", "walk to the sink"]


def prompts() -> list[str]:
    return [f"{PREFIX}Task {i}: {task}\n" for i, task in enumerate(TASKS, start=1)]


@pytest.fixture(scope="module")
def batched() -> BatchedLlamaCppLLM:
    try:
        return BatchedLlamaCppLLM(MODEL, sequences=4, n_ctx=1024, n_threads=1)
    except BackendError as exc:
        if "is not installed" in str(exc):
            pytest.skip(str(exc))
        raise


def together(calls: list[Callable[[], Completion]]) -> list[Completion | BaseException]:
    """Run the calls at once, one thread each; their answers (or errors) in order."""
    results: list[Completion | BaseException] = [RuntimeError("not run")] * len(calls)

    def call(i: int) -> None:
        try:
            results[i] = calls[i]()
        except BaseException as err:
            results[i] = err

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_concurrent_calls_answer_as_the_single_sequence_backend(batched: BatchedLlamaCppLLM) -> None:
    single = load(f"llamacpp:{MODEL}", n_ctx=1024, n_threads=1)
    expected = [single.complete(p, grammar=GRAMMAR, stop=["\n"], max_tokens=12) for p in prompts()]
    rounds = batched.rounds
    answers = together([lambda p=p: batched.complete(p, grammar=GRAMMAR, stop=["\n"], max_tokens=12)
                        for p in prompts()])
    assert all(isinstance(a, Completion) for a in answers), answers
    assert [a.text for a in answers] == [e.text for e in expected]
    assert all(accepts(GRAMMAR, a.text + "\n") and a.finish_reason == "stop" for a in answers)
    assert [a.completion_tokens for a in answers] == [e.completion_tokens for e in expected]
    # decoded together: far fewer decodes than the calls' tokens one sequence at a time would need
    assert batched.rounds - rounds < sum(a.completion_tokens for a in answers)


def test_a_shared_prefix_is_evaluated_once(batched: BatchedLlamaCppLLM) -> None:
    head = "Unrelated head so that nothing is cached yet. " * 12
    tails = [f"{head}Question {i}: what is {i} plus {i}?\n" for i in range(4)]
    before = batched.decoded_tokens
    answers = together([lambda t=t: batched.complete(t, max_tokens=3) for t in tails])
    head_tokens = batched.count_tokens(head)
    assert all(isinstance(a, Completion) for a in answers), answers
    copied = sorted(a.cached_tokens for a in answers)  # type: ignore[union-attr]
    assert copied[0] == 0 and all(c >= head_tokens - 1 for c in copied[1:])  # one evaluates, three copy
    assert batched.decoded_tokens - before < 2 * head_tokens


def test_stop_and_max_tokens(batched: BatchedLlamaCppLLM) -> None:
    stop, length = together([
        lambda: batched.complete("def add(a, b):\n    return", stop=["\n"], max_tokens=20),
        lambda: batched.complete("Count from one to one hundred: 1, 2, 3, 4,", max_tokens=5),
    ])
    assert isinstance(stop, Completion) and stop.finish_reason == "stop" and "\n" not in stop.text
    assert isinstance(length, Completion) and length.finish_reason == "length" and length.completion_tokens == 5


def test_a_bad_grammar_fails_its_call_only(batched: BatchedLlamaCppLLM) -> None:
    bad, good = together([
        lambda: batched.complete(prompts()[0], grammar="not a grammar", max_tokens=4),
        lambda: batched.complete(prompts()[1], grammar=GRAMMAR, stop=["\n"], max_tokens=12),
    ])
    assert isinstance(bad, BackendError) and "grammar" in str(bad)
    assert isinstance(good, Completion) and accepts(GRAMMAR, good.text + "\n")


def test_a_full_unified_cache_is_a_clear_error_and_the_engine_recovers() -> None:
    small = BatchedLlamaCppLLM(MODEL, sequences=2, n_ctx=256, total_ctx=256, kv_unified=True, n_threads=1)
    long_prompt = "word " * 150
    answers = together([lambda i=i: small.complete(f"{i} {long_prompt}", max_tokens=2) for i in range(2)])
    assert any(isinstance(a, BackendError) and "KV cache" in str(a) for a in answers), answers
    assert small.complete("Hello", max_tokens=2).completion_tokens == 2

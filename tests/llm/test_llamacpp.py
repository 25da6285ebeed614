"""The embedded llama.cpp backend end to end on the real 0.5B model (2 threads, short generations)."""

from __future__ import annotations

import re

import pytest

from situated.errors import BackendError

llama_cpp = pytest.importorskip("llama_cpp", reason="needs llama-cpp-python")

from situated.llm import load  # noqa: E402
from situated.llm.llamacpp import CHUNK, LlamaCppLLM  # noqa: E402

pytestmark = pytest.mark.slow

ROBOT_PREFIX = (
    "You write short robot programs. Available actions: walk(obj), grab(obj), open(obj), close(obj), "
    "putin(obj, container), switchon(obj). Objects: kitchen, fridge, mug, sink, microwave, salmon, plate, "
    "table, cabinet, bedroom, livingroom, tv, sofa, book, lamp.\n"
) * 3

ACTIONS_GRAMMAR = r"""
root   ::= line line? line?
line   ::= action "('" object "')\n"
action ::= "walk" | "grab" | "open" | "close" | "switchon"
object ::= "kitchen" | "fridge" | "mug" | "sink" | "microwave" | "salmon" | "tv" | "sofa"
"""
LINE = re.compile(r"(walk|grab|open|close|switchon)\('(kitchen|fridge|mug|sink|microwave|salmon|tv|sofa)'\)")



def test_prefix_reuse_evaluates_only_new_tokens(llm: LlamaCppLLM) -> None:
    prefix_tokens = llm.count_tokens(ROBOT_PREFIX)
    first = llm.complete(ROBOT_PREFIX + "Task: heat the salmon.\n", max_tokens=2)
    second = llm.complete(ROBOT_PREFIX + "Task: watch tv.\n", max_tokens=2)
    assert first.prompt_tokens > prefix_tokens > 50
    assert second.cached_tokens >= prefix_tokens + 1 - CHUNK     # whole chunks of it (BOS + prefix)
    assert second.cached_tokens % CHUNK == 0


def test_a_conversation_turn_evaluates_only_what_it_adds(llm: LlamaCppLLM) -> None:
    """`exact_prefix=False` (the sandbox's turns): the next turn reuses the last prompt, the answer generated
    after it and the partial last chunk; the exact mode re-evaluates from the last whole chunk."""
    chat = LlamaCppLLM("qwen2.5-coder-0.5b", n_ctx=2048, n_threads=2, exact_prefix=False)
    first_prompt = ROBOT_PREFIX + "Task: heat the salmon. First line:"
    first = chat.complete(first_prompt, max_tokens=12, stop=["\n"])
    said = first_prompt + first.text + "\nTask: watch tv.\n"
    second = chat.complete(said, max_tokens=4)
    exact = llm.complete(said, max_tokens=4)
    assert first.completion_tokens > 2
    # the new message, give or take the tokens at the seam with the answer (its last token was never evaluated)
    assert second.prompt_tokens - second.cached_tokens <= chat.count_tokens("\nTask: watch tv.\n") + 3
    assert exact.cached_tokens % CHUNK == 0 and exact.cached_tokens < second.cached_tokens


def test_exact_logits_hold_after_conversation_turns(llm: LlamaCppLLM) -> None:
    """A conversation shares the engine; prompts asked in the exact mode afterwards keep their fresh logits."""
    prompt = ROBOT_PREFIX + "Task: put the mug in the sink.\ndef task():\n\t"
    options = ["walk('kitchen')", "grab('mug')"]
    llm.reuse_prefix = False
    try:
        fresh = llm.score(prompt, options).logprobs
    finally:
        llm.reuse_prefix = True
    chat = LlamaCppLLM("qwen2.5-coder-0.5b", n_ctx=2048, n_threads=2, exact_prefix=False)
    done = chat.complete(prompt[:-30], max_tokens=6)
    chat.complete(prompt[:-30] + done.text + " ok", max_tokens=2)
    assert llm.score(prompt, options).logprobs == fresh


def test_alternating_prompts_both_stay_warm(llm: LlamaCppLLM) -> None:
    main = ROBOT_PREFIX + "Task: put the mug in the sink.\ndef task():\n"
    check = "Answer yes or no. " * 40 + "Is the mug in the sink?"
    llm.complete(main, max_tokens=2)
    llm.complete(check, max_tokens=2)
    back = llm.complete(main + "\twalk('kitchen')\n", max_tokens=2)
    again = llm.complete(check + " Is the fridge open?", max_tokens=2)
    assert back.cached_tokens >= llm.count_tokens(main) + 1 - CHUNK
    assert again.cached_tokens >= llm.count_tokens(check) + 1 - CHUNK


def test_a_prompt_s_logits_do_not_depend_on_what_ran_before(llm: LlamaCppLLM) -> None:
    """Greedy results must not move with task order, resumes or repairs: a prompt's log-probabilities are
    bit-for-bit those of a fresh evaluation, after a prompt sharing its prefix, after an unrelated one and
    after generating from the prompt itself (llama.cpp's numbers depend on where batches start)."""
    prompt = ROBOT_PREFIX + "Task: put the mug in the sink.\ndef task():\n\t"
    options = ["walk('kitchen')", "grab('mug')", "open('fridge')"]
    llm.complete("unrelated text " * 40, max_tokens=1)
    llm.reuse_prefix = False
    try:
        fresh = llm.score(prompt, options).logprobs
        fresh_text = llm.complete(prompt, max_tokens=12).text
    finally:
        llm.reuse_prefix = True
    llm.complete(ROBOT_PREFIX + "Task: heat the salmon.\n", max_tokens=3)
    after_shared = llm.score(prompt, options)
    assert after_shared.cached_tokens > 0 and after_shared.logprobs == fresh
    assert llm.complete(prompt, max_tokens=12).text == fresh_text
    assert llm.score(prompt + "walk", options).cached_tokens > 0          # after its own generation
    assert llm.score(prompt, options).logprobs == fresh
    assert llm.complete("x " * 30 + prompt, max_tokens=1).cached_tokens == 0
    assert llm.score(prompt, options).logprobs == fresh


def test_stop_sequence_cuts_the_text(llm: LlamaCppLLM) -> None:
    done = llm.complete("def add(a, b):\n    return", stop=["\n"], max_tokens=20)
    assert done.finish_reason == "stop"
    assert "\n" not in done.text
    assert "a" in done.text and "b" in done.text


def test_max_tokens_reports_length(llm: LlamaCppLLM) -> None:
    done = llm.complete("Count from one to one hundred: 1, 2, 3, 4,", max_tokens=5)
    assert done.finish_reason == "length"
    assert done.completion_tokens == 5
    assert done.text.strip()


def test_grammar_constrains_every_line(llm: LlamaCppLLM) -> None:
    done = llm.complete(ROBOT_PREFIX + "Task: heat the salmon.\n", grammar=ACTIONS_GRAMMAR, max_tokens=24)
    lines = done.text.splitlines()
    assert 1 <= len(lines) <= 3
    assert all(LINE.fullmatch(line) for line in lines), done.text


PROMPTS = [
    ROBOT_PREFIX + "Task: heat the salmon in the microwave.\n",
    "grab('mug')\n",
]


@pytest.mark.parametrize("prompt", PROMPTS)
def test_greedy_first_matches_full_grammar_sampling(llm: LlamaCppLLM, prompt: str) -> None:
    full = LlamaCppLLM("qwen2.5-coder-0.5b", n_ctx=2048, n_threads=2, grammar_mode="full")
    fast = llm.complete(prompt, grammar=ACTIONS_GRAMMAR, max_tokens=16)
    plain = full.complete(prompt, grammar=ACTIONS_GRAMMAR, max_tokens=16)
    assert fast.text == plain.text
    assert fast.finish_reason == plain.finish_reason


def test_greedy_first_matches_the_library_path_with_a_penalty(llm: LlamaCppLLM) -> None:
    prompt = PROMPTS[0]
    fast = llm.complete(prompt, grammar=ACTIONS_GRAMMAR, max_tokens=16, frequency_penalty=0.8)
    library = llm._engine.llama.create_completion(
        prompt,
        max_tokens=16,
        temperature=0.0,
        frequency_penalty=0.8,
        repeat_penalty=1.0,
        grammar=llama_cpp.LlamaGrammar.from_string(ACTIONS_GRAMMAR),
    )
    assert fast.text == library["choices"][0]["text"]


def test_json_answer_follows_the_schema(llm: LlamaCppLLM) -> None:
    schema = {
        "type": "object",
        "properties": {"action": {"enum": ["walk", "grab", "open"]}, "target": {"type": "string"}},
        "required": ["action", "target"],
        "additionalProperties": False,
    }
    messages = [
        {"role": "user", "content": "The robot must open the fridge. Give the action and its target."}
    ]
    value = llm.json(messages, schema, max_tokens=40)
    assert set(value) == {"action", "target"}
    assert value["action"] in ("walk", "grab", "open")


def test_bad_inputs_are_backend_errors(llm: LlamaCppLLM, tmp_path) -> None:
    with pytest.raises(BackendError, match="invalid GBNF grammar"):
        llm.complete("x", grammar="this is not a grammar", max_tokens=2)
    with pytest.raises(BackendError, match="no such model file"):
        load(f"llamacpp:{tmp_path / 'absent.gguf'}")
    with pytest.raises(BackendError, match="context holds 2048"):
        llm.complete("walk " * 2100, max_tokens=2)


def test_the_sandbox_commands_open_the_model_as_a_conversation() -> None:
    from situated.cli.models import CONVERSATION_STATES, open_model

    chat = open_model("llamacpp:qwen2.5-coder-0.5b", threads=2, n_ctx=2048, conversation=True)
    plain = open_model("llamacpp:qwen2.5-coder-0.5b", threads=2, n_ctx=2048)
    assert chat.exact_prefix is False and plain.exact_prefix is True  # type: ignore[attr-defined]
    assert chat._engine.state_cache >= CONVERSATION_STATES  # type: ignore[attr-defined]


def test_one_family_of_prompts_does_not_push_another_out_of_the_saved_states() -> None:
    """Sessions on one scene share a long prompt prefix: each new one replaces the last in the saved states, so a
    prompt of another scene asked afterwards still finds its own prefix warm (two saved states here)."""
    llm = LlamaCppLLM("qwen2.5-coder-0.5b", n_ctx=1536, n_threads=2, state_cache=2)
    other = "Answer yes or no about the kitchen. " * 20
    llm.complete(other + "Is the fridge open?", max_tokens=1)
    for task in ("heat the salmon", "watch tv", "put the mug in the sink"):   # one family after the other prompt
        llm.complete(ROBOT_PREFIX + f"Task: {task}.\n" + "Think step by step. " * 12, max_tokens=1)
    back = llm.complete(other + "Is the sink empty?", max_tokens=1)
    assert back.cached_tokens >= llm.count_tokens(other) + 1 - CHUNK

"""Jump-forward decoding: the text a JSON grammar forces is appended without model steps, and answers stay valid."""

from __future__ import annotations

import json

import pytest

from situated.llm.jump_forward import JsonSpacing

llama_cpp = pytest.importorskip("llama_cpp", reason="needs llama-cpp-python")

from llama_cpp.llama_grammar import json_schema_to_gbnf  # noqa: E402

from situated.llm import grammar_sampling as gs  # noqa: E402
from situated.llm.llamacpp import LlamaCppLLM  # noqa: E402


def test_spacing_follows_json_dumps_outside_strings_only() -> None:
    spacing = JsonSpacing(canonical=True)
    spacing.feed('{"a":')
    assert spacing.wants_space() and not spacing.in_string
    spacing.feed(' "x\\"y')
    assert spacing.in_string and not spacing.wants_space()  # an escaped quote does not end the string
    spacing.feed('",')
    assert not spacing.in_string and spacing.wants_space()
    spacing.feed(" ")
    assert not spacing.wants_space()  # one space, as json.dumps writes it
    spacing.feed('["b"')
    assert not spacing.wants_space()


def _forced(llm: LlamaCppLLM, schema: dict, canonical: bool = True) -> tuple[str, bool]:
    engine = llm._engine
    grammar = gs.init_grammar(engine.vocab, json_schema_to_gbnf(json.dumps(schema)), "test")
    try:
        return engine.forced_text.run(grammar, JsonSpacing(canonical), 200)
    finally:
        llama_cpp.llama_sampler_free(grammar)


def _call_schema(calls: list[str]) -> dict:
    return {"type": "object", "properties": {"call": {"enum": calls}}, "required": ["call"],
            "additionalProperties": False}


def test_a_grammar_with_one_answer_is_written_whole_without_the_model(llm: LlamaCppLLM) -> None:
    text, done = _forced(llm, _call_schema(["release()"]))
    assert (text, done) == ('{"call": "release()"}', True)


def test_forcing_stops_where_the_grammar_offers_a_choice(llm: LlamaCppLLM) -> None:
    assert _forced(llm, _call_schema(["pickup(BALL)", "pickup(CANDY)"])) == ('{"call": "pickup(', False)
    free = {"type": "object", "properties": {"say": {"type": "string"}}, "required": ["say"],
            "additionalProperties": False}
    assert _forced(llm, free) == ('{"say": "', False)  # free text is the model's


def test_without_canonical_spacing_the_model_chooses_each_optional_space(llm: LlamaCppLLM) -> None:
    assert _forced(llm, _call_schema(["release()"]), canonical=False) == ("{", False)  # `{` or `{ `: the model's


def _steps(llm: LlamaCppLLM, monkeypatch: pytest.MonkeyPatch, messages: list[dict], schema: dict) -> tuple[object, int]:
    counted = {"n": 0}
    select = gs.GreedyFirstGrammar.select

    def counting(self: gs.GreedyFirstGrammar) -> int | None:
        counted["n"] += 1
        return select(self)

    monkeypatch.setattr(gs.GreedyFirstGrammar, "select", counting)
    value = llm.json(messages, schema, max_tokens=120)
    monkeypatch.setattr(gs.GreedyFirstGrammar, "select", select)
    return value, counted["n"]


def test_json_answers_take_fewer_model_steps_and_still_follow_the_schema(
        llm: LlamaCppLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    schema = {"type": "object",
              "properties": {"goal": {"type": "array", "maxItems": 2,
                                      "items": {"enum": ["CANDY in GIFT_BAG", "BALL in GIFT_BAG"]}},
                             "calls": {"type": "array", "minItems": 1, "maxItems": 4,
                                       "items": {"enum": ["pickup(CANDY)", "pickup(BALL)", "goto(GIFT_BAG)",
                                                          "release()"]}}},
              "required": ["goal", "calls"], "additionalProperties": False}
    messages = [{"role": "system", "content": "Answer with JSON: the goal and the robot's calls."},
                {"role": "user", "content": "Put the ball in the gift bag."}]
    plain, plain_steps = _steps(llm, monkeypatch, messages, schema)
    llm.jump_forward = True
    try:
        jumped, jumped_steps = _steps(llm, monkeypatch, messages, schema)
    finally:
        llm.jump_forward = False
    assert set(jumped) == {"goal", "calls"} and jumped["calls"]
    assert set(plain) == {"goal", "calls"}
    assert jumped_steps < plain_steps

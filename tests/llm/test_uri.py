"""Model URIs are read in one place (llm/uri.py), and every backend says its chat template from its URI."""

from __future__ import annotations

import pytest

from fakes import ScriptedLLM
from situated.errors import BackendError
from situated.llm import ModelURI, load, parse_uri
from situated.llm.cassette import wrap
from situated.llm.chat_template import QWEN_CHATML, RAW, ChatTemplate, chat_template_for


def test_a_uri_names_its_backend_and_target() -> None:
    embedded = parse_uri("llamacpp:/models/my model.gguf")
    assert embedded == ModelURI("llamacpp", "/models/my model.gguf") and embedded.embedded
    server = parse_uri("openai:meta/llama-3:70b")        # only the first colon separates
    assert (server.scheme, server.target, server.embedded) == ("openai", "meta/llama-3:70b", False)
    assert str(server) == "openai:meta/llama-3:70b"


@pytest.mark.parametrize(("uri", "problem"), [
    ("qwen2.5-coder-1.5b", "expected 'llamacpp:<name|path.gguf>' or 'openai:<model>'"),
    ("llamacpp:", "expected 'llamacpp:<name|path.gguf>' or 'openai:<model>'"),
    ("ollama:llama3", "unknown backend 'ollama' (known: llamacpp, openai)"),
])
def test_a_bad_uri_says_what_is_wrong_and_load_says_the_same(uri: str, problem: str) -> None:
    with pytest.raises(BackendError) as parsed:
        parse_uri(uri)
    with pytest.raises(BackendError) as loaded:
        load(uri)
    assert str(parsed.value) == str(loaded.value) == f"bad model uri {uri!r}: {problem}"


def test_the_embedded_qwen_models_chat_in_chatml_others_take_the_prompt_as_it_is() -> None:
    assert chat_template_for("llamacpp:qwen2.5-coder-1.5b") == QWEN_CHATML
    assert chat_template_for("llamacpp:/models/Qwen2.5-7B.gguf") == QWEN_CHATML
    assert chat_template_for("openai:qwen2.5") == RAW                 # the server applies its own
    assert chat_template_for("llamacpp:/models/llama.gguf") == RAW
    assert chat_template_for("scripted") == RAW                       # a test double's uri names no backend
    text = "Output: {'WALK': [...]}"                                  # braces in a prompt stay as they are
    assert RAW.wrap(text) == text
    assert QWEN_CHATML.wrap(text).endswith("<|im_start|>user\n" + text + "<|im_end|>\n<|im_start|>assistant\n")
    with pytest.raises(ValueError, match="placeholder"):
        ChatTemplate("no place for the prompt")


def test_a_replayed_model_knows_its_template_without_loading(tmp_path) -> None:
    cassette = tmp_path / "c.jsonl"
    cassette.write_text("")
    replayed = wrap("llamacpp:no-such-model-here", cassette, mode="replay")   # never loaded
    assert replayed.chat_template == RAW
    assert wrap("llamacpp:qwen2.5-coder-0.5b", cassette, mode="replay").chat_template == QWEN_CHATML
    assert wrap(ScriptedLLM([]), cassette, mode="replay").chat_template == RAW

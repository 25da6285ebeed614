"""A llama.cpp built with AMX kernels loads its weights into plain CPU buffers (its AMX ones crash llama_decode)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from situated.llm import llamacpp_buffers as buffers

llama_cpp = pytest.importorskip("llama_cpp")


@pytest.fixture
def amx_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(buffers.ENV, raising=False)
    monkeypatch.setattr(buffers, "_built_with_amx", lambda: True)


def test_an_amx_build_loads_without_the_extra_buffers(amx_build: None) -> None:
    assert buffers.model_params().use_extra_bufts is False
    with buffers.loading_with_safe_buffers():
        # what llama_cpp.Llama.__init__ reads while it loads
        assert llama_cpp.llama_cpp.llama_model_default_params().use_extra_bufts is False
    assert llama_cpp.llama_cpp.llama_model_default_params().use_extra_bufts is True


def test_other_builds_keep_llama_cpp_s_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(buffers.ENV, raising=False)
    monkeypatch.setattr(buffers, "_built_with_amx", lambda: False)
    assert buffers.model_params().use_extra_bufts is True
    with buffers.loading_with_safe_buffers():
        assert llama_cpp.llama_cpp.llama_model_default_params().use_extra_bufts is True


def test_the_environment_overrides_the_guess(amx_build: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(buffers.ENV, "1")
    assert buffers.extra_buffers_allowed()
    monkeypatch.setenv(buffers.ENV, "0")
    monkeypatch.setattr(buffers, "_built_with_amx", lambda: False)
    assert not buffers.extra_buffers_allowed()


def test_the_defaults_come_back_when_a_load_fails(amx_build: None) -> None:
    original = llama_cpp.llama_cpp.llama_model_default_params
    with pytest.raises(ValueError), buffers.loading_with_safe_buffers():
        raise ValueError("no such model file")
    assert llama_cpp.llama_cpp.llama_model_default_params is original


def test_the_embedded_model_answers_with_plain_buffers() -> None:
    """The real library takes the setting: a fresh process with the extra buffers off loads and generates."""
    code = (
        "from situated.errors import BackendError\n"
        "from situated.llm import load\n"
        "try:\n"
        "    m = load('llamacpp:qwen2.5-coder-0.5b', n_ctx=512, n_threads=2)\n"
        "except BackendError as exc:\n"
        "    print('SKIP', exc); raise SystemExit(0)\n"
        "print('TEXT', m.complete('def add(a, b):\\n    return', max_tokens=4).text)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, buffers.ENV: "0"})
    assert out.returncode == 0, out.stderr[-2000:]
    if out.stdout.startswith("SKIP"):
        pytest.skip(out.stdout)
    assert "a + b" in out.stdout

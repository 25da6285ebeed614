"""Chat templates: how a model wants one user message, so that a planner can hand it a prompt as a chat turn.

Every backend says its own (`LLM.chat_template`) from its URI alone, so a replayed cassette knows it without
loading weights: the embedded Qwen models' ChatML (their GGUF's own template, checked against it in
tests/planners/test_eai.py), and the prompt as it is otherwise (an OpenAI-compatible server that lacks
`/completions` wraps the prompt as a user message itself).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import BackendError
from .uri import parse_uri


@dataclass(frozen=True)
class ChatTemplate:
    """`text` around a `{prompt}` placeholder (the one user message; the assistant's turn starts where it ends)
    and `turn_break`, what follows an assistant's answer before the next user message ("" when unknown)."""

    text: str
    turn_break: str = ""

    def __post_init__(self) -> None:
        if "{prompt}" not in self.text:
            raise ValueError("a prompt template needs a '{prompt}' placeholder")

    @property
    def head(self) -> str:
        """What comes before the user's message."""
        return self.text.partition("{prompt}")[0]

    @property
    def tail(self) -> str:
        """What comes after the user's message, up to the start of the assistant's answer."""
        return self.text.partition("{prompt}")[2]

    def wrap(self, prompt: str) -> str:
        """`prompt` as the one user message (braces in it are kept as they are)."""
        return self.head + prompt + self.tail


RAW = ChatTemplate("{prompt}", "\n\n")
"""The prompt as is (a completion model)."""

QWEN_CHATML = ChatTemplate(
    "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
    "<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n",
    "<|im_end|>\n<|im_start|>user\n",
)
"""The embedded Qwen models' own chat template (their GGUF's), with the prompt as the one user message."""


def chat_template_for(uri: str) -> ChatTemplate:
    """The template of the model at `uri`: QWEN_CHATML for an embedded Qwen model, RAW otherwise (also for a
    URI that names no backend, such as a test double's)."""
    try:
        parsed = parse_uri(uri)
    except BackendError:
        return RAW
    return QWEN_CHATML if parsed.embedded and "qwen" in parsed.target.lower() else RAW

"""The LLM protocol every backend implements, its value types, and checking JSON answers against a schema."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from situated import files
from situated.errors import BackendError, DataError
from situated.llm.chat_template import ChatTemplate

FinishReason = Literal["stop", "length"]


@dataclass(frozen=True)
class Completion:
    """One completion: `finish_reason` is "length" when `max_tokens` (or the context) cut it off."""

    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Scores:
    """Log-probabilities of continuations of one prompt (natural log, summed over each continuation's tokens)."""

    logprobs: tuple[float, ...]
    prompt_tokens: int = 0
    cached_tokens: int = 0
    seconds: float = 0.0


@runtime_checkable
class ScoringLLM(Protocol):
    """A backend that can also score given continuations of a prompt (for decisions by probability)."""

    uri: str

    def score(self, prompt: str, continuations: Sequence[str]) -> Scores: ...


@runtime_checkable
class LLM(Protocol):
    """A text-completion model; `grammar` is GBNF text (llama.cpp grammar syntax)."""

    uri: str
    chat_template: ChatTemplate
    """How the model wants a prompt as one chat message (`chat_template_for(uri)`)."""

    def complete(self, prompt: str, *, stop: Sequence[str] = (), max_tokens: int = 256, temperature: float = 0.0,
                 frequency_penalty: float = 0.0, grammar: str | None = None, seed: int = 0) -> Completion: ...

    def json(self, messages: list[dict], schema: dict, *, max_tokens: int = 512, temperature: float = 0.0,
             seed: int = 0) -> Any: ...

    def count_tokens(self, text: str) -> int: ...


def parse_json(text: str, schema: dict, where: str) -> Any:
    """Parse `text` as JSON (with `files.parse_json`: bounded nesting and numbers, no NaN) and check it against
    `schema`; BackendError saying what is wrong otherwise."""
    try:
        value = files.parse_json(text, "answer")
    except DataError as exc:
        raise BackendError(f"{where}: answer is not JSON ({exc}): {text[:120]!r}") from None
    problems = schema_problems(value, schema)
    if problems:
        raise BackendError(f"{where}: answer does not match the schema: {'; '.join(problems[:3])}")
    return value


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def schema_problems(value: Any, schema: dict, path: str = "$") -> list[str]:
    """Problems of `value` under a JSON-schema subset (type, enum, const, properties, required,
    additionalProperties, items, min/maxItems, anyOf/oneOf, min/maxLength); empty when valid."""
    if not isinstance(schema, dict) or not schema:
        return []
    problems: list[str] = []
    for key in ("anyOf", "oneOf"):
        if key in schema:
            if not any(not schema_problems(value, sub, path) for sub in schema[key]):
                problems.append(f"{path}: matches none of {key}")
            return problems
    expected = schema.get("type")
    if expected is not None:
        names = expected if isinstance(expected, list) else [expected]
        numeric = ("integer", "number")
        ok = any(
            isinstance(value, _TYPES.get(n, object)) and not (n in numeric and isinstance(value, bool))
            for n in names
        )
        if not ok:
            return [f"{path}: expected {'/'.join(names)}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} not in {schema['enum']!r}")
    if "const" in schema and value != schema["const"]:
        problems.append(f"{path}: {value!r} != {schema['const']!r}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        problems += [f"{path}: missing {k!r}" for k in schema.get("required", []) if k not in value]
        for k, v in value.items():
            if k in props:
                problems += schema_problems(v, props[k], f"{path}.{k}")
            elif schema.get("additionalProperties") is False:
                problems.append(f"{path}: unexpected key {k!r}")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            problems.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems.append(f"{path}: more than {schema['maxItems']} items")
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                problems += schema_problems(item, schema["items"], f"{path}[{i}]")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            problems.append(f"{path}: shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            problems.append(f"{path}: longer than {schema['maxLength']}")
    return problems

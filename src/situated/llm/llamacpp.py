"""The embedded default backend: llama.cpp through llama-cpp-python, one model per process and path.

Prompt-prefix reuse: the KV cache of the last prompt stays in the context; the next prompt evaluates only
the tokens after the longest common prefix. Planners alternate between prompts (main plan prompt, assertion
check), so before a switch discards a long evaluated prefix its KV state is saved into a small LRU
(`state_cache` entries) and restored when a later prompt shares more with it than with the live context. A saved
state replaces the saved states it shares most of itself with (its family: the same scene's or examples' prompt),
so that one family does not push the others out.

Reproducible logits: llama.cpp's numbers depend on how a prompt is cut into batches (measured: up to 0.19 nats
between a prompt evaluated fresh and the same prompt after reusing a one-token prefix). So a prompt is always
evaluated in chunks of `CHUNK` tokens at fixed positions from its start, and a cached prefix is reused only in
whole chunks that an earlier prompt evaluation computed (never generated tokens, computed one at a time, and never
a partial last chunk). The logits of a prompt are then the same whatever ran before -- task order, resumes,
repairs, saved states -- at the price of re-evaluating at most `CHUNK` - 1 tokens and the generated text.

A conversation (`exact_prefix=False`, the sandbox's turns) gives that guarantee up for speed: each turn's prompt
is the last one plus the answer and a new message, and every cached token it shares is reused, the generated
answer and the partial last chunk included, so a turn evaluates only its new message. Its logits then depend, by
llama.cpp's batch numerics, on how the shared prefix was computed; the same sequence of calls still gives the same
answers.

Module-level state: `_ENGINES` caches one loaded model per (path, n_ctx) for the whole process. It is the one
documented exception to "no global state": loading a gigabyte of weights per planner would be absurd, and the
engine's lock serialises calls from threads.
"""

from __future__ import annotations

import json as jsonlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from situated.errors import BackendError
from situated.llm.base import Completion, Scores, parse_json
from situated.llm.chat_template import chat_template_for
from situated.llm.llamacpp_buffers import loading_with_safe_buffers
from situated.llm.llamacpp_disk_states import MIN_DISK_TOKENS, DiskStates
from situated.llm.models import REGISTRY, Progress, ensure_model

try:
    import llama_cpp
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    from situated.llm import grammar_sampling as gs
except ImportError:  # pragma: no cover - exercised only without the optional dependency
    llama_cpp = None

DEFAULT_N_CTX = 8192
MIN_STATE_TOKENS = 64
"""Only KV prefixes at least this long are worth saving into (or restoring from) the state LRU."""
REWRITE_TOKENS = 1024
"""A conversation's prompt that evaluates at least this many new tokens after its reused prefix (a lesson changed
the API near the start) leaves its state on disk too."""
CHUNK = 64
"""Prompts are evaluated in batches of this many tokens at fixed positions; prefixes are reused in whole chunks."""


@dataclass
class _SavedState:
    tokens: tuple[int, ...]
    data: Any  # ctypes byte array from llama_state_get_data
    size: int
    reusable: int = 0
    """Leading tokens whose KV came from whole prompt chunks (what a later prompt may reuse)."""
    disk: Path | None = None
    """The disk state (`.tokens` file) this one extends, if any: marked used whenever this one is restored."""


class _Engine:
    """One `llama_cpp.Llama` with its lock and its LRU of saved KV states."""

    def __init__(self, path: Path, n_ctx: int, n_threads: int, seed: int, state_cache: int,
                 lora_path: Path | None = None) -> None:
        with loading_with_safe_buffers():
            self.llama = llama_cpp.Llama(
                model_path=str(path),
                lora_path=str(lora_path) if lora_path is not None else None,
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                seed=seed,
                verbose=False,
            )
        if lora_path is not None and not getattr(self.llama, "_lora_adapter", None):
            self.llama.close()  # llama-cpp-python checks the adapter against None, not against a NULL pointer
            raise RuntimeError(f"Failed to initialize LoRA adapter from lora path: {lora_path}")
        self.lock = threading.Lock()
        self.states: OrderedDict[tuple[int, ...], _SavedState] = OrderedDict()
        self.state_cache = state_cache
        self.n_vocab = self.llama.n_vocab()
        self.vocab = self.llama._model.vocab
        self.reusable = 0
        """Leading live tokens whose KV came from whole chunks of a prompt evaluation."""
        self._forced_text: Any = None
        self.disk: DiskStates | None = None
        """Saved states on disk for conversations (`LlamaCppLLM(prompt_states=...)`); None: memory only."""
        self.live_disk: Path | None = None
        """The disk state the live context extends (read from it or written as it), if any."""

    @property
    def ctx(self) -> Any:
        return self.llama.ctx

    @property
    def forced_text(self) -> Any:
        """The model's `jump_forward.ForcedText` (its single-character tokens), built on first use."""
        if self._forced_text is None:
            from situated.llm.jump_forward import ForcedText

            self._forced_text = ForcedText(self.llama, self.vocab, self.n_vocab)
        return self._forced_text

    def live_tokens(self) -> list[int]:
        return self.llama.input_ids[: self.llama.n_tokens].tolist()

    def _save(self) -> None:
        tokens = tuple(self.live_tokens())
        if len(tokens) < MIN_STATE_TOKENS or self.state_cache <= 0 or tokens in self.states:
            return
        data, written = self._state()
        for key in [k for k in self.states if common_prefix(k, tokens) >= max(len(k) // 2, MIN_STATE_TOKENS)]:
            # dominated (`key` is a prefix of the new state) or of its family (most of `key` is shared: an earlier
            # session on the same scene's prompt, an earlier task under the same examples); the newer keeps the
            # shared prefix warm, and other families' states stay in the LRU
            del self.states[key]
        self.states[tokens] = _SavedState(tokens, data, written, self.reusable, self.live_disk)
        while len(self.states) > self.state_cache:
            self.states.popitem(last=False)

    def _state(self) -> tuple[Any, int]:
        """The context's state as llama.cpp writes it: a ctypes byte array and how many bytes it holds."""
        size = llama_cpp.llama_state_get_size(self.ctx)
        data = (llama_cpp.ctypes.c_uint8 * int(size))()
        return data, int(llama_cpp.llama_state_get_data(self.ctx, data, size))

    def _restore(self, state: _SavedState) -> None:
        if llama_cpp.llama_state_set_data(self.ctx, state.data, state.size) != state.size:
            raise BackendError("llama.cpp refused to restore a saved KV state")
        n = len(state.tokens)
        self.llama.input_ids[:n] = state.tokens
        self.llama.n_tokens = n
        self.reusable = state.reusable
        self.live_disk = state.disk
        if state.tokens in self.states:
            self.states.move_to_end(state.tokens)
        if state.disk is not None and self.disk is not None:
            self.disk.used(state.disk)

    def prepare(self, tokens: list[int], reuse_prefix: bool = True, exact: bool = True) -> int:
        """Evaluate `tokens`, reusing the longest cached prefix (in whole chunks when `exact`, else every shared
        token); return how many were reused.

        `reuse_prefix=False` clears the context first and evaluates every token (a baseline for benchmarks).
        """
        if not reuse_prefix:
            self._clear()
            self._evaluate(tokens, 0)
            return 0

        def usable(cached: Sequence[int], reusable: int) -> int:
            if exact:
                return self._usable(cached, reusable, tokens)
            return min(common_prefix(cached, tokens), len(tokens) - 1)

        common = usable(self.live_tokens(), self.reusable)
        best = max(self.states.values(), key=lambda s: usable(s.tokens, s.reusable), default=None)
        best_common = usable(best.tokens, best.reusable) if best else 0
        if best is not None and best_common >= max(common + MIN_STATE_TOKENS, MIN_STATE_TOKENS):
            self._save()
            self._restore(best)
            common = best_common
        elif self.llama.n_tokens - common >= MIN_STATE_TOKENS:
            self._save()
        if not exact and self.disk is not None and len(tokens) - common >= MIN_DISK_TOKENS:
            # much to evaluate: the disk may hold more of it (another scene's prompt shares the live one's first
            # part, so a scene first met in this process was evaluated cold though a state of it was on disk)
            common = self._from_disk(tokens, common)
        reuse = common
        if not exact and self.disk is not None and reuse < MIN_DISK_TOKENS:
            reuse = 0   # a new prompt (a side question's first call shares only the chat template's first tokens)
        if reuse <= 0 or not self.llama._ctx.kv_cache_seq_rm(-1, reuse, -1):
            reuse = 0
            self._clear()
        self.llama.n_tokens = reuse
        self._evaluate(tokens, reuse)
        if not exact and self.disk is not None and (reuse == 0 or len(tokens) - reuse >= REWRITE_TOKENS):
            # a new prompt, evaluated from its start in whole chunks, is restored exactly by a later process; one
            # mostly new (a taught library's API) is worth a file too
            self._to_disk()
        return reuse

    def _from_disk(self, tokens: list[int], common: int) -> int:
        """Restore the disk state sharing the longest prefix with `tokens`; how many tokens it gives (0: none), in
        whole chunks, so the rest is evaluated in the chunks a fresh evaluation would use (the same logits). Keeps the
        live context (and returns `common`, what it gives) unless the disk gives more."""
        found = self.disk.best(tokens) if self.disk is not None else None
        if self.disk is None or found is None or min(found[0], len(tokens) - 1) // CHUNK * CHUNK <= common:
            return common
        loaded = self.disk.read(found[1])
        if loaded is None:
            return common
        data = (llama_cpp.ctypes.c_uint8 * len(loaded[1])).from_buffer_copy(loaded[1])
        try:
            self._restore(_SavedState(loaded[0], data, len(loaded[1]), disk=found[1]))
        except BackendError:
            self.disk.forget(found[1])
            self._clear()
            return 0
        n = min(found[0], len(tokens) - 1)
        return n - n % CHUNK

    def _to_disk(self) -> None:
        if self.disk is not None:
            data, written = self._state()
            self.live_disk = self.disk.write(self.live_tokens(), bytes(data)[:written]) or self.live_disk

    @staticmethod
    def _usable(cached: Sequence[int], reusable: int, tokens: Sequence[int]) -> int:
        """Tokens of `tokens` that may come from a cache holding `cached`: the common prefix, within the whole
        prompt chunks it computed, rounded down to a chunk, and short of the last token (fresh logits)."""
        common = min(common_prefix(cached, tokens), reusable, len(tokens) - 1)
        return common - common % CHUNK

    def _clear(self) -> None:
        self.llama.reset()
        self.llama._ctx.kv_cache_clear()
        self.reusable = 0
        self.live_disk = None

    def _evaluate(self, tokens: list[int], start: int) -> None:
        """Evaluate `tokens[start:]` in chunks of `CHUNK` from `start`. They are exact chunks (at fixed positions
        after an exact prefix) when `start` is a chunk boundary within the exact part of the cache; otherwise (a
        conversation's turn) the exact part ends where the reused prefix's did."""
        exact = start % CHUNK == 0 and start <= self.reusable
        reusable = min(self.reusable, start)
        for i in range(start, len(tokens), CHUNK):
            self.llama.eval(tokens[i:i + CHUNK])
        self.reusable = len(tokens) - len(tokens) % CHUNK if exact else reusable - reusable % CHUNK


_ENGINES: dict[tuple[str, int, str], _Engine] = {}
_ENGINES_LOCK = threading.Lock()


def _engine(path: Path, n_ctx: int, n_threads: int, seed: int, state_cache: int,
            lora_path: Path | None = None) -> _Engine:
    key = (str(path.resolve()), n_ctx, str(lora_path.resolve()) if lora_path is not None else "")
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            if lora_path is not None and not lora_path.is_file():
                raise BackendError(f"{lora_path}: no such LoRA adapter file")
            try:
                _ENGINES[key] = _Engine(path, n_ctx, n_threads, seed, state_cache, lora_path)
            except ValueError as exc:
                raise BackendError(f"llama.cpp could not load {path}: {exc}") from None
            except RuntimeError as exc:  # llama-cpp-python's "Failed to initialize LoRA adapter ..."
                raise BackendError(f"{lora_path}: llama.cpp cannot apply this LoRA adapter to {path.name} "
                                   f"(not a LoRA GGUF, or made for another base model): {exc}") from None
        return _ENGINES[key]


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens `a` and `b` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def model_path(target: str, progress: Progress | None = None) -> Path:
    """The GGUF file of `llamacpp:<target>`: an embedded model (assembled on first use) or a path."""
    if target in REGISTRY:
        return ensure_model(target, progress=progress)
    path = Path(target).expanduser()
    if not path.is_file():
        known = ", ".join(sorted(REGISTRY))
        raise BackendError(f"llamacpp:{target}: no such model file {path} (embedded models: {known})")
    return path


def chat_prompt(model: Any, metadata: dict[str, str], messages: list[dict]) -> str:
    """`messages` rendered with the chat template in `metadata` (ChatML when the GGUF carries none);
    `model` is the `llama_cpp._internals.LlamaModel` whose BOS/EOS pieces the template may use."""
    template = metadata.get("tokenizer.chat_template")
    if not template:
        parts = [f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages]
        return "".join(parts) + "<|im_start|>assistant\n"
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    def piece(token: int) -> str:
        return model.token_get_text(token) if token >= 0 else ""

    formatter = Jinja2ChatFormatter(
        template=template,
        eos_token=piece(model.token_eos()),
        bos_token=piece(model.token_bos()),
        add_generation_prompt=True,
    )
    return formatter(messages=messages).prompt


def json_answer(llm: Any, messages: list[dict], schema: dict, *, max_tokens: int, temperature: float,
                seed: int, complete: Any = None) -> Any:
    """`llm.json` for the embedded backends: the chat prompt completed under the schema's grammar (by `complete`,
    default `llm.complete`), then parsed."""
    try:
        grammar = json_schema_to_gbnf(jsonlib.dumps(schema))
    except (ValueError, KeyError, TypeError, NotImplementedError) as exc:
        raise BackendError(f"{llm.uri}: cannot turn the JSON schema into a grammar: {exc}") from None
    done = (complete or llm.complete)(llm.chat_prompt(messages), max_tokens=max_tokens, temperature=temperature,
                                      grammar=grammar, seed=seed)
    if done.finish_reason == "length":
        raise BackendError(f"{llm.uri}: JSON answer cut off at max_tokens={max_tokens}: {done.text[:80]!r}")
    return parse_json(done.text, schema, llm.uri)


class LlamaCppLLM:
    """`llamacpp:<name>` (embedded model from the registry) or `llamacpp:<path.gguf>`.

    `grammar_mode` is "greedy-first" (default: the best or the drawn token is checked alone, the whole vocabulary
    only when the grammar rejects it; `llamacpp_sampling` at temperature > 0) or "full" (llama.cpp's own
    whole-vocabulary grammar check at each step; kept as the reference the greedy-first path must match).
    `reuse_prefix=False` evaluates every prompt from scratch (no KV reuse), the baseline that benchmarks compare
    prefix reuse against.
    """

    def __init__(
        self,
        target: str,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        seed: int = 0,
        progress: Progress | None = None,
        state_cache: int = 2,
        reuse_prefix: bool = True,
        grammar_mode: str = "greedy-first",
        lora_path: str | Path | None = None,
        exact_prefix: bool = True,
        prompt_states: str | Path | None = None,
        jump_forward: bool = False,
    ) -> None:
        """`lora_path`: a LoRA adapter in llama.cpp's GGUF format applied to the model (`navigate --lora`).
        `jump_forward`: JSON answers at temperature 0 append the text their grammar forces without a model step
        (`jump_forward`). Off by default: on the sandbox's sessions it met fewer expectations and saved no model
        time (`benchmarks/sandbox_jump_forward.py`, docs/benchmarks.md).
        `exact_prefix=False`: a conversation; every cached token a prompt shares is reused (module docstring).
        `prompt_states`: a directory where a conversation's fresh prompts leave their KV state, for a later
        process to start from (`llamacpp_disk_states`)."""
        if llama_cpp is None:
            raise BackendError("llamacpp backend needs llama-cpp-python: pip install 'situated[llm]'")
        if grammar_mode not in ("greedy-first", "full"):
            raise BackendError(f"grammar_mode must be 'greedy-first' or 'full', not {grammar_mode!r}")
        self.uri = f"llamacpp:{target}"
        self.chat_template = chat_template_for(self.uri)
        self.grammar_mode = grammar_mode
        self.reuse_prefix = reuse_prefix
        self.exact_prefix = exact_prefix
        self.jump_forward = jump_forward
        path = model_path(target, progress)
        self.path = path
        lora = Path(lora_path).expanduser() if lora_path is not None else None
        self._engine = _engine(path, n_ctx, n_threads or os.cpu_count() or 1, seed, state_cache, lora)
        self._engine.state_cache = max(self._engine.state_cache, state_cache)  # the engine is shared per model
        if prompt_states is not None:
            self._engine.disk = DiskStates.for_model(Path(prompt_states).expanduser(), path, n_ctx,
                                                     llama_cpp.__version__)
        self.n_ctx = n_ctx

    def count_tokens(self, text: str) -> int:
        return len(self._engine.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def complete(self, prompt: str, *, stop: Sequence[str] = (), max_tokens: int = 256, temperature: float = 0.0,
                 frequency_penalty: float = 0.0, grammar: str | None = None, seed: int = 0) -> Completion:
        return self._complete(prompt, stop=stop, max_tokens=max_tokens, temperature=temperature,
                              frequency_penalty=frequency_penalty, grammar=grammar, seed=seed, jump=False)

    def _complete_json(self, prompt: str, *, max_tokens: int, temperature: float, grammar: str,
                       seed: int) -> Completion:
        """A JSON answer's completion: with jump-forward when it is on and decoding is greedy."""
        return self._complete(prompt, max_tokens=max_tokens, temperature=temperature, grammar=grammar, seed=seed,
                              jump=self.jump_forward and temperature <= 0.0 and self.grammar_mode == "greedy-first")

    def _complete(self, prompt: str, *, stop: Sequence[str] = (), max_tokens: int = 256, temperature: float = 0.0,
                  frequency_penalty: float = 0.0, grammar: str | None = None, seed: int = 0,
                  jump: bool = False) -> Completion:
        start = time.perf_counter()
        engine = self._engine
        llama = engine.llama
        tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
        if not tokens:
            raise BackendError(f"{self.uri}: empty prompt")
        if len(tokens) >= self.n_ctx:
            raise BackendError(f"{self.uri}: prompt has {len(tokens)} tokens, context holds {self.n_ctx}")
        stops = [s.encode("utf-8") for s in stop if s]
        with engine.lock:
            cached = engine.prepare(tokens, self.reuse_prefix, self.exact_prefix)
            selector = self._selector(grammar, temperature, frequency_penalty, seed, jump)
            try:
                out, finish, n_out = self._generate(selector, stops, max_tokens)
            finally:
                selector.close()
        return Completion(
            text=out.decode("utf-8", errors="ignore"),
            finish_reason=finish,
            prompt_tokens=len(tokens),
            completion_tokens=n_out,
            cached_tokens=cached,
            seconds=time.perf_counter() - start,
        )

    def score(self, prompt: str, continuations: Sequence[str]) -> Scores:
        """Natural-log probability of each continuation after `prompt` (see `llamacpp_scoring`)."""
        from situated.llm.llamacpp_scoring import score_continuations

        return score_continuations(self._engine, prompt, continuations, n_ctx=self.n_ctx,
                                   reuse_prefix=self.reuse_prefix, where=self.uri)

    def _selector(
        self, grammar: str | None, temperature: float, frequency_penalty: float, seed: int, jump: bool = False
    ) -> gs.TokenSelector:
        e = self._engine
        if temperature <= 0.0 and grammar is None:
            return gs.Greedy(e.ctx, e.n_vocab, frequency_penalty)
        if temperature <= 0.0 and self.grammar_mode == "greedy-first":
            return gs.GreedyFirstGrammar(e.ctx, e.vocab, e.n_vocab, grammar or "", frequency_penalty, self.uri,
                                         forced=e.forced_text if jump and grammar is not None else None)
        if grammar is not None and self.grammar_mode == "greedy-first":
            from situated.llm.llamacpp_sampling import SampleFirstGrammar

            return SampleFirstGrammar(e.ctx, e.vocab, e.n_vocab, grammar, temperature, frequency_penalty, seed,
                                      self.uri)
        return gs.Chain(
            e.ctx,
            e.vocab,
            e.n_vocab,
            grammar=grammar,
            temperature=temperature,
            frequency_penalty=frequency_penalty,
            seed=seed,
            where=self.uri,
        )

    def _generate(
        self, selector: gs.TokenSelector, stops: list[bytes], max_tokens: int
    ) -> tuple[bytes, str, int]:
        """Sample up to `max_tokens`; return (bytes, finish_reason, completion token count). With a jump-forward
        selector, the text its grammar forces after each chosen token is evaluated with that token in one batch and
        counted as completion tokens."""
        if isinstance(selector, gs.GreedyFirstGrammar) and selector.jumps_forward:
            return self._generate_jumping(selector, max_tokens)
        llama = self._engine.llama
        out = b""
        longest_stop = max((len(s) for s in stops), default=0)
        for n in range(max_tokens):
            token = selector.select()
            if token is None or llama_cpp.llama_vocab_is_eog(self._engine.vocab, token):
                return out, "stop", n  # the end-of-generation token is not part of the text
            before = len(out)
            out += llama.detokenize([token])
            if stops:
                window = max(0, before - longest_stop + 1)
                hits = [i for i in (out.find(s, window) for s in stops) if i >= 0]
                if hits:
                    return out[: min(hits)], "stop", n + 1
            if n + 1 == max_tokens:
                return out, "length", n + 1
            if llama.n_tokens >= self.n_ctx:
                return out, "length", n + 1
            llama.eval([token])
        return out, "length", max_tokens

    def _generate_jumping(self, selector: gs.GreedyFirstGrammar, max_tokens: int) -> tuple[bytes, str, int]:
        """`_generate` for a JSON answer with jump-forward (no stop strings: the grammar ends the answer)."""
        llama = self._engine.llama
        text, done = selector.forced(max_tokens)
        out, n = text.encode("utf-8"), 0
        if text:
            batch = self._tokens(out)
            n = len(batch)
            if done or n >= max_tokens or llama.n_tokens + n >= self.n_ctx:
                return out, "stop" if done else "length", n
            selector.accept_forced(batch)
            llama.eval(batch)
        while n < max_tokens:
            token = selector.select()
            if token is None or llama_cpp.llama_vocab_is_eog(self._engine.vocab, token):
                return out, "stop", n
            piece = llama.detokenize([token])
            selector.feed(piece.decode("utf-8", errors="ignore"))
            text, done = selector.forced(max_tokens - n)
            batch = [token]
            if text:
                batch = self._tokens(piece + text.encode("utf-8"))  # re-tokenized, as the next prompt will be
                selector.accept_forced(batch[1:])
            out += piece + text.encode("utf-8")
            n += len(batch)
            if done:
                return out, "stop", n
            if n >= max_tokens or llama.n_tokens + len(batch) >= self.n_ctx:
                return out, "length", n
            llama.eval(batch)
        return out, "length", n

    def _tokens(self, data: bytes) -> list[int]:
        return self._engine.llama.tokenize(data, add_bos=False, special=False)

    def chat_prompt(self, messages: list[dict]) -> str:
        """`messages` rendered with the model's own chat template (ChatML when the GGUF carries none)."""
        return chat_prompt(self._engine.llama._model, self._engine.llama.metadata, messages)

    def json(
        self,
        messages: list[dict],
        schema: dict,
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> Any:
        return json_answer(self, messages, schema, max_tokens=max_tokens, temperature=temperature, seed=seed,
                           complete=self._complete_json)

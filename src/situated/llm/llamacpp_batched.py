"""Batched decoding for the embedded backend: many callers, one llama.cpp context, one `llama_decode` per round.

`BatchedLlamaCppLLM` is an `LLM` that several threads call at once (one per episode: `--executor batched --jobs N`
runs N episodes in N threads of one process). Each call gets one of the context's `sequences` (llama.cpp sequence
ids); a scheduler thread gathers the pending work of every sequence (prompt tokens still to evaluate, the token
sampled last) into one `llama_batch` and decodes it in one call, so the weights are read and the per-decode
overhead paid once per round instead of once per sequence, with one copy of the model in memory. What that buys
depends on the hardware: on the 2-core CPU of docs/benchmarks.md ("Evaluation throughput") llama.cpp is
compute-bound and a batched token cost 0.8 of a lone one.

Prompt-prefix reuse across sequences: a sequence takes the longest prefix any sequence holds with
`llama_memory_seq_cp` (a copy of KV cells, no recomputation). VELMA's long shared head (task line, action
glosses, two examples) and ProgPrompt's shared examples are therefore evaluated once per process, not once per
sequence. When several new prompts share a prefix nobody holds yet, one of them evaluates it and the others wait
for it.

Decoding is the single-sequence backend's (`situated.llm.llamacpp`): the same tokenizer, the same penalised
greedy / greedy-first grammar / sampler chain selection over the sequence's own logits row, the same stop,
end-of-generation and max_tokens rules. Differences: (1) llama.cpp's logits depend slightly on how tokens are
grouped into batches (and, with a unified cache, on the other sequences' cells in the masked attention sums), so
greedy decoding can part ways with the single-sequence path at a near-tie, as it already does between
a cold and a warm prompt there (docs/benchmarks.md); (2) there is no saved-state LRU: a sequence whose next prompt
shares little with its last one recomputes it unless another sequence holds it; (3) `Completion.seconds` is the
wall time of the call, including the wait for the batch it rides in.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from situated.errors import BackendError
from situated.llm.base import Completion
from situated.llm.chat_template import chat_template_for
from situated.llm.llamacpp import chat_prompt, common_prefix, json_answer, model_path
from situated.llm.llamacpp_buffers import model_params
from situated.llm.models import Progress

try:
    import llama_cpp
    from llama_cpp import _internals, _logger

    from situated.llm import grammar_sampling as gs
except ImportError:  # pragma: no cover - exercised only without the optional dependency
    llama_cpp = None

DEFAULT_SEQ_CTX = 4096
"""Tokens one sequence holds (prompt plus answer): the longest ProgPrompt prompt with its plan needs about 2,000,
a VELMA episode about 1,200; KV memory is sequences × this × the model's bytes per token."""
DEFAULT_TOTAL_CTX = 16384
"""Cells of a unified KV cache shared by all sequences (shared prefixes count once)."""
DEFAULT_N_BATCH = 512
"""Most tokens decoded in one round (long prompts are evaluated in chunks over several rounds)."""
MIN_SHARED = 32
"""A prompt waits for another sequence's prompt only when they share at least this many tokens more."""
MAX_GATHER_S = 0.02
"""After a round, wait up to this long for the callers it answered to send their next request."""


@dataclass(eq=False)
class _Request:
    """One `complete` call on its way through the scheduler."""

    tokens: list[int]
    stops: list[bytes]
    max_tokens: int
    grammar: str | None
    temperature: float
    frequency_penalty: float
    seed: int
    preferred: int | None
    seq: int = -1
    evaluated: int = 0  # prompt tokens whose KV is in the sequence
    cached: int = 0
    selector: Any = None
    row: int = -1
    pending: int | None = None  # the token sampled last, to be decoded next round
    out: bytes = b""
    n_out: int = 0
    finish: str = ""
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def in_prompt(self) -> bool:
        return self.seq >= 0 and self.pending is None and self.evaluated < len(self.tokens)


class _BatchedEngine:
    """One model, one context with `sequences` sequences, the scheduler state (guarded by `cond`)."""

    def __init__(self, path: Path, sequences: int, n_ctx: int, total_ctx: int, n_threads: int,
                 n_batch: int, unified: bool) -> None:
        n_batch = min(n_batch, total_ctx)
        _logger.set_verbose(False)  # as llama_cpp.Llama(verbose=False) does: llama.cpp's own log stays quiet
        self.model = _internals.LlamaModel(path_model=str(path), params=model_params(), verbose=False)
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = total_ctx
        params.n_batch = n_batch
        params.n_ubatch = n_batch
        params.n_seq_max = sequences
        params.kv_unified = unified
        params.n_threads = n_threads
        params.n_threads_batch = n_threads
        params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED  # as the single-sequence backend
        try:
            self.context = _internals.LlamaContext(model=self.model, params=params, verbose=False)
        except ValueError as exc:
            raise BackendError(f"llama.cpp could not create a {sequences}-sequence context: {exc}") from None
        self.ctx = self.context.ctx
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.vocab = self.model.vocab
        self.n_vocab = self.model.n_vocab()
        self.metadata = self.model.metadata()
        self.sequences = sequences
        self.unified = unified
        self.n_ctx = n_ctx
        self.total_ctx = total_ctx
        self.n_batch = n_batch
        self.batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self.kv: list[list[int]] = [[] for _ in range(sequences)]  # tokens whose KV each sequence holds
        self.busy = [False] * sequences
        self.waiting: list[_Request] = []
        self.active: list[_Request] = []
        self.cond = threading.Condition()
        self.driving = False
        self.expected = 0  # callers answered in the last round, likely to send their next request soon
        self.rounds = 0
        self.decoded_tokens = 0
        self.last_round_s = 0.0

    def close(self) -> None:
        if self.batch is not None:
            llama_cpp.llama_batch_free(self.batch)
            self.batch = None
        self.context.close()
        self.model.close()

    # ------------------------------------------------------------------ callers
    def submit(self, request: _Request) -> None:
        """Queue `request` and block until it is answered (or failed)."""
        with self.cond:
            self.waiting.append(request)
            if self.expected:
                self.expected -= 1
            self.cond.notify_all()
            if not self.driving:
                self.driving = True
                threading.Thread(target=self._drive, name="llamacpp-batched", daemon=True).start()
        request.done.wait()
        if request.error is not None:
            raise request.error

    # ------------------------------------------------------------------ scheduler (one thread at a time)
    def _drive(self) -> None:
        while True:
            with self.cond:
                if self.expected:  # callers answered last round are about to ask again: let them join
                    self.cond.wait_for(lambda: not self.expected, timeout=min(MAX_GATHER_S, self.last_round_s / 4))
                self.expected = 0
                self._admit()
                if not self.active:
                    if self.waiting:  # deferred behind a leader that is gone: start them anyway
                        self._admit(defer=False)
                    if not self.active:
                        self.driving = False
                        return
                work = list(self.active)
            started = time.perf_counter()
            try:
                finished = self._round(work)
            except BaseException as exc:  # every caller in this round learns of the failure
                with self.cond:
                    self._forget_all()
                    for request in work:
                        self._fail(request, exc)
                continue
            with self.cond:
                self.last_round_s = time.perf_counter() - started
                for request in finished:
                    self._release(request)
                self.expected = len(finished)

    def _forget_all(self) -> None:
        """After a failed decode the cache may hold a partial batch: drop every sequence's cells."""
        llama_cpp.llama_memory_clear(self.memory, False)
        self.kv = [[] for _ in range(self.sequences)]

    def _fail(self, request: _Request, exc: BaseException) -> None:
        request.error = exc if isinstance(exc, BackendError) else BackendError(f"batched llama.cpp: {exc}")
        self._release(request)

    def _release(self, request: _Request) -> None:
        if request in self.active:
            self.active.remove(request)
        if request.seq >= 0:
            self.busy[request.seq] = False
        if request.selector is not None:
            request.selector.close()
            request.selector = None
        request.done.set()

    def _admit(self, *, defer: bool = True) -> None:
        """Give waiting requests free sequences, with the longest prefix any sequence holds."""
        for request in list(self.waiting):
            free = [s for s in range(self.sequences) if not self.busy[s]]
            if not free:
                return
            held = max((common_prefix(kv, request.tokens) for kv in self.kv), default=0)
            leading = max((common_prefix(r.tokens, request.tokens) for r in self.active if r.in_prompt),
                          default=0)
            if defer and leading >= held + MIN_SHARED:
                continue  # another sequence is evaluating this prefix: take it from there when it is done
            self.waiting.remove(request)
            try:
                self._start(request, free)
            except BaseException as exc:
                self._fail(request, exc)

    def _start(self, request: _Request, free: list[int]) -> None:
        tokens = request.tokens

        def rank(s: int) -> tuple[int, bool]:
            return common_prefix(self.kv[s], tokens), s == request.preferred

        seq = max(free, key=rank)
        own = common_prefix(self.kv[seq], tokens)
        source, best = seq, own
        for s in range(self.sequences):
            shared = common_prefix(self.kv[s], tokens)
            if shared > best:
                source, best = s, shared
        reuse = min(best, len(tokens) - 1)  # always decode at least one token for fresh logits
        if source == seq and reuse > 0 and llama_cpp.llama_memory_seq_rm(self.memory, seq, reuse, -1):
            del self.kv[seq][reuse:]
        else:
            llama_cpp.llama_memory_seq_rm(self.memory, seq, -1, -1)
            self.kv[seq] = []
            if source != seq and reuse > 0:
                if self.unified:  # the cells are tagged with one more sequence: nothing is copied
                    llama_cpp.llama_memory_seq_cp(self.memory, source, seq, 0, reuse)
                else:  # one stream per sequence: llama.cpp copies whole streams; then drop the tail
                    llama_cpp.llama_memory_seq_cp(self.memory, source, seq, -1, -1)
                    llama_cpp.llama_memory_seq_rm(self.memory, seq, reuse, -1)
                self.kv[seq] = list(tokens[:reuse])
            else:
                reuse = 0
        self.busy[seq] = True
        request.seq, request.evaluated, request.cached = seq, reuse, reuse
        request.selector = self._selector(request)
        self.active.append(request)

    def _selector(self, request: _Request) -> Any:
        if request.temperature <= 0.0 and request.grammar is None:
            return gs.Greedy(self.ctx, self.n_vocab, request.frequency_penalty)
        if request.temperature <= 0.0:
            return gs.GreedyFirstGrammar(self.ctx, self.vocab, self.n_vocab, request.grammar, request.frequency_penalty,
                                   "llamacpp-batched")
        if request.grammar is not None:  # as the single-sequence engine samples under a grammar
            from situated.llm.llamacpp_sampling import SampleFirstGrammar

            return SampleFirstGrammar(self.ctx, self.vocab, self.n_vocab, request.grammar, request.temperature,
                                      request.frequency_penalty, request.seed, "llamacpp-batched")
        return gs.Chain(self.ctx, self.vocab, self.n_vocab, grammar=None,
                         temperature=request.temperature, frequency_penalty=request.frequency_penalty,
                         seed=request.seed, where="llamacpp-batched")

    def _round(self, work: list[_Request]) -> list[_Request]:
        """One decode of every active sequence's next tokens; returns the requests answered by it."""
        entries: list[tuple[int, int, int, bool]] = []  # (token, position, sequence, wants logits)
        rows: dict[int, _Request] = {}
        sampled = [r for r in work if r.pending is not None]  # first: one token each, and it ends a step
        chunks: dict[_Request, int] = {}
        for request in sampled:
            rows[len(entries)] = request
            entries.append((request.pending, len(self.kv[request.seq]), request.seq, True))
        budget = self.n_batch - len(entries)
        for request in work:
            if request.pending is None and budget > 0:
                start = request.evaluated
                take = min(len(request.tokens) - start, budget)
                for i in range(start, start + take):
                    last = i == len(request.tokens) - 1
                    if last:
                        rows[len(entries)] = request
                    entries.append((request.tokens[i], i, request.seq, last))
                chunks[request] = take
                budget -= take
        self._decode(entries)
        for request, take in chunks.items():
            self.kv[request.seq] += request.tokens[request.evaluated:request.evaluated + take]
            request.evaluated += take
        for request in sampled:
            self.kv[request.seq].append(request.pending)
            request.pending = None
        finished = []
        for row, request in rows.items():
            request.row = row
            if self._step(request):
                finished.append(request)
        return finished

    def _decode(self, entries: list[tuple[int, int, int, bool]]) -> None:
        batch = self.batch
        for i, (token, pos, seq, logits) in enumerate(entries):
            batch.token[i] = token
            batch.pos[i] = pos
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = seq
            batch.logits[i] = logits
        batch.n_tokens = len(entries)
        result = llama_cpp.llama_decode(self.ctx, batch)
        if result == 1:
            self._evict_idle()
            result = llama_cpp.llama_decode(self.ctx, batch)
            if result == 1:
                raise BackendError(f"llama.cpp: the {self.total_ctx}-cell KV cache of {self.sequences} sequences is "
                                   "full; give a larger total context (total_ctx) or fewer sequences")
        if result != 0:
            raise BackendError(f"llama.cpp: llama_decode failed ({result})")
        self.rounds += 1
        self.decoded_tokens += len(entries)

    def _evict_idle(self) -> None:
        """Drop the cached prefixes of sequences no request uses (frees cells they alone hold)."""
        for s in range(self.sequences):
            if not self.busy[s] and self.kv[s]:
                llama_cpp.llama_memory_seq_rm(self.memory, s, -1, -1)
                self.kv[s] = []

    def _step(self, request: _Request) -> bool:
        """Select the next token of `request` from its logits row; True when the request is answered."""
        selector = request.selector
        selector.row = request.row
        token = selector.select()
        n = request.n_out
        if token is None or llama_cpp.llama_vocab_is_eog(self.vocab, token):
            request.finish = "stop"
            return True
        before = len(request.out)
        request.out += self.model.detokenize([token])
        request.n_out = n + 1
        if request.stops:
            longest = max(len(s) for s in request.stops)
            window = max(0, before - longest + 1)
            hits = [i for i in (request.out.find(s, window) for s in request.stops) if i >= 0]
            if hits:
                request.out = request.out[: min(hits)]
                request.finish = "stop"
                return True
        if request.n_out == request.max_tokens or len(self.kv[request.seq]) >= self.n_ctx:
            request.finish = "length"
            return True
        request.pending = token
        return False


_ENGINES: dict[tuple[str, int, int, int, bool], _BatchedEngine] = {}
_ENGINES_LOCK = threading.Lock()


def _engine(path: Path, sequences: int, n_ctx: int, total_ctx: int, n_threads: int, n_batch: int,
            unified: bool) -> _BatchedEngine:
    key = (str(path.resolve()), sequences, n_ctx, total_ctx, unified)
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            try:
                _ENGINES[key] = _BatchedEngine(path, sequences, n_ctx, total_ctx, n_threads, n_batch, unified)
            except ValueError as exc:
                raise BackendError(f"llama.cpp could not load {path}: {exc}") from None
        return _ENGINES[key]


class BatchedLlamaCppLLM:
    """`llamacpp:<name|path.gguf>` decoding up to `sequences` concurrent calls together (see the module docstring).

    Safe to call from many threads; each thread's calls prefer the sequence it used last. `n_ctx` bounds one
    sequence (prompt plus answer). By default each sequence has its own stream of `n_ctx` KV cells (attention
    runs over the sequence's own cells only; a shared prefix is copied between streams, a memory copy).
    `kv_unified=True` puts all sequences in one cache of `total_ctx` cells where a shared prefix is stored once,
    but every token then attends over the cells of all sequences (masked), which costs more than it saves when
    the sequences' private parts are long (measured: docs/benchmarks.md). One engine per (model, sequences,
    n_ctx, total_ctx, kv_unified) and process.
    """

    def __init__(self, target: str, *, sequences: int = 4, n_ctx: int = DEFAULT_SEQ_CTX,
                 total_ctx: int | None = None, n_threads: int | None = None, n_batch: int = DEFAULT_N_BATCH,
                 kv_unified: bool = False, progress: Progress | None = None) -> None:
        if llama_cpp is None:
            raise BackendError("llamacpp backend needs llama-cpp-python: pip install 'situated[llm]'")
        if not 1 <= sequences <= min(n_batch, total_ctx or n_batch):
            raise BackendError(f"sequences must be between 1 and n_batch={n_batch}, got {sequences}")
        self.uri = f"llamacpp:{target}"
        self.chat_template = chat_template_for(self.uri)
        self.path = model_path(target, progress)
        self.n_ctx = n_ctx
        self.sequences = sequences
        if kv_unified:
            total = total_ctx or max(n_ctx, min(DEFAULT_TOTAL_CTX, n_ctx * sequences))
        elif total_ctx is not None:
            raise BackendError("total_ctx applies to a unified KV cache (kv_unified=True) only")
        else:
            total = n_ctx * sequences  # one stream of n_ctx cells per sequence
        self._engine = _engine(self.path, sequences, n_ctx, total, n_threads or os.cpu_count() or 1, n_batch,
                               kv_unified)
        self._last_seq: dict[int, int] = {}

    @property
    def rounds(self) -> int:
        """Decodes so far (each one batch of all sequences' next tokens)."""
        return self._engine.rounds

    @property
    def decoded_tokens(self) -> int:
        return self._engine.decoded_tokens

    def count_tokens(self, text: str) -> int:
        return len(self._engine.model.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def complete(self, prompt: str, *, stop: Sequence[str] = (), max_tokens: int = 256, temperature: float = 0.0,
                 frequency_penalty: float = 0.0, grammar: str | None = None, seed: int = 0) -> Completion:
        start = time.perf_counter()
        tokens = self._engine.model.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
        if not tokens:
            raise BackendError(f"{self.uri}: empty prompt")
        if len(tokens) >= self.n_ctx:
            raise BackendError(f"{self.uri}: prompt has {len(tokens)} tokens, context holds {self.n_ctx}")
        if max_tokens < 1:
            return Completion("", "length", len(tokens), 0, 0, time.perf_counter() - start)
        thread = threading.get_ident()
        request = _Request(tokens, [s.encode("utf-8") for s in stop if s], max_tokens, grammar, temperature,
                           frequency_penalty, seed, self._last_seq.get(thread))
        self._engine.submit(request)
        self._last_seq[thread] = request.seq
        return Completion(
            text=request.out.decode("utf-8", errors="ignore"),
            finish_reason=request.finish,
            prompt_tokens=len(tokens),
            completion_tokens=request.n_out,
            cached_tokens=request.cached,
            seconds=time.perf_counter() - start,
        )

    def chat_prompt(self, messages: list[dict]) -> str:
        """`messages` rendered with the model's own chat template (ChatML when the GGUF carries none)."""
        return chat_prompt(self._engine.model, self._engine.metadata, messages)

    def json(self, messages: list[dict], schema: dict, *, max_tokens: int = 512, temperature: float = 0.0,
             seed: int = 0) -> Any:
        return json_answer(self, messages, schema, max_tokens=max_tokens, temperature=temperature, seed=seed)

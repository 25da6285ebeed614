"""Speech input for the sandbox: a WAV recording of one utterance → text, which the user confirms before it is used.

The default recognizer is pocketsphinx (`pip install 'situated[speech]'`; its wheel ships an English acoustic model
and dictionary, so nothing is downloaded). It decodes under a JSGF grammar regenerated from the robot's current API
at every call — function names split into words (`go_home` → "go home"), object names (`gift_bag` → "gift bag"),
common command verbs, determiners and prepositions, and the replies a session understands ("that's it", "never
mind", "yes") — so a taught behaviour ("pack") or a pointed object is recognized as soon as it exists. Words the
dictionary lacks are left out of the grammar.

`open_recognizer("whisper:/path/model.bin")` (whisper.cpp through `pywhispercpp`) and
`open_recognizer("faster-whisper:/path/dir")` load a model the user already has on disk, when its package is
installed; they never download one (a path that does not exist is an error).

A transcript is never acted on by this module: consoles show it and ask before it becomes an utterance.
"""

from __future__ import annotations

import io
import re
import time
import wave
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import BackendError, DataError
from .teaching import ABORT_PHRASES, DONE_PHRASES, phrase

RATE = 16_000
"""Sample rate the recognizers decode at (Hz); other rates are resampled."""
MAX_SECONDS = 30.0
"""Longest recording accepted."""
MAX_WAV_BYTES = 8 * 1024 * 1024
"""Largest WAV file accepted."""

COMMON_VERBS = ("pack", "put", "place", "pick", "go", "move", "grab", "take", "drop", "let", "make", "give", "bring",
                "hold", "lift", "stack", "wave", "push", "hand", "sort", "clean", "pour", "wrap", "shake")
"""Verbs a person may use before the robot knows them (an unknown behaviour is how lessons start). Each word added
to the grammar makes the others a little harder to recognize: the lists are kept short."""
PARTICLES = ("up", "down", "over", "back", "away")
PREPOSITIONS = ("in", "into", "on", "onto", "to", "with", "from", "next to", "on top of", "in front of", "behind")
DETERMINERS = ("the", "a", "an")
PRONOUNS = ("it", "me", "them", "here", "there")
REPLIES = ("yes", "no", "ok", "okay", "cancel", "stop", "go ahead", "do it", "go home", "let go", "let go of it",
           *DONE_PHRASES, *ABORT_PHRASES)
"""Whole utterances: confirmations and the ends of lessons (`teaching.DONE_PHRASES`, `ABORT_PHRASES`)."""


@dataclass(frozen=True)
class Transcript:
    """What a recognizer heard ('' when it heard nothing it could match), how long it took, and which engine."""

    text: str
    seconds: float
    engine: str

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "seconds": round(self.seconds, 3), "engine": self.engine}


class Recognizer(Protocol):
    """Turns one recorded utterance into text, knowing the robot's current functions and objects."""

    engine: str

    def transcribe(self, wav: bytes, functions: Sequence[str], objects: Sequence[str]) -> Transcript: ...


# -------------------------------------------------------------------------------------------------------------
# Audio


def read_wav(data: bytes, source: str = "recording") -> Any:
    """A WAV file's samples as 16 kHz mono float32 in [-1, 1] (numpy); DataError naming the problem when it is not
    a PCM WAV of at most `MAX_SECONDS`."""
    import numpy as np

    if len(data) > MAX_WAV_BYTES:
        raise DataError(f"{source}: {len(data)} bytes is too large (at most {MAX_WAV_BYTES})")
    try:
        with wave.open(io.BytesIO(data)) as w:
            channels, width, rate, frames = w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()
            raw = w.readframes(frames)  # a streamed WAV's header may claim more frames than it has
    except (wave.Error, EOFError) as err:
        raise DataError(f"{source}: not a PCM WAV file ({err})") from None
    if width not in (1, 2, 4):
        raise DataError(f"{source}: {8 * width}-bit samples are not supported (8, 16 or 32-bit PCM)")
    if not 8_000 <= rate <= 96_000:
        raise DataError(f"{source}: sample rate {rate} Hz is out of range (8,000–96,000)")
    seconds = len(raw) / (width * channels * rate)
    if seconds > MAX_SECONDS:
        raise DataError(f"{source}: {seconds:.1f} s is too long (at most {MAX_SECONDS:g} s)")
    if width == 1:
        samples = (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    else:
        kind = np.int16 if width == 2 else np.int32
        samples = np.frombuffer(raw, dtype=f"<{np.dtype(kind).char}").astype(np.float32) / float(
            np.iinfo(kind).max)
    samples = samples[: len(samples) - len(samples) % channels].reshape(-1, channels).mean(axis=1)
    return resample(samples, rate)


def resample(samples: Any, rate: int) -> Any:
    """Samples at `rate` Hz → `RATE` Hz (polyphase filter, scipy)."""
    from math import gcd

    import numpy as np

    if rate == RATE:
        return samples.astype(np.float32)
    from scipy.signal import resample_poly

    common = gcd(RATE, rate)
    return resample_poly(samples, RATE // common, rate // common).astype(np.float32)


def pcm16(samples: Any) -> bytes:
    """Float samples in [-1, 1] as little-endian 16-bit PCM."""
    import numpy as np

    return (np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()


def wav_bytes(samples: Any, rate: int = RATE) -> bytes:
    """Mono float samples as a 16-bit PCM WAV file."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm16(samples))
    return out.getvalue()


# -------------------------------------------------------------------------------------------------------------
# Grammar


def name_words(name: str) -> str:
    """An API name as spoken words: `gift_bag` → "gift bag"."""
    return " ".join(name.lower().split("_")).strip()


def jsgf_grammar(functions: Iterable[str], objects: Iterable[str], known: Callable[[str], bool] = lambda w: True,
                 ) -> str:
    """A JSGF grammar of what a person says to the robot, from its current API: `[please] CLAUSE [and [then]
    CLAUSE]`, a clause being `VERB [PARTICLE] [NOUN-PHRASE] [PREPOSITION NOUN-PHRASE]`, or one of the whole
    replies. Verbs: the first word of every function and `COMMON_VERBS`; nouns: object names and the other words
    of function names (`go_home` → "home"). Phrases with a word `known` rejects are left out, and so are names
    that are two spoken words written together (`pickup`: "pick up")."""
    verbs: dict[str, None] = {}
    nouns: dict[str, None] = {}
    for function in functions:
        words = name_words(function).split()
        if words:
            verbs[words[0]] = None
            nouns.update(dict.fromkeys(w for w in words[1:] if w not in PREPOSITIONS))
    verbs.update(dict.fromkeys(COMMON_VERBS))
    nouns.update(dict.fromkeys(name_words(o) for o in objects))
    for name in objects:  # "gift bag" is also "the bag", and "make a gift" names a gift
        nouns.update(dict.fromkeys(name_words(name).split()))

    spoken = {w for group in (verbs, nouns, PARTICLES, PREPOSITIONS, PRONOUNS) for p in group for w in p.split()}

    def usable(items: Iterable[str]) -> list[str]:
        return [p for p in dict.fromkeys(items) if p and all(_SAFE.fullmatch(w) and known(w) for w in p.split())
                and not _compound(p, spoken)]

    replies = usable(phrase(r) for r in REPLIES)
    rules = {"verb": usable(verbs), "particle": usable(PARTICLES), "prep": usable(PREPOSITIONS),
             "det": usable(DETERMINERS), "pronoun": usable(PRONOUNS), "noun": usable(nouns)}
    empty = [name for name, items in rules.items() if not items]
    if empty:
        raise DataError(f"speech grammar: no usable words for <{', '.join(empty)}>")
    lines = ["#JSGF V1.0;", "grammar sandbox;",
             "public <utterance> = <reply> | [please] <clause> [(and | then | and then) <clause>] [please];",
             f"<reply> = {' | '.join(replies)};" if replies else "<reply> = yes;",
             "<clause> = <verb> [<particle>] [<np>] [<prep> <np>];",
             "<np> = [<det>] <noun> | <pronoun>;"]
    lines += [f"<{name}> = {' | '.join(items)};" for name, items in rules.items()]
    return "\n".join(lines) + "\n"


_SAFE = re.compile(r"[a-z][a-z']*")


def _compound(word: str, spoken: set[str]) -> bool:
    """Whether `word` is two spoken words written together (`pickup`, `goto`, `nevermind`): it sounds the same as
    they do, so only the spoken form is in the grammar and transcripts come out one way."""
    return " " not in word and any(word[:i] in spoken and word[i:] in spoken for i in range(1, len(word)))


def clean(text: str) -> str:
    """A recognizer's text as an utterance: lower case, no punctuation but apostrophes, single spaces."""
    return phrase(text)


# -------------------------------------------------------------------------------------------------------------
# Recognizers


class SphinxRecognizer:
    """pocketsphinx with its bundled US-English model, decoding under `jsgf_grammar` of the current API."""

    engine = "pocketsphinx"

    def __init__(self) -> None:
        try:
            from pocketsphinx import Config, Decoder
        except ImportError as err:
            raise BackendError(f"speech input needs pocketsphinx ({err}): pip install 'situated[speech]'") from None
        self._decoder = Decoder(Config(lm=None, loglevel="FATAL"))
        self._grammar = ""

    def known(self, word: str) -> bool:
        """Whether the pronunciation dictionary has `word`."""
        return self._decoder.lookup_word(word) is not None

    def grammar(self, functions: Sequence[str], objects: Sequence[str]) -> str:
        return jsgf_grammar(functions, objects, self.known)

    def transcribe(self, wav: bytes, functions: Sequence[str], objects: Sequence[str]) -> Transcript:
        started = time.perf_counter()
        audio = pcm16(read_wav(wav))
        grammar = self.grammar(functions, objects)
        if grammar != self._grammar:
            try:
                self._decoder.add_jsgf_string("sandbox", grammar)
            except (RuntimeError, ValueError) as err:
                raise BackendError(f"speech grammar rejected by pocketsphinx: {err}") from None
            self._decoder.activate_search("sandbox")
            self._grammar = grammar
        self._decoder.start_utt()
        self._decoder.process_raw(audio, full_utt=True)
        self._decoder.end_utt()
        hyp = self._decoder.hyp()
        return Transcript(clean(hyp.hypstr) if hyp is not None else "", time.perf_counter() - started, self.engine)


class WhisperCppRecognizer:
    """whisper.cpp (package `pywhispercpp`) with a ggml model file the user has (never downloaded)."""

    engine = "whisper"

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise DataError(f"{path}: no such whisper model file (give a local ggml .bin file; nothing is downloaded)")
        try:
            from pywhispercpp.model import Model
        except ImportError as err:
            raise BackendError(f"--asr whisper: needs pywhispercpp ({err}): pip install pywhispercpp") from None
        self._model = Model(str(path))

    def transcribe(self, wav: bytes, functions: Sequence[str], objects: Sequence[str]) -> Transcript:
        started = time.perf_counter()
        segments = self._model.transcribe(read_wav(wav))
        text = " ".join(getattr(s, "text", "") for s in segments)
        return Transcript(clean(text), time.perf_counter() - started, self.engine)


class FasterWhisperRecognizer:
    """faster-whisper (CTranslate2) with a converted model directory the user has (`local_files_only`); the API's
    words are given as the initial prompt."""

    engine = "faster-whisper"

    def __init__(self, path: Path) -> None:
        if not path.is_dir():
            raise DataError(f"{path}: no such faster-whisper model directory (nothing is downloaded)")
        try:
            from faster_whisper import WhisperModel
        except ImportError as err:
            raise BackendError(f"--asr faster-whisper: needs faster-whisper ({err}): pip install faster-whisper"
                               ) from None
        self._model = WhisperModel(str(path), device="cpu", compute_type="int8", local_files_only=True)

    def transcribe(self, wav: bytes, functions: Sequence[str], objects: Sequence[str]) -> Transcript:
        started = time.perf_counter()
        prompt = "Commands to a robot arm: " + ", ".join(name_words(n) for n in [*functions, *objects]) + "."
        segments, _info = self._model.transcribe(read_wav(wav), language="en", initial_prompt=prompt)
        text = " ".join(s.text for s in segments)
        return Transcript(clean(text), time.perf_counter() - started, self.engine)


def open_recognizer(spec: str = "pocketsphinx") -> Recognizer:
    """`pocketsphinx` (default), `whisper:/path/model.bin` or `faster-whisper:/path/dir`."""
    kind, _, where = spec.partition(":")
    if kind == "pocketsphinx" and not where:
        return SphinxRecognizer()
    if kind in ("whisper", "faster-whisper") and where:
        path = Path(where).expanduser()
        return WhisperCppRecognizer(path) if kind == "whisper" else FasterWhisperRecognizer(path)
    raise DataError(f"--asr {spec!r}: expected pocketsphinx, whisper:/path/model.bin or faster-whisper:/path/dir")


def api_words(session: Any) -> tuple[list[str], list[str]]:
    """A session's current function and object names (what the grammar is made from)."""
    return [a.name for a in session.space.actions], [o.name for o in session.objects]

"""Speech input: the grammar is regenerated from the robot's current API (a taught behaviour's name becomes
recognizable), recordings are checked and resampled, the terminal console shows what it heard and asks before
using it, and local whisper models are never downloaded. Audio is synthesized with espeak-ng and recognized by
pocketsphinx (its wheel's English model); those tests skip, naming the install command, where either is absent.
The hooks for whisper.cpp / faster-whisper models cannot run here (no model file): only their refusals are tested."""

from __future__ import annotations

import io
import shutil
import subprocess
import wave

import numpy as np
import pytest

from fakes import ScriptedLLM
from situated.errors import DataError
from situated.sandbox.speech import (
    MAX_SECONDS,
    RATE,
    jsgf_grammar,
    name_words,
    open_recognizer,
    read_wav,
    wav_bytes,
)

SEED_FUNCTIONS = ["go_home", "goto", "grasp", "release", "pickup"]
SCENE_OBJECTS = ["ball", "candy", "cube", "duck", "gift_bag", "toy_car", "tray"]


def rule(grammar: str, name: str) -> list[str]:
    line = next(line for line in grammar.splitlines() if line.startswith(f"<{name}> = "))
    return line.removeprefix(f"<{name}> = ").rstrip(";").split(" | ")


def test_the_grammar_is_made_from_the_current_api() -> None:
    grammar = jsgf_grammar(SEED_FUNCTIONS, SCENE_OBJECTS)
    assert grammar.startswith("#JSGF V1.0;") and "public <utterance>" in grammar
    verbs, nouns, replies = rule(grammar, "verb"), rule(grammar, "noun"), rule(grammar, "reply")
    assert {"go", "grasp", "release", "pack", "put"} <= set(verbs)
    assert "pickup" not in verbs and "goto" not in verbs  # said "pick up", "go to": one spelling in transcripts
    assert {"gift bag", "toy car", "home", "ball"} <= set(nouns)
    assert {"that's it", "done", "never mind", "yes"} <= set(replies)
    assert "wiggle" not in verbs
    taught = jsgf_grammar([*SEED_FUNCTIONS, "wiggle", "make_gift"], [*SCENE_OBJECTS, "racer"])
    assert "wiggle" in rule(taught, "verb") and {"gift", "racer"} <= set(rule(taught, "noun"))
    unknown = jsgf_grammar(SEED_FUNCTIONS, SCENE_OBJECTS, known=lambda word: word != "tray")
    assert "tray" not in rule(unknown, "noun") and "toy car" in rule(unknown, "noun")
    assert name_words("gift_bag") == "gift bag"


def test_recordings_are_checked_and_resampled() -> None:
    second = np.sin(np.linspace(0, 2 * np.pi * 440, 22_050, endpoint=False)).astype(np.float32) * 0.5
    samples = read_wav(wav_bytes(second, 22_050))
    assert abs(len(samples) - RATE) <= 2 and abs(float(np.abs(samples).max()) - 0.5) < 0.05
    stereo = io.BytesIO()
    with wave.open(stereo, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(np.zeros(2 * RATE // 10, dtype="<i2").tobytes())
    assert len(read_wav(stereo.getvalue())) == RATE // 10
    with pytest.raises(DataError, match="not a PCM WAV"):
        read_wav(b"ID3\x03 an mp3, say", "upload")
    with pytest.raises(DataError, match="too long"):
        read_wav(wav_bytes(np.zeros(int(RATE * (MAX_SECONDS + 1)), dtype=np.float32)))


def test_local_models_only_and_no_unknown_engines(tmp_path) -> None:
    with pytest.raises(DataError, match="nothing is downloaded"):
        open_recognizer(f"whisper:{tmp_path / 'ggml-base.en.bin'}")
    with pytest.raises(DataError, match="nothing is downloaded"):
        open_recognizer(f"faster-whisper:{tmp_path / 'small.en'}")
    with pytest.raises(DataError, match="expected pocketsphinx"):
        open_recognizer("whisper")  # a model name would mean a download
    with pytest.raises(DataError, match="expected pocketsphinx"):
        open_recognizer("vosk:/models/en")


# -- recognition of synthesized speech ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sphinx():
    if shutil.which("espeak-ng") is None:
        pytest.skip("speech tests synthesize audio with espeak-ng: apt-get install -y espeak-ng")
    pytest.importorskip("pocketsphinx", reason="speech input needs pocketsphinx: pip install 'situated[speech]'")
    return open_recognizer("pocketsphinx")


def speak(text: str) -> bytes:
    """`text` spoken by espeak-ng's US-English voice variant f2 at 160 words a minute, as WAV."""
    return subprocess.run(["espeak-ng", "-v", "en-us+f2", "-s", "160", "--stdout", text], capture_output=True,
                          check=True).stdout


@pytest.mark.parametrize("text", ["pack the ball", "put the candy in the gift bag"])
def test_spoken_commands_are_transcribed_word_for_word(sphinx, text: str) -> None:
    heard = sphinx.transcribe(speak(text), SEED_FUNCTIONS, SCENE_OBJECTS)
    assert heard.text == text and heard.engine == "pocketsphinx" and heard.seconds > 0


def test_a_taught_behaviour_is_heard_once_it_is_in_the_api(sphinx) -> None:
    audio = speak("wiggle the duck")
    assert sphinx.transcribe(audio, SEED_FUNCTIONS, SCENE_OBJECTS).text != "wiggle the duck"
    assert sphinx.transcribe(audio, [*SEED_FUNCTIONS, "wiggle"], SCENE_OBJECTS).text == "wiggle the duck"


def test_the_console_asks_before_it_uses_what_it_heard(sphinx, tmp_path) -> None:
    pytest.importorskip("pybullet")
    pytest.importorskip("movement_primitives")
    from situated.cli.sandbox import run_console
    from situated.envs.tabletop import TabletopEnv
    from situated.sandbox import SkillLibrary
    from situated.sandbox.session import SandboxSession

    recording = tmp_path / "pack.wav"
    recording.write_bytes(speak("pack the ball"))
    llm = ScriptedLLM([{"unknown_behaviour": "pack", "objects": ["BALL"]}])
    env = TabletopEnv("gift_bag", seed=0)
    try:
        with SkillLibrary.open(tmp_path / "lib.db") as lib, SandboxSession(env, llm, lib) as session:
            lines: list[str] = []
            answers = iter([f"listen {recording}", "n", f"listen {recording}", "y", "quit"])
            run_console(session, read=lambda prompt: next(answers), out=lines.append, recognizer=sphinx)
    finally:
        env.close()
    heard = [line for line in lines if line.startswith('heard: "pack the ball"')]
    assert len(heard) == 2 and len(llm.calls) == 1  # refused once, used once
    assert any(line.startswith("robot: I don't know how to pack. Teach me: tell me the steps one at a time, then say "
                               "\"that's it\".") for line in lines)

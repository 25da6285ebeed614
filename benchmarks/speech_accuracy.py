"""Measures speech input (not a test): phrases a user says to the gift-bag robot, synthesized by espeak-ng, are
transcribed by pocketsphinx under the grammar of the seed API (the taught `pack` and `make_gift` added for the
phrases that use them, as in a session); prints each transcript, the phrase accuracy, the word error rate and the
median decoding time per voice. Synthetic voices are not people: this measures the grammar and the pipeline.

    PYTHONPATH=src:tests python benchmarks/speech_accuracy.py [--voices en-us+f2,en-us+f5,en-us] [--speed 160]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess

from situated.sandbox.speech import open_recognizer

SEED = ["go_home", "goto", "grasp", "release", "pickup"]
OBJECTS = ["ball", "candy", "cube", "duck", "gift_bag", "toy_car", "tray"]
PHRASES = ["pack the ball", "put the candy in the gift bag", "pick up the duck", "go to the gift bag",
           "let go of it", "that's it", "make a gift with the cube", "go home", "pack the toy car", "yes",
           "never mind", "put the ball on the tray"]


def edits(a: list[str], b: list[str]) -> int:
    """Word-level Levenshtein distance."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--voices", default="en-us+f2,en-us+f5,en-us")
    parser.add_argument("--speed", default="160")
    args = parser.parse_args()
    recognizer = open_recognizer("pocketsphinx")
    results = {}
    for voice in args.voices.split(","):
        right = errors = words = 0
        seconds = []
        for text in PHRASES:
            wav = subprocess.run(["espeak-ng", "-v", voice, "-s", args.speed, "--stdout", text],
                                 capture_output=True, check=True).stdout
            heard = recognizer.transcribe(wav, [*SEED, "pack", "make_gift"], OBJECTS)
            seconds.append(heard.seconds)
            right += heard.text == text
            errors += edits(text.split(), heard.text.split())
            words += len(text.split())
            print(f"{voice}: {text!r} -> {heard.text!r} ({heard.seconds:.2f} s)")
        results[voice] = {"phrases": len(PHRASES), "exact": right, "wer": round(errors / words, 3),
                          "median_seconds": round(statistics.median(seconds), 2)}
        print(f"{voice}: {right}/{len(PHRASES)} exact, word error rate {errors / words:.1%}, "
              f"median {statistics.median(seconds):.2f} s")
    print(json.dumps(results))


if __name__ == "__main__":
    main()

"""VELMA's landmark extractor: a language model lists the landmarks that navigation directions mention.

The prompt holds five solved examples written for this project (instructions from the Map2seq training split,
landmark lists by hand), then the new directions; the model answers with a numbered list, which
`parse_landmarks` reads and `envs.streets.landmarks.filter_landmarks` rids of generic items (intersections,
traffic lights, "a building").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ..envs.streets.env import NavInstance
from ..envs.streets.landmarks import filter_landmarks
from ..llm.base import LLM

EXTRACTION_TASK = (
    "For each set of walking directions, list the landmarks a walker would look out for: shops, restaurants, "
    "banks, churches, parks and other named or distinctive places. Do not list streets, intersections, "
    "traffic lights or plain buildings. Answer with a numbered list, or with none."
)


@dataclass(frozen=True)
class LandmarkExample:
    """A solved extraction: directions and the landmarks they mention (empty: none)."""

    instruction: str
    landmarks: tuple[str, ...]


#: Five Map2seq training instructions (ids 4310, 1237, 1946, 3908, 6941) with landmark lists written here.
EXAMPLES: tuple[LandmarkExample, ...] = (
    LandmarkExample(
        "Start straight to the light where a boat dock is on the right. Turn left and go through the light right "
        "after it and continue straight passing a large parking lot on the right. At the next light, Daisy May's "
        "may be on the corner. Turn right and go through another light. Stop 1/2 to the next light, near Gotham "
        "West Market.",
        ("a boat dock", "a parking lot", "Daisy May's", "Gotham West Market"),
    ),
    LandmarkExample(
        "Head to the light and turn right. At the next intersection with a playground to your left, turn left. "
        "Continue to the 2nd light with 24 Hour Deli and turn right. Go 1/2 block and stop in front of St. James "
        "Church on right.",
        ("a playground", "24 Hour Deli", "St. James Church"),
    ),
    LandmarkExample(
        "Head to first light and make a left. Go through the next and another quick light and then make a right "
        "at the next intersection. Head all the way to almost the next light and then stop.",
        (),
    ),
    LandmarkExample(
        "Go to the light, Vibe will be on the corner. Take a right. Pass through the following light with Chelsea "
        "Florist on the far left corner. At the next light, Starbucks will be on the corner. Take a left. Stop "
        "about a third of the way down the block, just past Dalas BBQ. If you get to SVA Theater, you're too far.",
        ("Vibe", "Chelsea Florist", "Starbucks", "Dalas BBQ", "SVA Theater"),
    ),
    LandmarkExample(
        "Head to the end of the block but you will veer a little right before getting to the light. Make a right "
        "at the light. Pass a coffee shop on the left corner and go through the light. Go through one more light, "
        "passing by the Lucky Chicken on the left and stopping soon after.",
        ("a coffee shop", "Lucky Chicken"),
    ),
)

_ITEM = re.compile(r"^\s*\d+\s*[.)]\s*(.+?)\s*$")


def _render(instruction: str) -> str:
    return f"Directions: {' '.join(instruction.split())}\nLandmarks:\n"


def render_prompt(instruction: str, examples: Sequence[LandmarkExample] = EXAMPLES) -> str:
    """The extraction prompt: task line, the solved examples, then `instruction` awaiting its list."""
    text = EXTRACTION_TASK + "\n\n"
    for example in examples:
        answer = "".join(f"{i}. {name}\n" for i, name in enumerate(example.landmarks, 1)) or "none\n"
        text += _render(example.instruction) + answer + "\n"
    return text + _render(instruction)


def parse_landmarks(answer: str) -> list[str]:
    """The items of a numbered answer (`1. Starbucks`); reading stops at the first line that is not an item.

    "none" (or an empty answer) is the empty list; a trailing period or quotes around an item are dropped.
    """
    items: list[str] = []
    for line in answer.splitlines():
        if not line.strip():
            if items:
                break
            continue
        match = _ITEM.match(line)
        if match is None:
            break
        name = match.group(1).strip().strip("\"'").rstrip(".").strip()
        if name and name.lower() not in ("none", "n/a"):
            items.append(name)
    return items


class LandmarkExtractor:
    """Lists the landmarks of navigation directions with `llm` (greedy, five in-context examples)."""

    def __init__(self, llm: LLM, examples: Sequence[LandmarkExample] = EXAMPLES, max_tokens: int = 96) -> None:
        self.llm = llm
        self.examples = tuple(examples)
        self.max_tokens = max_tokens

    def raw(self, instruction: str) -> list[str]:
        """The model's list before filtering."""
        answer = self.llm.complete(
            render_prompt(instruction, self.examples),
            stop=("\n\n", "Directions:"),
            max_tokens=self.max_tokens,
            temperature=0.0,
        )
        return parse_landmarks(answer.text)

    def __call__(self, instruction: str) -> tuple[str, ...]:
        """The filtered landmark list of `instruction`."""
        return filter_landmarks(self.raw(instruction))


def with_landmarks(instances: Iterable[NavInstance], extractor: LandmarkExtractor) -> list[NavInstance]:
    """`instances` with their landmark lists replaced by the extractor's."""
    return [replace(instance, landmarks=extractor(instance.instruction)) for instance in instances]


_ARTICLES = re.compile(r"^(?:a|an|the)\s+")


def normalize_landmark(name: str) -> str:
    """Match key: lower case, whitespace collapsed, one leading article (a/an/the) and trailing dots dropped."""
    text = " ".join(name.lower().split()).rstrip(".").strip()
    return _ARTICLES.sub("", text)


@dataclass(frozen=True)
class ExtractionScore:
    """Micro-averaged precision/recall/F1 (in %) of extracted landmark sets against reference sets."""

    n: int
    true_positives: int
    predicted: int
    reference: int

    @property
    def precision(self) -> float:
        return 100.0 * self.true_positives / self.predicted if self.predicted else 100.0

    @property
    def recall(self) -> float:
        return 100.0 * self.true_positives / self.reference if self.reference else 100.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {
            "n": self.n,
            "precision": round(self.precision, 1),
            "recall": round(self.recall, 1),
            "f1": round(self.f1, 1),
            "predicted": self.predicted,
            "reference": self.reference,
            "matched": self.true_positives,
        }


def score_extractions(pairs: Iterable[tuple[Sequence[str], Sequence[str]]]) -> ExtractionScore:
    """Score (predicted, reference) landmark lists by exact match after `normalize_landmark` (sets per pair)."""
    n = tp = predicted = reference = 0
    for guess, gold in pairs:
        mine = {normalize_landmark(x) for x in guess} - {""}
        theirs = {normalize_landmark(x) for x in gold} - {""}
        n += 1
        tp += len(mine & theirs)
        predicted += len(mine)
        reference += len(theirs)
    return ExtractionScore(n, tp, predicted, reference)

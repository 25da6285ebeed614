"""The landmark extractor: prompt, numbered-answer parser, generic filter and scoring against references."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from situated.datasets.map2seq import filter_landmarks
from situated.llm.base import Completion
from situated.planners.landmarks import (
    EXAMPLES,
    LandmarkExtractor,
    normalize_landmark,
    parse_landmarks,
    render_prompt,
    score_extractions,
)


class Answer:
    uri = "fixed"

    def __init__(self, text: str) -> None:
        self.text = text
        self.prompts: list[str] = []

    def complete(self, prompt: str, **kwargs: object) -> Completion:
        self.prompts.append(prompt)
        return Completion(self.text, "stop", 0, 0)


def test_parser_reads_numbered_items_only() -> None:
    assert parse_landmarks("1. Starbucks\n2. a bank.\n3) \"Duane Reade\"\n") == ["Starbucks", "a bank", "Duane Reade"]
    assert parse_landmarks("none") == []
    assert parse_landmarks("") == []
    # reading stops where the list ends (a blank line, or text that is no item)
    assert parse_landmarks("1. Chase\n\nDirections: go\n1. other") == ["Chase"]
    assert parse_landmarks("1. Chase\nThat is all.\n2. late") == ["Chase"]


def test_generic_items_are_filtered() -> None:
    raw = parse_landmarks("1. traffic lights\n2. a 4-way intersection\n3. Citibank\n4. a building\n5. Citibank")
    assert filter_landmarks(raw) == ("Citibank",)


def test_prompt_holds_five_examples_and_ends_awaiting_the_list() -> None:
    prompt = render_prompt("Turn left at   Starbucks.")
    assert len(EXAMPLES) == 5 and prompt.count("Directions: ") == 6
    assert prompt.endswith("Directions: Turn left at Starbucks.\nLandmarks:\n")
    assert "Landmarks:\nnone\n" in prompt  # one example has no landmarks
    for example in EXAMPLES:
        for number, name in enumerate(example.landmarks, start=1):
            assert f"{number}. {name}\n" in prompt


def test_examples_are_training_instructions(velma_data: Path) -> None:
    data = json.loads((velma_data / "landmarks" / "map2seq_gpt3_5shot_unfiltered.json").read_text())
    known = {" ".join(e["instructions"].split()) for e in data["instances"].values()}
    evaluation: set[str] = set()
    for split in ("map2seq_unseen/data/dev.json", "map2seq_seen/data/dev.json", "map2seq_seen/data/test.json"):
        for line in (velma_data / split).read_text().splitlines():
            evaluation.add(" ".join(json.loads(line)["navigation_text"].split()))
    for example in EXAMPLES:
        text = " ".join(example.instruction.split())
        assert text in known and text not in evaluation


def test_extractor_filters_the_models_list() -> None:
    llm = Answer("1. Starbucks\n2. traffic lights\n3. a playground")
    assert LandmarkExtractor(llm)("Walk past Starbucks.") == ("Starbucks", "a playground")
    assert llm.prompts[0].endswith("Directions: Walk past Starbucks.\nLandmarks:\n")


def test_matching_ignores_case_articles_and_spacing() -> None:
    assert normalize_landmark("The  Starbucks.") == normalize_landmark("starbucks") == "starbucks"
    assert normalize_landmark("a bank") == "bank"
    assert normalize_landmark("Bank of America") == "bank of america"


def test_scores_are_micro_averaged() -> None:
    score = score_extractions([
        (["Starbucks", "a bank"], ["starbucks", "the bank", "Chase"]),  # 2 of 2 right, 2 of 3 found
        (["Dunkin"], []),  # 1 wrong
        ([], []),
    ])
    assert (score.n, score.true_positives, score.predicted, score.reference) == (3, 2, 3, 3)
    assert score.precision == pytest.approx(200 / 3)
    assert score.recall == pytest.approx(200 / 3)
    assert score.f1 == pytest.approx(200 / 3)

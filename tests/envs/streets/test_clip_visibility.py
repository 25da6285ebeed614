"""CLIP landmark visibility: reprojection geometry, standardization, thresholding and buckets.

The pipeline runs with `ColourScorer`, a tiny torch-free model with seeded random weights. It stands in for
OpenCLIP because OpenCLIP cannot be installed in this project's CI (it needs torchvision and a 5.5 GB torch);
the real adapter is exercised only where `open_clip` imports.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from situated.envs.streets.clip_visibility import (
    VIEW_OFFSETS,
    ClipVisibility,
    ImageTextScorer,
    LandmarkStats,
    OpenClipScorer,
    caption,
    fit_stats,
    five_views,
    perspective_view,
    training_views,
)
from situated.envs.streets.visibility import BUCKETS, VisibilitySource
from situated.errors import DataError, SituatedError

COLOURS = {"red": (230.0, 20.0, 20.0), "blue": (20.0, 20.0, 230.0), "green": (20.0, 200.0, 20.0)}


class ColourScorer:
    """Stand-in for OpenCLIP: a seeded random linear projection of a view's mean colour; a caption is embedded
    as the projection of the colour it names (a random vector when it names none)."""

    def __init__(self, seed: int = 0, dim: int = 32) -> None:
        rng = np.random.default_rng(seed)
        self.weights = rng.normal(size=(dim, 4))
        self._rng = rng

    def _embed(self, rgb: Sequence[float]) -> np.ndarray:
        return self.weights @ np.array([*(c / 255.0 for c in rgb), 1.0])

    def image_features(self, views: Sequence[np.ndarray]) -> np.ndarray:
        return np.stack([self._embed(v.reshape(-1, 3).mean(axis=0)) for v in views])

    def text_features(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            colour = next((rgb for word, rgb in COLOURS.items() if word in text.split()), None)
            rows.append(self._embed(colour) if colour else self._rng.normal(size=self.weights.shape[0]))
        return np.stack(rows)


def grey_panorama(seed: int, height: int = 90, width: int = 360) -> np.ndarray:
    rng = np.random.default_rng(seed)
    level = rng.uniform(90, 160)
    return np.clip(level + rng.normal(0, 12, size=(height, width, 3)), 0, 255).astype(np.float32)


def with_patch(panorama: np.ndarray, compass: float, center: float, colour: str, half_width: float = 12) -> np.ndarray:
    """Paint a patch around compass heading `compass` (a panorama whose centre column faces `center`)."""
    out = panorama.copy()
    height, width = out.shape[:2]
    columns = np.arange(width)
    heading_of_column = center + ((columns + 0.5) / width - 0.5) * 360
    near = np.abs((heading_of_column - compass + 180) % 360 - 180) <= half_width
    rows = slice(height // 3, 2 * height // 3)
    out[rows, near] = COLOURS[colour]
    return out


def test_view_centre_looks_at_the_requested_heading() -> None:
    # A panorama whose pixel value is the compass heading of its column (centre column faces 30°).
    width, center = 720, 30.0
    compass = (center + ((np.arange(width) + 0.5) / width - 0.5) * 360) % 360
    panorama = np.tile(compass, (360, 1)).astype(np.float32)
    for heading in (75.0, 200.0, 310.0):  # away from the 0/360 seam, where interpolated values average
        view = perspective_view(panorama, heading, center=center, size=(33, 65))
        assert view[16, 32] == pytest.approx(heading, abs=0.6)
        # the outermost columns look (almost) half the field of view, 30°, to either side of the heading
        assert view[16, 0] - heading == pytest.approx(-30 + 30 / 65, abs=1.0)
        assert view[16, -1] - heading == pytest.approx(30 - 30 / 65, abs=1.0)


def test_view_rows_follow_latitude_and_pitch() -> None:
    latitude = 90 - (np.arange(180) + 0.5)  # row -> latitude in degrees
    panorama = np.tile(latitude[:, None], (1, 360)).astype(np.float32)
    level = perspective_view(panorama, 0.0, size=(65, 65))
    assert level[32, 32] == pytest.approx(0.0, abs=1.0)
    assert level[0, 32] == pytest.approx(30.0, abs=1.5)  # square view: vertical field of view is 60° too
    tilted = perspective_view(panorama, 0.0, size=(65, 65), pitch=20.0)
    assert tilted[32, 32] == pytest.approx(20.0, abs=1.0)


def test_five_views_are_at_the_velma_offsets() -> None:
    width = 360
    compass = ((np.arange(width) + 0.5) / width - 0.5) * 360 % 360
    panorama = np.tile(compass, (90, 1)).astype(np.float32)
    views = five_views(panorama, 100.0, size=(9, 9))
    centres = [v[4, 4] for v in views]
    assert centres == pytest.approx([(100 + off) % 360 for off in VIEW_OFFSETS], abs=1.5)


def _fitted(scorer: ImageTextScorer, directory: Path, landmarks: list[str]) -> LandmarkStats:
    panoids = []
    for seed in range(12):
        Image.fromarray(grey_panorama(seed).astype(np.uint8)).save(directory / f"train{seed}.png")
        panoids.append(f"train{seed}")
    return fit_stats(scorer, training_views(directory, panoids, size=(32, 32)), landmarks)


@pytest.mark.parametrize(
    ("heading", "bucket"),
    [(10, "right"), (145, "slightly_left"), (100, "ahead"), (55, "slightly_right"), (190, "left")],
)
def test_a_red_patch_is_seen_in_the_view_facing_it(tmp_path: Path, heading: int, bucket: str) -> None:
    scorer = ColourScorer(seed=3)
    stats = _fitted(scorer, tmp_path, ["red awning", "blue door"])
    center = 30.0
    scene = with_patch(grey_panorama(99), compass=100.0, center=center, colour="red")
    Image.fromarray(scene.astype(np.uint8)).save(tmp_path / "street.jpg", quality=95)
    source = ClipVisibility(scorer, tmp_path, stats, centers={"street": center}, size=(32, 32))
    assert isinstance(source, VisibilitySource)
    assert source.visible("street", heading, ["red awning", "blue door"]) == {bucket: ("red awning",)}


def test_a_patch_behind_the_agent_is_not_visible(tmp_path: Path) -> None:
    scorer = ColourScorer(seed=3)
    stats = _fitted(scorer, tmp_path, ["red awning"])
    scene = with_patch(grey_panorama(99), compass=100.0, center=0.0, colour="red")
    Image.fromarray(scene.astype(np.uint8)).save(tmp_path / "street.png")
    source = ClipVisibility(scorer, tmp_path, stats, size=(32, 32))
    assert source.visible("street", 280, ["red awning"]) == {}
    z = source.z_scores("street", 100, ["red awning"])
    assert z.shape == (5, 1) and z[2, 0] >= 3.5 > z[0, 0]


def test_stats_are_mean_and_std_per_landmark_and_round_trip(tmp_path: Path) -> None:
    scorer = ColourScorer(seed=1)
    views = [grey_panorama(s, 8, 8) for s in range(10)]
    stats = fit_stats(scorer, iter(views), ["green tree", "red awning"], batch=3)
    image = scorer.image_features(views)
    image /= np.linalg.norm(image, axis=1, keepdims=True)
    text = scorer.text_features([caption("green tree")])[0]
    sims = image @ (text / np.linalg.norm(text))
    assert stats.n_views == 10
    assert stats.mean["green tree"] == pytest.approx(sims.mean())
    assert stats.std["green tree"] == pytest.approx(sims.std())
    z = stats.z_scores(["green tree"], sims[:, None])
    assert z.mean() == pytest.approx(0.0, abs=1e-9) and z.std() == pytest.approx(1.0)
    stats.save(tmp_path / "stats.json")
    again = LandmarkStats.load(tmp_path / "stats.json")
    assert again.mean == pytest.approx(stats.mean) and again.std == pytest.approx(stats.std)
    with pytest.raises(DataError, match="no CLIP statistics for landmark 'a bank'"):
        again.z_scores(["a bank"], np.zeros((5, 1)))


def test_missing_panorama_and_bad_stats_file_are_data_errors(tmp_path: Path) -> None:
    stats = LandmarkStats({"x": 0.0}, {"x": 1.0}, 2)
    source = ClipVisibility(ColourScorer(), tmp_path, stats)
    with pytest.raises(DataError, match="no panorama"):
        source.visible("nowhere", 0, ["x"])
    (tmp_path / "bad.json").write_text('{"format": "other"}')
    with pytest.raises(DataError, match="format"):
        LandmarkStats.load(tmp_path / "bad.json")


def test_openclip_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "open_clip", None)
    with pytest.raises(SituatedError, match=r"situated\[clip\]"):
        OpenClipScorer("ViT-B-32")


def test_openclip_adapter_with_random_weights(tmp_path: Path) -> None:
    open_clip = pytest.importorskip("open_clip")
    model = open_clip.create_model("ViT-B-32", pretrained=None)
    preprocess = open_clip.image_transform(model.visual.image_size, is_train=False)
    scorer = OpenClipScorer.from_model(model, preprocess, open_clip.get_tokenizer("ViT-B-32"))
    stats = _fitted(scorer, tmp_path, ["red awning"])
    Image.fromarray(grey_panorama(5).astype(np.uint8)).save(tmp_path / "street.png")
    source = ClipVisibility(scorer, tmp_path, stats)
    assert source.z_scores("street", 0, ["red awning"]).shape == (5, 1)
    assert set(source.visible("street", 0, ["red awning"])) <= set(BUCKETS)

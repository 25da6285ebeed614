"""Landmark visibility from equirectangular panoramas scored by CLIP (VELMA's landmark scorer).

For the agent's heading, five 60° pinhole views are cut from the panorama at −90, −45, 0, +45 and +90 degrees
(`perspective_view`: an exact equirectangular → pinhole reprojection with bilinear sampling). Each view is
compared with the caption "picture of <landmark>"; the cosine similarity is standardized by that landmark's
mean and standard deviation over views of training-area panoramas (`fit_stats`, saved to JSON), and the
landmark counts as visible in the direction of its best view when that z-score reaches the threshold (3.5).

The numeric pipeline does not depend on the model: anything implementing `ImageTextScorer` will do.
`OpenClipScorer` adapts OpenCLIP (`pip install 'situated[clip]'`, weights from a path the user gives).

Panorama files are `<dir>/<panoid>.jpg` (or .jpeg/.png), equirectangular, 360° wide and 180° high. Column
`u` of a panorama of width W looks at compass heading `center + (u / W − 0.5) · 360`, where `center` is the
heading at the image centre: the panorama's yaw (pass `centers`, e.g. the graph's node yaws) or 0.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ... import files
from ...errors import DataError, SituatedError
from .visibility import BUCKETS, read_format_json

#: View offsets from the heading, in degrees, one per bucket (left to right).
VIEW_OFFSETS: tuple[int, ...] = (-90, -45, 0, 45, 90)
FIELD_OF_VIEW = 60.0
THRESHOLD = 3.5
STATS_FORMAT = "situated-clip-stats/1"
PANORAMA_SUFFIXES = (".jpg", ".jpeg", ".png")


def caption(landmark: str) -> str:
    """The text CLIP compares with each view."""
    return f"picture of {landmark}"


def perspective_view(
    panorama: np.ndarray,
    heading: float,
    *,
    center: float = 0.0,
    fov: float = FIELD_OF_VIEW,
    size: tuple[int, int] = (224, 224),
    pitch: float = 0.0,
) -> np.ndarray:
    """A pinhole view (`size` = height, width; horizontal field of view `fov` degrees) looking at compass
    `heading` and `pitch` degrees up, cut from an equirectangular `panorama` (H × W or H × W × C) whose centre
    column faces `center`. Bilinear sampling; wraps around horizontally. Returns float32 with the input's
    channels."""
    if panorama.ndim not in (2, 3) or panorama.shape[0] < 2 or panorama.shape[1] < 2:
        raise SituatedError(f"a panorama must be an H x W (x C) array, got shape {panorama.shape}")
    height, width = size
    pano_h, pano_w = panorama.shape[:2]
    focal = (width / 2) / math.tan(math.radians(fov) / 2)
    xs = (np.arange(width, dtype=np.float64) - (width - 1) / 2) / focal
    ys = ((height - 1) / 2 - np.arange(height, dtype=np.float64)) / focal
    x, y = np.meshgrid(xs, ys)
    z = np.ones_like(x)
    # Tilt the camera up by `pitch` (rotation about the camera's x axis), then read off longitude/latitude.
    p = math.radians(pitch)
    y, z = y * math.cos(p) + z * math.sin(p), -y * math.sin(p) + z * math.cos(p)
    lon = np.degrees(np.arctan2(x, z)) + (heading - center)
    lat = np.degrees(np.arctan2(y, np.hypot(x, z)))
    u = ((lon / 360.0 + 0.5) * pano_w - 0.5) % pano_w
    v = np.clip((0.5 - lat / 180.0) * pano_h - 0.5, 0, pano_h - 1)
    return _bilinear(panorama.astype(np.float32, copy=False), u, v)


def _bilinear(image: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    h, w = image.shape[:2]
    u0 = np.floor(u).astype(np.int64)
    v0 = np.floor(v).astype(np.int64)
    du, dv = (u - u0), (v - v0)
    u1 = (u0 + 1) % w
    u0 %= w
    v1 = np.minimum(v0 + 1, h - 1)
    if image.ndim == 3:
        du, dv = du[..., None], dv[..., None]
    top = image[v0, u0] * (1 - du) + image[v0, u1] * du
    bottom = image[v1, u0] * (1 - du) + image[v1, u1] * du
    return (top * (1 - dv) + bottom * dv).astype(np.float32)


def five_views(
    panorama: np.ndarray, heading: float, *, center: float = 0.0, size: tuple[int, int] = (224, 224)
) -> list[np.ndarray]:
    """The five views of VELMA's scorer (offsets VIEW_OFFSETS from `heading`), left to right."""
    return [perspective_view(panorama, heading + off, center=center, size=size) for off in VIEW_OFFSETS]


@runtime_checkable
class ImageTextScorer(Protocol):
    """A CLIP-like model: embeddings of images (H × W × 3 float arrays, 0–255) and of texts, one row each."""

    def image_features(self, views: Sequence[np.ndarray]) -> np.ndarray: ...

    def text_features(self, texts: Sequence[str]) -> np.ndarray: ...


def _unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


def similarities(scorer: ImageTextScorer, views: Sequence[np.ndarray], texts: Sequence[str]) -> np.ndarray:
    """Cosine similarity of every view (rows) with every text (columns)."""
    return _unit(scorer.image_features(views)) @ _unit(scorer.text_features(texts)).T


@dataclass(frozen=True)
class LandmarkStats:
    """Per-landmark mean and standard deviation of the CLIP similarity over training-area views."""

    mean: Mapping[str, float]
    std: Mapping[str, float]
    n_views: int
    model: str = ""

    def z_scores(self, landmarks: Sequence[str], sims: np.ndarray) -> np.ndarray:
        """Standardize a views × landmarks similarity matrix column by column."""
        missing = [name for name in landmarks if name not in self.mean]
        if missing:
            raise DataError(
                f"no CLIP statistics for landmark {missing[0]!r}; run fit_stats with it included"
            )
        mean = np.array([self.mean[name] for name in landmarks])
        std = np.array([max(self.std[name], 1e-8) for name in landmarks])
        return (sims - mean) / std

    def save(self, path: str | Path) -> None:
        data = {
            "format": STATS_FORMAT,
            "model": self.model,
            "n_views": self.n_views,
            "landmarks": {k: {"mean": self.mean[k], "std": self.std[k]} for k in sorted(self.mean)},
        }
        files.write_text_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> LandmarkStats:
        file = Path(path)
        data = read_format_json(file, STATS_FORMAT, "CLIP statistics")
        entries = files.field(data, "landmarks", dict[str, dict[str, Any]], str(file))
        mean: dict[str, float] = {}
        std: dict[str, float] = {}
        for name, entry in entries.items():
            where = files.field_path("landmarks", name)
            if "mean" not in entry or "std" not in entry:
                raise DataError(f"{file}: {where} needs numbers mean and std")
            mean[name] = float(files.check_type(entry["mean"], float, str(file), name=f"{where}.mean"))
            std[name] = float(files.check_type(entry["std"], float, str(file), name=f"{where}.std"))
        n_views = files.field(data, "n_views", int, str(file), default=0)
        return cls(mean, std, n_views, files.field(data, "model", str, str(file), default=""))


def fit_stats(
    scorer: ImageTextScorer,
    views: Iterable[np.ndarray],
    landmarks: Iterable[str],
    *,
    batch: int = 64,
    model: str = "",
) -> LandmarkStats:
    """Mean/std of each landmark's caption similarity over `views` (training-area views; see `training_views`)."""
    names = sorted(set(landmarks))
    if not names:
        raise SituatedError("fit_stats needs at least one landmark")
    texts = _unit(scorer.text_features([caption(n) for n in names]))
    total = np.zeros(len(names))
    squares = np.zeros(len(names))
    count = 0
    chunk: list[np.ndarray] = []

    def flush() -> None:
        nonlocal count
        sims = _unit(scorer.image_features(chunk)) @ texts.T
        total[:] += sims.sum(axis=0)
        squares[:] += (sims**2).sum(axis=0)
        count += len(chunk)
        chunk.clear()

    for view in views:
        chunk.append(view)
        if len(chunk) >= batch:
            flush()
    if chunk:
        flush()
    if count < 2:
        raise SituatedError("fit_stats needs at least two views")
    mean = total / count
    std = np.sqrt(np.maximum(squares / count - mean**2, 0.0))
    return LandmarkStats(dict(zip(names, mean.tolist(), strict=True)), dict(zip(names, std.tolist(), strict=True)),
                         count, model)


def find_panorama(directory: str | Path, panoid: str) -> Path | None:
    """`<directory>/<panoid>.jpg|.jpeg|.png`, whichever exists first."""
    for suffix in PANORAMA_SUFFIXES:
        path = Path(directory) / f"{panoid}{suffix}"
        if path.is_file():
            return path
    return None


def load_panorama(path: str | Path) -> np.ndarray:
    """An image file as an H × W × 3 float32 array (0–255); needs Pillow."""
    try:
        from PIL import Image
    except ImportError:
        raise SituatedError("reading panoramas needs Pillow: pip install 'situated[clip]'") from None
    import io

    data = files.read_bytes(path, what="panorama")
    try:
        with Image.open(io.BytesIO(data)) as image:
            return np.asarray(image.convert("RGB"), dtype=np.float32)
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as err:
        raise DataError(f"{path}: cannot read panorama ({' '.join(str(err).split())[:200]})") from None


def training_views(
    directory: str | Path,
    panoids: Iterable[str],
    *,
    centers: Mapping[str, float] | None = None,
    headings: Sequence[float] = tuple(range(0, 360, 45)),
    size: tuple[int, int] = (224, 224),
) -> Iterable[np.ndarray]:
    """Views of the available panoramas among `panoids` (e.g. the `seen` partition) at compass `headings`."""
    for panoid in panoids:
        path = find_panorama(directory, panoid)
        if path is None:
            continue
        panorama = load_panorama(path)
        center = (centers or {}).get(panoid, 0.0)
        for heading in headings:
            yield perspective_view(panorama, heading, center=center, size=size)


class ClipVisibility:
    """VisibilitySource over a directory of panoramas, scored by an ImageTextScorer with fitted stats.

    A panorama missing from the directory is a DataError naming the file it looked for. View embeddings of the
    last `cache_size` (panorama, heading) pairs and all caption embeddings are kept.
    """

    def __init__(
        self,
        scorer: ImageTextScorer,
        panoramas: str | Path,
        stats: LandmarkStats,
        *,
        centers: Mapping[str, float] | None = None,
        threshold: float = THRESHOLD,
        size: tuple[int, int] = (224, 224),
        loader: Callable[[Path], np.ndarray] = load_panorama,
        cache_size: int = 64,
    ) -> None:
        self.scorer = scorer
        self.directory = Path(panoramas)
        self.stats = stats
        self.centers = centers or {}
        self.threshold = threshold
        self.size = size
        self._loader = loader
        self._cache_size = cache_size
        self._views: dict[tuple[str, int], np.ndarray] = {}
        self._texts: dict[str, np.ndarray] = {}

    def _view_features(self, panoid: str, heading: int) -> np.ndarray:
        key = (panoid, heading % 360)
        if key not in self._views:
            path = find_panorama(self.directory, panoid)
            if path is None:
                raise DataError(f"no panorama {self.directory / panoid}.jpg (or .jpeg/.png)")
            views = five_views(self._loader(path), heading, center=self.centers.get(panoid, 0.0), size=self.size)
            if len(self._views) >= self._cache_size:
                self._views.pop(next(iter(self._views)))
            self._views[key] = _unit(self.scorer.image_features(views))
        return self._views[key]

    def _text_features(self, landmarks: Sequence[str]) -> np.ndarray:
        new = [name for name in landmarks if name not in self._texts]
        if new:
            for name, row in zip(new, _unit(self.scorer.text_features([caption(n) for n in new])), strict=True):
                self._texts[name] = row
        return np.stack([self._texts[name] for name in landmarks])

    def z_scores(self, panoid: str, heading: int, landmarks: Sequence[str]) -> np.ndarray:
        """Five views × landmarks matrix of standardized similarities."""
        sims = self._view_features(panoid, heading) @ self._text_features(landmarks).T
        return self.stats.z_scores(landmarks, sims)

    def visible(self, panoid: str, heading: int, landmarks: Sequence[str]) -> Mapping[str, tuple[str, ...]]:
        names = list(dict.fromkeys(landmarks))
        if not names:
            return {}
        z = self.z_scores(panoid, heading, names)
        found: dict[str, list[str]] = {}
        for column, name in enumerate(names):
            best = int(np.argmax(z[:, column]))
            if z[best, column] >= self.threshold:
                found.setdefault(BUCKETS[best], []).append(name)
        return {bucket: tuple(found[bucket]) for bucket in BUCKETS if bucket in found}


class OpenClipScorer:
    """ImageTextScorer backed by OpenCLIP (optional: `pip install 'situated[clip]'`).

    `OpenClipScorer("ViT-B-32", weights="/path/open_clip_model.safetensors")` loads the weights from a path the
    user gives (no download); `OpenClipScorer.from_model(model, preprocess, tokenizer)` wraps a loaded model.
    """

    def __init__(self, model_name: str = "ViT-B-32", weights: str | Path | None = None, device: str = "cpu") -> None:
        open_clip = _import_open_clip()
        if weights is not None and not Path(weights).is_file():
            raise DataError(f"no CLIP weights file {weights}")
        try:
            model, _, preprocess = open_clip.create_model_and_transforms(
                model_name, pretrained=str(weights) if weights is not None else None, device=device
            )
        except RuntimeError as err:
            raise SituatedError(f"OpenCLIP could not build {model_name} from {weights}: {err}") from None
        self._setup(model, preprocess, open_clip.get_tokenizer(model_name), device, f"{model_name}:{weights}")

    @classmethod
    def from_model(cls, model: Any, preprocess: Any, tokenizer: Any, device: str = "cpu") -> OpenClipScorer:
        scorer = cls.__new__(cls)
        scorer._setup(model, preprocess, tokenizer, device, type(model).__name__)
        return scorer

    def _setup(self, model: Any, preprocess: Any, tokenizer: Any, device: str, name: str) -> None:
        self.model = model.eval()
        self.preprocess = preprocess
        self.tokenizer = tokenizer
        self.device = device
        self.name = name

    def image_features(self, views: Sequence[np.ndarray]) -> np.ndarray:
        import torch
        from PIL import Image

        pixels = [Image.fromarray(np.clip(v, 0, 255).astype(np.uint8)) for v in views]
        batch = torch.stack([self.preprocess(p) for p in pixels]).to(self.device)
        with torch.no_grad():
            return self.model.encode_image(batch).float().cpu().numpy()

    def text_features(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        with torch.no_grad():
            return self.model.encode_text(self.tokenizer(list(texts)).to(self.device)).float().cpu().numpy()


def _import_open_clip() -> Any:
    try:
        import open_clip
    except ImportError:
        raise SituatedError(
            "the CLIP landmark scorer needs OpenCLIP and Pillow: pip install 'situated[clip]'"
        ) from None
    return open_clip

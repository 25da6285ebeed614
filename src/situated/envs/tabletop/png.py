"""Writing an RGB image as PNG with the standard library (zlib + struct): no imaging dependency."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(rgb: np.ndarray) -> bytes:
    """PNG bytes of an (H, W, 3) or (H, W, 4) uint8 image (8-bit RGB or RGBA, no filtering)."""
    image = np.ascontiguousarray(rgb, dtype=np.uint8)
    if image.ndim != 3 or image.shape[2] not in (3, 4):
        raise ValueError(f"expected an (H, W, 3) or (H, W, 4) image, got shape {image.shape}")
    height, width, channels = image.shape
    colour_type = 2 if channels == 3 else 6
    rows = np.concatenate([np.zeros((height, 1), dtype=np.uint8), image.reshape(height, width * channels)], axis=1)
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
            + _chunk(b"IEND", b""))


def save_png(path: str | Path, rgb: np.ndarray) -> Path:
    """Write `rgb` to `path` as PNG; returns the path."""
    target = Path(path)
    target.write_bytes(encode_png(rgb))
    return target

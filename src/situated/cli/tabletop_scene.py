"""The tabletop side of `situated run` and `situated plan` (`--scene tabletop:NAME|FILE`): the scene option's
help and the camera's final image (`--render`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ..errors import DataError
from ..eval.systems.scenes import OpenedScene

SCENE_HELP = ("A VirtualHome-format scene graph (JSON), or tabletop:NAME for a built-in tabletop scene "
              "(gift_bag, fruit_bowl, sorting) or tabletop:FILE for a tabletop scene file.")
RenderOpt = Annotated[Path | None, typer.Option("--render", help="Save the tabletop camera's final image (PNG).")]


def save_render(opened: OpenedScene, path: Path | None, console: Console) -> None:
    """Write the tabletop camera's image of the scene as it is now to `path` (nothing when None)."""
    if path is None:
        return
    if not opened.has_camera:
        raise DataError(f"--render {path}: only a tabletop scene has a camera (use --scene tabletop:...)")
    try:
        written = opened.env.save_image(path)
    except OSError as err:
        raise DataError(f"{path}: cannot write the image ({err.strerror or err})") from None
    console.print(f"camera image → {written}")

"""Opening a scene for `situated run` and `situated plan`: a household scene graph or a tabletop scene.

`--scene apartment.json` is a VirtualHome-format scene graph; `--scene tabletop:fruit_bowl` is a built-in tabletop
scene (`gift_bag`, `fruit_bowl`, `sorting`) and `--scene tabletop:my_scene.json` a tabletop scene file. The opened
scene says which actions its plans may use and which planner writes plans for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ...actions import (
    PROGPROMPT_SPACE,
    SANDBOX_PRIMITIVES,
    TABLETOP_PRIMITIVES,
    TABLETOP_SPACE,
    VIRTUALHOME_SPACE,
    ActionSpace,
)
from ...errors import DataError
from ...program import Program, parse

TABLETOP = "tabletop:"
RUN_TABLETOP_SPACE = ActionSpace(TABLETOP_PRIMITIVES + SANDBOX_PRIMITIVES)
"""What a plan run on the tabletop may call: the arm's skills (ProgPrompt's primitive and Vocal Sandbox's)."""


@dataclass(frozen=True)
class OpenedScene:
    """An environment (reset), the actions a plan run on it may use, the names it may name, and the planner
    kind that writes plans for it (`progprompt` or `progprompt_tabletop`, with `plan_space`)."""

    env: Any
    kind: Literal["household", "tabletop"]
    space: ActionSpace
    plan_space: ActionSpace
    planner: str
    names: tuple[str, ...]
    source: str

    @property
    def has_camera(self) -> bool:
        """Whether `env.save_image` renders the scene (the tabletop's camera)."""
        return self.kind == "tabletop"

    def read_program(self, text: str | bytes, source: str) -> Program:
        """A plan file's program; a tabletop plan may start with its local `objects = [...]` line, as the
        planner's prompt shows it (the line is checked to be a plain list of names and left out)."""
        if self.kind == "tabletop":
            from ...planners.progprompt_tabletop import strip_objects_line

            try:
                raw = text.decode("utf-8") if isinstance(text, bytes) else text
            except UnicodeDecodeError:
                return parse(text, source=source)  # the parser names the bad bytes
            _, text = strip_objects_line(raw)
        return parse(text, source=source)


def is_tabletop(scene: str | Path) -> bool:
    return str(scene).startswith(TABLETOP)


def open_scene(scene: str | Path, *, seed: int = 0, slip_probability: float = 0.0) -> OpenedScene:
    """Open `scene` (see the module docstring) and reset it; DataError naming the file and field when it is bad."""
    text = str(scene)
    if not is_tabletop(text):
        from ...envs.household import HouseholdEnv

        env: Any = HouseholdEnv.from_file(Path(text), seed=seed)
        env.reset()
        return OpenedScene(env, "household", VIRTUALHOME_SPACE, PROGPROMPT_SPACE, "progprompt",
                           tuple(env.object_names()), text)
    from ...envs.tabletop import BUILTIN_SCENES, TabletopEnv

    name = text[len(TABLETOP):]
    if not name:
        raise DataError(f"--scene {text}: name a built-in tabletop scene ({', '.join(BUILTIN_SCENES)}) or a scene "
                        "file after 'tabletop:'")
    if name not in BUILTIN_SCENES and not Path(name).exists():
        raise DataError(f"--scene {text}: {name!r} is neither a built-in tabletop scene "
                        f"({', '.join(BUILTIN_SCENES)}) nor a scene file")
    env = TabletopEnv(name if name in BUILTIN_SCENES else Path(name), seed=seed, slip_probability=slip_probability)
    env.reset()
    return OpenedScene(env, "tabletop", RUN_TABLETOP_SPACE, TABLETOP_SPACE, "progprompt_tabletop",
                       tuple(sorted(env.object_properties())), name)

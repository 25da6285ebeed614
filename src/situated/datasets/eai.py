"""Loader of the eai-eval VirtualHome programs and their initial/final graphs.

The program set ships inside the optional `eai-eval` package (`virtualhome_eval/dataset/
programs_processed_precond_nograb_morepreconds`): `executable_programs/<scene>/<run>/<id>.txt` holds a title,
a description and `[ACTION] <name> (<instance>.<node id>)` lines; `init_and_final_graphs/<scene>/<run>/<id>.json`
holds `{"init_graph": ..., "final_graph": ...}` in VirtualHome's graph format.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import files
from ..envs.household.script import ScriptStep, parse_script
from ..errors import DataError

PROGRAM_SET = "programs_processed_precond_nograb_morepreconds"


@dataclass(frozen=True)
class EaiProgram:
    """One eai-eval program: its scene, id, task text, script lines and the file holding its graphs."""

    scene: str
    program_id: str
    title: str
    description: str
    lines: tuple[str, ...]
    steps: tuple[ScriptStep, ...]
    graph_path: Path

    def graphs(self) -> dict[str, Any]:
        data = files.read_json(self.graph_path, what="graphs file")
        for key in ("init_graph", "final_graph"):
            files.field(data, key, dict[str, Any], str(self.graph_path))
        return data

    def init_graph(self) -> dict[str, Any]:
        return self.graphs()["init_graph"]

    def final_graph(self) -> dict[str, Any]:
        return self.graphs()["final_graph"]


def eai_root() -> Path:
    """The program set inside the installed `eai-eval` package; DataError when the package is missing."""
    try:
        import virtualhome_eval
    except ImportError:
        raise DataError("the eai-eval VirtualHome programs need the optional package eai-eval "
                        "(pip install eai-eval==1.0.5)") from None
    root = Path(virtualhome_eval.__file__).parent / "dataset" / PROGRAM_SET
    if not (root / "executable_programs").is_dir():
        raise DataError(f"{root}: executable_programs not found in the installed eai-eval package")
    return root


def list_eai_programs(root: Path | None = None) -> list[tuple[str, str, Path]]:
    """(scene, program id, program file) of every program that has its graphs file, sorted."""
    root = eai_root() if root is None else Path(root)
    programs_dir = root / "executable_programs"
    if not programs_dir.is_dir():
        raise DataError(f"{programs_dir}: no such directory")
    found = []
    for path in sorted(programs_dir.glob("*/*/*.txt")):
        scene = path.parent.parent.name
        if _graph_path(root, path).is_file():
            found.append((scene, path.stem, path))
    return found


def _graph_path(root: Path, program: Path) -> Path:
    rel = program.relative_to(root / "executable_programs").with_suffix(".json")
    return root / "init_and_final_graphs" / rel


def read_eai_program(root: Path, scene: str, program: Path) -> EaiProgram:
    """Parse one program file (ParseError naming file and line for a bad script line)."""
    text = files.read_text(program, what="program file")
    all_lines = text.splitlines()
    lines = tuple(line.strip() for line in all_lines if line.strip().startswith("["))
    steps = tuple(parse_script(all_lines, source=str(program)))
    title = all_lines[0].strip() if all_lines else ""
    description = all_lines[1].strip() if len(all_lines) > 1 else ""
    return EaiProgram(scene, program.stem, title, description, lines, steps, _graph_path(root, program))


def load_eai_programs(root: Path | None = None) -> Iterator[EaiProgram]:
    """Every eai-eval program with a graphs file, in sorted order (graphs are read on demand)."""
    root = eai_root() if root is None else Path(root)
    for scene, _, path in list_eai_programs(root):
        yield read_eai_program(root, scene, path)

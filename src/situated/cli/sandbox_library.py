"""`situated sandbox library`: list a skill library, export it to a file, import one.

    situated sandbox library --library DB [--json]                   what it holds, and its integrity
    situated sandbox library export --library DB --out FILE [--force] the whole library as situated-library/1 JSON
    situated sandbox library import --library DB FILE                add an export: all of it, or nothing

Export writes a regular file only (never the library, its -wal or -shm, a device or a FIFO; an existing file only
with --force), atomically. Import checks every field and the caps before it adds anything. A bad library or
export file is one line `error: FILE: ...` and exit code 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import DataError
from ..sandbox.console import library_lines
from .sandbox import LibraryOpt, sandbox_app

if TYPE_CHECKING:
    from ..sandbox import SkillLibrary

library_app = typer.Typer(
    help="A skill library: list it (default), export it, import an export.",
    invoke_without_command=True,
    no_args_is_help=False,
)
sandbox_app.add_typer(library_app, name="library")

ExistingLibraryOpt = Annotated[Path, typer.Option("--library", help="The skill library file.")]


def _existing(library: Path) -> Path:
    if not library.exists():
        raise DataError(f"{library}: no such library file")
    return library


@library_app.callback()
def library_command(
    ctx: typer.Context,
    library: LibraryOpt = Path("sandbox.db"),
    as_json: Annotated[bool, typer.Option("--json", help="End with one JSON line of names and integrity.")] = False,
) -> None:
    """List what a skill library holds and check its integrity."""
    if ctx.invoked_subcommand is not None:
        return
    from ..sandbox import SkillLibrary

    with SkillLibrary.open(_existing(library)) as lib:
        for line in library_lines(lib):
            print(line)
        integrity = lib.integrity()
        print(f"integrity: {integrity}")
        if as_json:
            print(json.dumps({"behaviours": [r.name for r in lib.behaviours()],
                              "objects": [r.name for r in lib.objects()],
                              "skills": [r.name for r in lib.skills()], "integrity": integrity}), flush=True)


@library_app.command("export")
def export_command(
    library: ExistingLibraryOpt,
    out: Annotated[Path, typer.Option("--out", help="The export file (situated-library/1 JSON).")],
    force: Annotated[bool, typer.Option("--force", help="Replace an existing (regular) file.")] = False,
) -> None:
    """Write the whole library (every version, every session) to one JSON file."""
    from ..sandbox import SkillLibrary

    with SkillLibrary.open(_existing(library)) as lib:
        lib.export_json(out, overwrite=force)
        print(f"wrote {out}: {_counts(lib)}", flush=True)


@library_app.command("import")
def import_command(
    library: ExistingLibraryOpt,
    file: Annotated[Path, typer.Argument(help="A situated-library/1 export.")],
) -> None:
    """Add everything in an export to the library (created if absent): all of it, or on any problem nothing."""
    from ..sandbox import SkillLibrary
    from ..sandbox.library_transfer import read_export

    read_export(file)  # a bad export is refused before the library is created or opened
    with SkillLibrary.open(library) as lib:
        lib.import_json(file)
        print(f"imported {file} into {library}: {_counts(lib)}", flush=True)


def _counts(lib: SkillLibrary) -> str:
    return (f"{len(lib.objects())} objects, {len(lib.behaviours())} behaviours, {len(lib.skills())} skills, "
            f"{len(lib.sessions())} sessions")

"""The `situated` command line: the only place that prints. Bad input ends in one line and exit code 2."""

from __future__ import annotations

import sys

import typer

from ..errors import SituatedError

app = typer.Typer(
    name="situated",
    help="Language models that plan and act for robots, grounded in what the agent can do and see.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _register() -> None:
    # Each module adds its commands to `app`; imported here so `situated.cli` stays the one entry point.
    from . import household, navigate, progprompt, report  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    """Console entry point: run the app, turning SituatedError into one clear line and exit code 2."""
    _register()
    try:
        app(args=argv, standalone_mode=False)
    except SituatedError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except typer.Exit as ex:
        return ex.exit_code
    except typer.Abort:
        print("aborted", file=sys.stderr)
        return 130
    except Exception as err:  # click usage errors arrive here in non-standalone mode
        import click

        if isinstance(err, click.ClickException):
            err.show()
            return 2
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())

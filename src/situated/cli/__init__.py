"""The `situated` command line: the only place that prints.

Exit codes: 0 success; 2 bad input (one line `error: ...` naming the file, line and field; never a traceback);
130 interrupted (Ctrl-C; "aborted"); 1 only for a bug in situated (with its traceback and a request to report it).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import traceback

import click
import typer

from ..errors import SituatedError

try:  # typer >= 0.20 carries its own copy of click; usage errors come from that copy
    from typer._click.exceptions import ClickException as _TyperClickException
except ImportError:  # pragma: no cover - older typer uses click itself
    _TyperClickException = click.ClickException
_USAGE_ERRORS = (click.ClickException, _TyperClickException)

app = typer.Typer(
    name="situated",
    help="Language models that plan and act for robots, grounded in what the agent can do and see.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
EXIT_BUG = 1


def _register() -> None:
    # Each module adds its commands to `app`; imported here so `situated.cli` stays the one entry point.
    from . import (  # noqa: F401
        eai,
        household,
        navigate,
        navigate_train,
        progprompt,
        report,
        sandbox,
        sandbox_library,
        sandbox_study,
        tabletop,
    )


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _usage_line(err: Exception) -> str:
    """A usage error as one line, with where to find the command's help."""
    line = _one_line(err.format_message() if hasattr(err, "format_message") else str(err))
    ctx = getattr(err, "ctx", None)
    return f"{line} (see '{ctx.command_path} --help')" if ctx is not None else line


def main(argv: list[str] | None = None) -> int:
    """Console entry point: run the app and turn every outcome into one of the documented exit codes."""
    _register()
    try:
        result = app(args=argv, standalone_mode=False)
        sys.stdout.flush()  # a full stdout is reported here, not when the interpreter exits
    except SituatedError as err:
        print(f"error: {_one_line(str(err))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (typer.Exit, click.exceptions.Exit) as ex:
        return ex.exit_code
    except (typer.Abort, click.exceptions.Abort, KeyboardInterrupt):
        print("aborted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except _USAGE_ERRORS as err:  # usage errors: unknown option, missing argument, bad value
        if type(err).__name__ == "NoArgsIsHelpError":  # a bare command: its help, as asked
            err.show()
        else:
            print(f"error: {_usage_line(err)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except RecursionError:
        print("error: input nested too deeply to process", file=sys.stderr)
        return EXIT_BAD_INPUT
    except MemoryError:
        print("error: out of memory (is an input unexpectedly large?)", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as err:
        if err.errno not in _FULL:
            _bug()
            return EXIT_BUG
        _silence_stdout()  # stdout itself may be the full device: its last flush at exit must not fail again
        print(f"error: cannot write the output: {err.strerror or err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception:
        _bug()
        return EXIT_BUG
    if result == EXIT_INTERRUPTED:  # typer returns 130 for Ctrl-C in non-standalone mode
        print("aborted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return result if isinstance(result, int) else 0


_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)
"""Write errors that are the machine's, not situated's (stdout on a full disk, /dev/full)."""


def _silence_stdout() -> None:
    with contextlib.suppress(AttributeError, OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _bug() -> None:
    traceback.print_exc()
    print("This is a bug in situated: please report it with the command you ran and the traceback above.",
          file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())

"""The one exception family of `situated`; the CLI turns each into one line and exit code 2."""

from __future__ import annotations


class SituatedError(Exception):
    """Base of every error `situated` raises on purpose (bad input, failing backend, bad data)."""


class ParseError(SituatedError):
    """A plan program could not be parsed; carries the line and column (1-based) of the problem."""

    def __init__(self, message: str, line: int = 0, col: int = 0, source: str | None = None) -> None:
        self.message = message
        self.line = line
        self.col = col
        self.source = source
        where = f"{source}:" if source else ""
        super().__init__(f"{where}line {line}, column {col}: {message}" if line else f"{where}{message}")


class ValidationError(SituatedError):
    """A parsed program refers to things the agent cannot do or see; `problems` lists each with its line."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


class UnknownActionError(SituatedError):
    """An action name that is not in the agent's ActionSpace."""


class UnknownObjectError(SituatedError):
    """An object name that is not in the scene or the object vocabulary."""


class BackendError(SituatedError):
    """A language-model backend failed (server unreachable, timeout, malformed answer, missing weights)."""


class DataError(SituatedError):
    """A data file is missing or malformed; the message names the file, line and field."""

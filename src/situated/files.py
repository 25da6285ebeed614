"""The one guarded way `situated` reads input files and writes outputs.

Every reader checks that the path is a regular file before opening it for content (a directory, FIFO, socket or
device is refused without blocking), enforces a size limit before and while reading, decodes UTF-8 strictly and
parses JSON with bounded nesting, bounded integers and no NaN/Infinity. Every failure is a `DataError` with one
line `PATH: line N, column M: field X: problem`; nothing else escapes (no RecursionError, UnicodeDecodeError,
OSError or the interpreter's 4300-digit integer limit).

Outputs: `check_output` refuses to overwrite an input or (without `force`) an existing file; `write_text_atomic`
replaces a file in one step (temp file, fsync, rename); `append_line` appends one record with O_APPEND and fsync,
first completing a line that an interrupted writer left without its newline.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import stat
import tempfile
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any, Literal, TypeVar

from situated.errors import DataError

T = TypeVar("T")

MiB = 1024 * 1024
DEFAULT_LIMIT = 64 * MiB
"""Largest input file read by default (the largest shipped data file is about 3 MB)."""
MAX_DEPTH = 64
"""Deepest JSON nesting accepted by default (scene graphs need 4, cassettes about 10)."""
MAX_INT_DIGITS = 100
"""Longest JSON integer (in digits) accepted by default."""

_CHUNK = 1024 * 1024
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_BRACKETS = re.compile(rf"{_STRING}|[\[\]{{}}]", re.DOTALL)
_NUMBER_TOKENS = re.compile(rf"({_STRING})|(-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)|(NaN|-?Infinity)", re.DOTALL)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_UNPAIRED_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
# Fast whole-text checks on the UTF-8 bytes (C speed): the skeleton of brackets and quotes, and digit runs.
_NOT_STRUCTURE = bytes(c for c in range(256) if c not in b'[]{}"')
_SKELETON_STRINGS = re.compile(rb'"[^"]*"')
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_NUMBER_SHAPE = bytes(
    ord("0") if chr(c).isdigit() and c < 128 else ord("e") if c in b"eE" else ord("+") if c in b"+-" else ord(" ")
    for c in range(256)
)
_BIG_EXPONENT = re.compile(rb"0e\+?000")
_LONG_DIGITS = b"0" * (MAX_INT_DIGITS + 1)
_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


class _Reject(Exception):
    """A value json.loads accepted that we do not (raised from its hooks, located afterwards)."""


# ------------------------------------------------------------------------------------------------- positions

def at(where: str, line: int | None = None, column: int | None = None, field: str | None = None) -> str:
    """`where: line N, column M: field X` with the parts that are known."""
    parts = [where]
    if line is not None:
        parts.append(f"line {line}" + (f", column {column}" if column is not None else ""))
    if field:
        parts.append(f"field {field}")
    return ": ".join(parts)


def _position(text: str, index: int) -> tuple[int, int]:
    """1-based (line, column) of character `index` of `text`."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


# ------------------------------------------------------------------------------------------------- reading

def _kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "a special file")


def _chunks(path: str | Path, what: str, limit: int) -> Iterator[bytes]:
    """The content of the regular file `path` in chunks, at most `limit` bytes in all (see `read_bytes`)."""
    shown = str(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        raise DataError(f"{shown}: cannot read {what}: {exc.strerror or exc}") from None
    except ValueError as exc:  # embedded NUL in the path
        raise DataError(f"{shown!r}: cannot read {what}: {exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise DataError(f"{shown}: cannot read {what}: {_kind(info.st_mode)}, not a regular file")
    if info.st_size > limit:
        raise DataError(f"{shown}: {what} is {info.st_size} bytes, more than the limit of {limit} bytes")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise DataError(f"{shown}: cannot read {what}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # swapped between stat and open
            raise DataError(f"{shown}: cannot read {what}: {_kind(mode)}, not a regular file")
        total = 0
        while True:
            try:
                chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            except OSError as exc:
                raise DataError(f"{shown}: cannot read {what}: {exc.strerror or exc}") from None
            if not chunk:
                return
            total += len(chunk)
            if total > limit:
                raise DataError(f"{shown}: {what} grew past the limit of {limit} bytes while being read")
            yield chunk
    finally:
        os.close(fd)


def read_bytes(path: str | Path, *, what: str = "file", limit: int = DEFAULT_LIMIT) -> bytes:
    """The content of the regular file `path`, at most `limit` bytes; DataError for anything else.

    The type is checked with stat before opening (and again on the open descriptor), and the file is opened
    with O_NONBLOCK, so a FIFO, socket or device never blocks; a file that grows past `limit` while it is being
    read is refused too. `what` names the file in messages ("scene graph", "cassette").
    """
    return b"".join(_chunks(path, what, limit))


def decode_text(data: bytes, where: str, *, line: int = 1, allow_nul: bool = False) -> str:
    """`data` (line `line` of `where` onwards) as strict UTF-8, a byte-order mark at the start of line 1
    dropped; DataError naming the line and column of the first invalid byte, or of the first NUL unless
    `allow_nul`."""
    first = line
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = exc.start
        line = first + data.count(b"\n", 0, start)
        line_start = data.rfind(b"\n", 0, start) + 1
        column = len(data[line_start:start].decode("utf-8", errors="replace")) + 1
        bad = data[start : max(exc.end, start + 1)][:4].hex(" ")
        raise DataError(f"{at(where, line, column)}: not UTF-8 text (byte {bad}: {exc.reason})") from None
    if first == 1 and text.startswith("\ufeff"):
        text = text[1:]
    if not allow_nul:
        nul = text.find("\x00")
        if nul >= 0:
            row, column = _position(text, nul)
            raise DataError(f"{at(where, first + row - 1, column)}: NUL byte in text")
    return text


def read_text(
    path: str | Path, *, what: str = "text file", limit: int = DEFAULT_LIMIT, allow_nul: bool = False
) -> str:
    """The regular file `path` as UTF-8 text (see `read_bytes` and `decode_text`)."""
    return decode_text(read_bytes(path, what=what, limit=limit), str(path), allow_nul=allow_nul)


# ------------------------------------------------------------------------------------------------- JSON

def json_depth_problem(text: str, max_depth: int, encoded: bytes | None = None) -> int | None:
    """Index of the bracket that first nests deeper than `max_depth` (brackets inside strings do not count).

    The check runs on the skeleton of the UTF-8 bytes (`encoded`, if given): escapes dropped, everything but
    brackets and quotes deleted, strings removed. Only when it finds too deep a nesting does a slower scan of
    `text` locate the bracket (both scans agree with json.loads up to the first syntax error, where it stops).
    """
    data = encoded if encoded is not None else text.encode("utf-8", "surrogatepass")
    if data.count(b"[") + data.count(b"{") <= max_depth:
        return None
    if b"\\" in data:  # drop escaped backslashes, then escaped quotes (left to right, as JSON reads them)
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    skeleton = _SKELETON_STRINGS.sub(b"", data.translate(None, _NOT_STRUCTURE)).replace(b'"', b"")
    if max(accumulate(map(_STEP.__getitem__, skeleton)), default=0) <= max_depth:
        return None
    depth = 0
    for match in _BRACKETS.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > max_depth:
                return match.start()
        elif token in ("]", "}"):
            depth -= 1
    return None  # the skeleton miscounted past a syntax error, which json.loads stops at


def _reject_constant(name: str) -> Any:
    raise _Reject(f"{name} is not a JSON number")


def _locate_number(text: str, max_int_digits: int) -> tuple[int, str] | None:
    """Index and problem of the first number outside strings that the JSON readers refuse."""
    for match in _NUMBER_TOKENS.finditer(text):
        if match.group(1):
            continue
        if match.group(3):
            return match.start(), f"{match.group(3)} is not a JSON number"
        number = match.group(2)
        if re.fullmatch(r"-?[0-9]+", number):
            if len(number.lstrip("-")) > max_int_digits:
                return match.start(), f"integer with {len(number.lstrip('-'))} digits (limit {max_int_digits})"
        elif not math.isfinite(float(number)):
            return match.start(), f"number {number[:20]}{'...' if len(number) > 20 else ''} is out of range"
    return None


def _unpaired_surrogate(value: Any) -> bool:
    """Whether a string (key or value) in `value` holds an unpaired UTF-16 surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def parse_json(
    text: str,
    where: str,
    *,
    line: int = 1,
    max_depth: int = MAX_DEPTH,
    max_int_digits: int = MAX_INT_DIGITS,
    duplicate_keys: Literal["last", "error"] = "last",
) -> Any:
    """Parse JSON `text` read from `where` (its first line is line `line` there).

    Refused with a DataError naming line and column: invalid JSON, nesting deeper than `max_depth` (checked
    before parsing, so no RecursionError), NaN/Infinity and numbers that overflow to them, integers longer than
    `max_int_digits` digits, strings with unpaired surrogate escapes (they cannot be written back as UTF-8), and
    with `duplicate_keys="error"` an object with a repeated key.
    """
    def fail(index: int | None, problem: str) -> DataError:
        if index is None:
            return DataError(f"{where}: {problem}")
        row, column = _position(text, index)
        return DataError(f"{at(where, line + row - 1, column)}: {problem}")

    try:
        encoded = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise fail(exc.start, "unpaired surrogate character (not text)") from None
    deep = json_depth_problem(text, max_depth, encoded)
    if deep is not None:
        raise fail(deep, f"JSON nested deeper than {max_depth} levels")
    hooks: dict[str, Any] = {"parse_constant": _reject_constant}
    shape = encoded.translate(_NUMBER_SHAPE)  # digits -> 0, e/E -> e, +/- -> +, the rest -> space
    long_digits = _LONG_DIGITS if max_int_digits >= MAX_INT_DIGITS else b"0" * (max_int_digits + 1)
    if long_digits in shape or _BIG_EXPONENT.search(shape):  # then check every number (slower)
        hooks["parse_int"] = lambda s: _checked_int(s, max_int_digits)
        hooks["parse_float"] = _checked_float
    if duplicate_keys == "error":
        hooks["object_pairs_hook"] = _unique_keys
    try:
        value = json.loads(text, **hooks)
    except json.JSONDecodeError as exc:
        raise fail(exc.pos, f"invalid JSON ({exc.msg})") from None
    except _Reject as exc:
        located = _locate_number(text, max_int_digits) if not str(exc).startswith("duplicate") else None
        raise (fail(*located) if located else fail(None, str(exc))) from None
    except (ValueError, RecursionError) as exc:  # the interpreter's own int limit; a deeper stack than planned
        located = _locate_number(text, max_int_digits)
        raise (fail(*located) if located else fail(None, f"invalid JSON ({exc})")) from None
    if _SURROGATE_ESCAPE.search(text) and _unpaired_surrogate(value):
        escape = _UNPAIRED_ESCAPE.search(text)
        raise fail(escape.start() if escape else None, "string with an unpaired surrogate escape")
    return value


def _raise(error: DataError) -> Any:
    raise error


def _checked_int(text: str, max_digits: int) -> int:
    if len(text.lstrip("-")) > max_digits:
        raise _Reject(f"integer with {len(text.lstrip('-'))} digits (limit {max_digits})")
    return int(text)


def _checked_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Reject(f"number {text[:20]} is out of range")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Reject(f"duplicate key {key!r:.60}")
        result[key] = value
    return result


def read_json(
    path: str | Path,
    *,
    what: str = "JSON file",
    limit: int = DEFAULT_LIMIT,
    max_depth: int = MAX_DEPTH,
    max_int_digits: int = MAX_INT_DIGITS,
    duplicate_keys: Literal["last", "error"] = "last",
) -> Any:
    """The JSON value in the regular file `path` (see `read_text` and `parse_json` for what is refused)."""
    text = read_text(path, what=what, limit=limit)
    return parse_json(
        text, str(path), max_depth=max_depth, max_int_digits=max_int_digits, duplicate_keys=duplicate_keys
    )


def read_json_lines(
    path: str | Path,
    *,
    what: str = "JSON-lines file",
    limit: int = DEFAULT_LIMIT,
    max_depth: int = MAX_DEPTH,
    max_int_digits: int = MAX_INT_DIGITS,
    duplicate_keys: Literal["last", "error"] = "last",
) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line of the JSON-lines file `path`, read as it is consumed
    (memory grows with the longest line, not the file). Lines end with \\n (a \\r before it is dropped); each
    is decoded and parsed as `read_text` and `parse_json` do, and a bad line fails when it is reached."""
    shown = str(path)
    number = 0
    pending = bytearray()

    def parse(raw: bytes) -> Any:
        text = decode_text(raw.removesuffix(b"\r"), shown, line=number)
        if not text.strip():
            return _BLANK
        return parse_json(
            text, shown, line=number, max_depth=max_depth, max_int_digits=max_int_digits,
            duplicate_keys=duplicate_keys,
        )

    for chunk in _chunks(path, what, limit):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            pending += chunk[start:end]
            number += 1
            value = parse(bytes(pending))
            pending.clear()
            if value is not _BLANK:
                yield number, value
            start = end + 1
        pending += chunk[start:]
    if pending:
        number += 1
        value = parse(bytes(pending))
        if value is not _BLANK:
            yield number, value


_BLANK: Any = object()


# ------------------------------------------------------------------------------------------------- fields

_MISSING: Any = object()


def type_name(kind: Any) -> str:
    """A reader's name for a type annotation: `list of str`, `int or null`, ..."""
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if kind is Any:
        return "any value"
    if kind is type(None) or kind is None:
        return "null"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_name(a) for a in args)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin in (list, Sequence) or kind in (list, Sequence):
        return f"list of {type_name(args[0])}" if args and args[0] is not Any else "list"
    if origin in (dict, Mapping) or kind in (dict, Mapping):
        return f"object of {type_name(args[1])}" if args and args[1] is not Any else "object"
    if origin is tuple:
        return "list of " + ", ".join(type_name(a) for a in args)
    names = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "list"}
    return names.get(kind, getattr(kind, "__name__", str(kind)))


def field_path(path: str, key: str) -> str:
    """`path.key`, or `path['key']` when the key is not a plain name (so a message stays one readable line)."""
    if key.replace("_", "a").replace("-", "a").isalnum() and key.isascii():
        return f"{path}.{key}" if path else key
    return f"{path}[{key!r}]"


def _json_type(value: Any) -> str:
    names = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "list"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _check(value: Any, kind: Any, path: str) -> tuple[str, str] | None:
    """(field path, problem) of the first part of `value` that does not have type `kind`; None if it does."""
    if kind is Any:
        return None
    if kind is None or kind is type(None):
        return None if value is None else (path, f"expected null, got {_json_type(value)}")
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        problems = [_check(value, a, path) for a in args]
        if any(p is None for p in problems):
            return None
        deeper = [p for p in problems if p is not None and p[0] != path]
        return deeper[0] if deeper else (path, f"expected {type_name(kind)}, got {_json_type(value)}")
    if origin is Literal:
        return None if value in args and type(value) in {type(a) for a in args} else (
            path, f"expected {type_name(kind)}, got {value!r}"[:200])
    base = origin or kind
    if base in (list, Sequence, tuple):
        if not isinstance(value, list):
            return path, f"expected {type_name(kind)}, got {_json_type(value)}"
        if base is tuple and args and args[-1] is not Ellipsis:
            if len(value) != len(args):
                return path, f"expected {len(args)} items, got {len(value)}"
            items = zip(value, args, strict=True)
        else:
            items = ((v, args[0] if args else Any) for v in value)
        for index, (item, item_kind) in enumerate(items):
            problem = _check(item, item_kind, f"{path}[{index}]")
            if problem:
                return problem
        return None
    if base in (dict, Mapping):
        if not isinstance(value, dict):
            return path, f"expected {type_name(kind)}, got {_json_type(value)}"
        value_kind = args[1] if args else Any
        for key, item in value.items():
            problem = _check(item, value_kind, field_path(path, key))
            if problem:
                return problem
        return None
    if base is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif base is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(base, type):
        ok = isinstance(value, base)
    else:
        raise TypeError(f"unsupported field type {kind!r}")
    return None if ok else (path, f"expected {type_name(kind)}, got {_json_type(value)}")


def check_type(value: Any, kind: Any, where: str, *, name: str = "") -> Any:
    """`value` if it has the (JSON-shaped) type `kind`: str, int (not bool), float (int accepted), bool, None,
    Any, list[X], dict[str, X], tuple[X, Y], X | Y, Literal[...]; else DataError `where: field name.path: ...`."""
    problem = _check(value, kind, name)
    if problem is None:
        return value
    location, message = problem
    return _raise(DataError(f"{at(where, field=location or None)}: {message}"))


def field(obj: Any, name: str, kind: type[T] | Any, where: str, *, default: Any = _MISSING) -> T:
    """`obj[name]` checked against `kind` (see `check_type`); a missing field is a DataError unless `default`
    is given. `where` is typically `at(path, line)`; a nested `name` may be written `a.b` for the message."""
    if not isinstance(obj, dict):
        return _raise(DataError(f"{where}: expected an object, got {_json_type(obj)}"))
    if name not in obj:
        if default is not _MISSING:
            return default
        return _raise(DataError(f"{at(where, field=name)}: missing"))
    return check_type(obj[name], kind, where, name=name)


def validate(model: Any, value: Any, where: str) -> Any:
    """`value` validated by a pydantic model (or any type pydantic accepts); pydantic's ValidationError becomes
    one DataError line `where: field a.b[0]: message` (plus how many more problems there are)."""
    import pydantic  # an I/O-border dependency: imported only where records are validated with models

    try:
        if isinstance(model, type) and issubclass(model, pydantic.BaseModel):
            return model.model_validate(value)
        return pydantic.TypeAdapter(model).validate_python(value)
    except pydantic.ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0] if errors else {"loc": (), "msg": str(exc)}
        loc = ""
        for part in first.get("loc", ()):
            loc = f"{loc}[{part}]" if isinstance(part, int) else field_path(loc, str(part))
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        message = " ".join(str(first["msg"]).split())  # a validator's message may hold line breaks
        raise DataError(f"{at(where, field=loc or None)}: {message}{more}") from None


# ------------------------------------------------------------------------------------------------- outputs

def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.resolve() == b.resolve():
            return True
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def check_output(
    path: str | Path, *, inputs: Sequence[str | Path] = (), force: bool = False, appends: bool = False
) -> Path:
    """`path` if it may be written: not one of `inputs` (by path, symlink or hard link), not a directory, FIFO
    or socket, and not an existing file unless `force` or `appends` (the output is appended to by design, as a
    resumable results file). Missing parent folders are created. DataError otherwise."""
    out = Path(path)
    for source in inputs:
        if _same_file(out, Path(source)):
            raise DataError(f"{out}: output would overwrite the input {source}")
    try:
        info = os.stat(out)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise DataError(f"{out}: cannot write output: {exc.strerror or exc}") from None
    if info is not None:
        if stat.S_ISREG(info.st_mode):
            if not (force or appends):
                raise DataError(f"{out}: output exists; pass --force to overwrite it")
        elif stat.S_ISDIR(info.st_mode):
            raise DataError(f"{out}: expected an output file, found a directory")
        elif not stat.S_ISCHR(info.st_mode):  # /dev/null and friends are fine; a FIFO would block
            raise DataError(f"{out}: expected an output file, found {_kind(info.st_mode)}")
        return out
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"{out}: cannot create the output folder {out.parent}: {exc.strerror or exc}") from None
    return out


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EROFS):  # devices and pipes cannot sync
            raise


def write_text_atomic(path: str | Path, text: str) -> None:
    """Replace `path` by `text` (UTF-8) in one step: a temporary file beside it, fsync, rename, fsync the
    folder; readers see the old or the new content, never a part. A character device (/dev/null) is written
    directly. OSError (full disk, no permission) becomes a DataError naming `path`."""
    out = Path(path)
    data = text.encode("utf-8")
    try:
        if out.exists() and stat.S_ISCHR(out.stat().st_mode):
            fd = os.open(out, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
            try:
                _write_all(fd, data)
                _fsync(fd)
            finally:
                os.close(fd)
            return
        mode = stat.S_IMODE(out.stat().st_mode) if out.is_file() else 0o644
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
        try:
            try:
                _write_all(fd, data)
                os.fchmod(fd, mode)
                _fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, out)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _sync_folder(out.parent)
    except OSError as exc:
        raise DataError(f"{out}: cannot write: {exc.strerror or exc}") from None


def _sync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        _fsync(fd)
    finally:
        os.close(fd)


def append_line(path: str | Path, line: str) -> None:
    """Append one record `line` (no newline inside) and a newline to `path` with O_APPEND, then fsync. When the
    file does not end with a newline (an interrupted earlier write), one is written first, so the new record
    starts on its own line. OSError (full disk, a directory) becomes a DataError naming `path`."""
    if "\n" in line or "\r" in line:
        raise ValueError("append_line: a record must not contain line breaks")
    out = Path(path)
    try:
        fd = os.open(out, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as exc:
        raise DataError(f"{out}: cannot append: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISCHR(info.st_mode)):
            raise DataError(f"{out}: expected an output file, found {_kind(info.st_mode)}")
        prefix = b""
        if stat.S_ISREG(info.st_mode) and info.st_size > 0 and os.pread(fd, 1, info.st_size - 1) != b"\n":
            prefix = b"\n"
        _write_all(fd, prefix + line.encode("utf-8") + b"\n")
        _fsync(fd)
    except OSError as exc:
        raise DataError(f"{out}: cannot append: {exc.strerror or exc}") from None
    finally:
        os.close(fd)

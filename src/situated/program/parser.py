"""A hand-written, line-oriented parser for plan programs: ProgPrompt's pseudo-Python plus bounded `if`/`for`.

It never executes, evaluates or compiles its input: each line is cut into a few kinds of tokens (names,
string literals, punctuation, a trailing comment) and matched against the small statement grammar below.
Anything else is a `ParseError` naming what was found, with its line and column (both 1-based; a tab counts
as one column).

    program   := ["def" NAME "(" ")" ":"] block
    statement := "# text" | call | assert | if | for | "pass"
    call      := NAME "(" [arg ("," arg)* [","]] ")"          arg := 'string' | loop variable
    assert    := "assert" cond, then recovery lines:  "else:" call  |  "else:" + deeper block of calls
    if        := "if" cond ":" (call | block) ["else" ":" (call | block)]
    for       := "for" NAME "in" "[" 'string' ("," 'string')* [","] "]" ":" (call | block)
    cond      := ("not" | "(")* arg ("to" | "is" ["not"] | ["not"] "in" | "on") arg ")"*

Choices beyond ProgPrompt: `pass` is accepted and dropped (a no-op); an `else:` at the same indentation right
after an assert is taken as its recovery, like a deeper one; the first non-blank line sets the base
indentation; comment lines before a `def` header or after its body are outside the function and dropped.
`open` and `type` are actions (ProgPrompt's `open <obj>`, VirtualHome's `type <obj>`), so they are not among
the builtins rejected by name; like every call they only name an action.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import ParseError
from .syntax import HANDS, Arg, Assert, Call, Comment, Condition, For, If, Program, Statement, Var

__all__ = ["DANGEROUS_NAMES", "parse"]

# Python builtins that could reach the host if a plan were ever executed: rejected by name anywhere.
DANGEROUS_NAMES = frozenset({
    "exec", "eval", "compile", "getattr", "setattr", "delattr", "globals", "locals", "vars", "input",
    "breakpoint", "print", "help", "dir", "object", "super", "classmethod", "staticmethod", "property",
    "memoryview", "exit", "quit",
})
MAX_DEPTH_LIMIT = 100  # the largest max_depth accepted, so that nothing downstream recurses without bound
MAX_STRING_CHARS = 200

_KEYWORD_MESSAGES = {
    "import": "imports are not allowed", "from": "imports are not allowed",
    "while": "'while' loops are not allowed", "lambda": "lambdas are not allowed",
    "class": "class definitions are not allowed", "with": "'with' statements are not allowed",
    "try": "'try' statements are not allowed", "except": "'try'/'except' is not allowed",
    "finally": "'try'/'finally' is not allowed", "return": "'return' is not allowed",
    "yield": "'yield' is not allowed", "global": "'global' is not allowed",
    "nonlocal": "'nonlocal' is not allowed",
    "del": "'del' is not allowed", "raise": "'raise' is not allowed", "async": "'async' is not allowed",
    "await": "'await' is not allowed", "break": "'break' is not allowed",
    "continue": "'continue' is not allowed",
    "elif": "'elif' is not supported; write 'else:' with a nested 'if'",
    "and": "'and' is not supported in conditions; write one assert or if per condition",
    "or": "'or' is not supported in conditions; write one assert or if per condition",
    "True": "booleans are not allowed", "False": "booleans are not allowed", "None": "'None' is not allowed",
}
_ASSIGN_OPS = frozenset({"=", ":=", "+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=", "^=",
                         ">>=", "<<="})
_COMPARE_OPS = frozenset({"<", ">", "<=", ">=", "==", "!="})
_OPERATORS: dict[str, list[str]] = {}  # first character -> the operators starting with it, longest first
for _op in sorted(_ASSIGN_OPS | _COMPARE_OPS | {"...", "->", "**", "//", "<<", ">>", "+", "-", "*", "/", "%",
                                                "@", "&", "|", "^", "~", "(", ")", "[", "]", "{", "}", ",",
                                                ":", ";", ".", "!"}, key=len, reverse=True):
    _OPERATORS.setdefault(_op[0], []).append(_op)
_STRING_PREFIXES = frozenset({"f", "r", "b", "u", "rb", "br", "fr", "rf"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"[0-9.][0-9A-Za-z_.]*")
_STATE = re.compile(r"[a-z][a-z0-9_]*")
_STRING_EXTRA_CHARS = frozenset(" _-.")
_RELATIONS = "expected 'to', 'is', 'in' or 'on' in the condition"
_LOOP_USAGE = "'for' may only loop over a literal list of strings, e.g. for x in ['a', 'b']:"
_RESERVED_VAR_NAMES = frozenset({"to", "on", HANDS, "def", "assert", "pass"})


@dataclass(frozen=True)
class _Token:
    kind: str  # NAME, STR, NUM, OP, COMMENT
    text: str
    col: int  # 1-based

    @property
    def end(self) -> int:
        """The column just after the token."""
        return self.col + len(self.text) + (2 if self.kind == "STR" else 0)


@dataclass(frozen=True)
class _Line:
    number: int
    indent: str
    tokens: tuple[_Token, ...]  # without the trailing comment
    comment: str | None  # text of a trailing or whole-line comment

    @property
    def first(self) -> str:
        """The leading keyword or name ('' for a comment line or one that starts otherwise)."""
        return self.tokens[0].text if self.tokens and self.tokens[0].kind == "NAME" else ""


def parse(text: str | bytes, *, source: str | None = None, max_bytes: int = 200_000, max_depth: int = 8,
          max_loop_items: int = 64) -> Program:
    """Parse a plan program; any input ends in a Program or a ParseError (never another exception)."""
    if not 0 <= max_depth <= MAX_DEPTH_LIMIT:
        raise ValueError(f"max_depth must be between 0 and {MAX_DEPTH_LIMIT}, got {max_depth}")
    lines = _split(_decode(text, source, max_bytes))
    return _Parser(lines, source, max_depth, max_loop_items).program()


# ----------------------------------------------------------------------------------------------------
# Bytes and characters


def _decode(text: str | bytes, source: str | None, max_bytes: int) -> str:
    """UTF-8 text within max_bytes, with one line ending (\\n) and no NUL, control or invisible characters."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        data = bytes(text)
        if len(data) > max_bytes:
            line = data[:max_bytes].count(b"\n") + 1
            raise ParseError(f"input is {len(data)} bytes, more than max_bytes={max_bytes}", line, 1, source)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            start = data.rfind(b"\n", 0, e.start) + 1
            col = len(data[start:e.start].decode("utf-8", "replace")) + 1
            raise ParseError(f"input is not valid UTF-8 (byte 0x{data[e.start]:02x})",
                             data.count(b"\n", 0, e.start) + 1, col, source) from None
    elif not isinstance(text, str):
        raise ParseError(f"expected plan text (str or bytes), got {type(text).__name__}", 1, 1, source)
    else:
        size = len(text) if len(text) > max_bytes else len(text.encode("utf-8", "surrogatepass"))
        if size > max_bytes:
            line = text.count("\n", 0, max_bytes) + 1
            raise ParseError(f"input is more than max_bytes={max_bytes} bytes", line, 1, source)
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if text.replace("\t", "").replace("\n", "").isprintable():
        return text
    for index, char in enumerate(text):
        if char not in "\t\n" and not char.isprintable():
            line = text.count("\n", 0, index) + 1
            col = index - text.rfind("\n", 0, index)
            raise ParseError(f"{_describe_char(char)} is not allowed", line, col, source)
    return text


def _describe_char(char: str) -> str:
    if char == "\0":
        return "a NUL byte"
    category = unicodedata.category(char)
    kind = {"Cc": "control character", "Cf": "invisible formatting character", "Cs": "unpaired surrogate",
            "Zl": "line separator", "Zp": "paragraph separator", "Zs": "non-ASCII space",
            "Co": "private-use character", "Cn": "unassigned character"}.get(category, "unprintable char")
    return f"{kind} U+{ord(char):04X}"


# ----------------------------------------------------------------------------------------------------
# Tokens


def _split(text: str) -> list[tuple[int, str, str]]:
    """(number, indentation, line) of each non-blank line; lines are cut into tokens when the parser reaches
    them, so that the first error in reading order is the one reported."""
    lines = []
    for number, raw in enumerate(text.split("\n"), start=1):
        body = raw.lstrip(" \t")
        if body:
            lines.append((number, raw[: len(raw) - len(body)], raw))
    return lines


def _tokenize(line: str, start: int, number: int,
              source: str | None) -> tuple[tuple[_Token, ...], str | None]:
    def fail(message: str, index: int) -> ParseError:
        return ParseError(message, number, index + 1, source)

    tokens: list[_Token] = []

    def add(kind: str, text: str, index: int) -> None:
        tokens.append(_Token(kind, text, index + 1))
        message = _forbidden(tokens)
        if message:
            raise fail(message, index)

    i, n = start, len(line)
    while i < n:
        char = line[i]
        if char in " \t":
            i += 1
        elif char == "#":
            return tuple(tokens), line[i + 1:].strip(" \t")
        elif char in "'\"":
            end = _string_end(line, i, fail)
            add("STR", line[i + 1:end], i)
            i = end + 1
        elif match := _NAME.match(line, i):
            name = match.group()
            i = match.end()
            if i < n and line[i] in "'\"" and name.lower() in _STRING_PREFIXES:
                raise fail(f"string prefixes such as {name}'...' (f-strings, raw or byte strings) are not "
                           "allowed", match.start())
            if i < n and not line[i].isascii() and line[i].isalnum():
                raise fail("names may contain only ASCII letters, digits and '_'", i)
            add("NAME", name, match.start())
        elif char.isdigit() or (char == "." and i + 1 < n and line[i + 1].isdigit()):
            match = _NUMBER.match(line, i)
            end = match.end() if match else i + 1
            add("NUM", line[i:end], i)
            i = end
        elif op := next((op for op in _OPERATORS.get(char, ()) if line.startswith(op, i)), None):
            add("OP", op, i)
            i += len(op)
        elif char == "\\":
            raise fail("line continuation with '\\' is not allowed", i)
        elif not char.isascii() and char.isalpha():
            raise fail("names may contain only ASCII letters, digits and '_'", i)
        else:
            raise fail(f"unexpected character {char!r}", i)
    return tuple(tokens), None


def _string_end(line: str, start: int, fail: Callable[[str, int], ParseError]) -> int:
    """Index of the quote closing the string literal that opens at `start`; checks what it may contain."""
    quote = line[start]
    if line.startswith(quote * 3, start):
        raise fail("triple-quoted strings are not allowed", start)
    end = line.find(quote, start + 1)
    if end < 0:
        raise fail("unterminated string", start)
    content = line[start + 1:end]
    if not content:
        raise fail("empty strings are not allowed", start)
    if len(content) > MAX_STRING_CHARS:
        raise fail(f"strings longer than {MAX_STRING_CHARS} characters are not allowed", start)
    for offset, char in enumerate(content, start=start + 1):
        if char == "\\":
            raise fail("backslashes (escape sequences) are not allowed in strings", offset)
        if not (char.isalnum() or char in _STRING_EXTRA_CHARS):
            raise fail(f"{char!r} is not allowed in a name; names use letters, digits, spaces, '_', '-' "
                       "and '.'", offset)
    if not any(char.isalnum() for char in content):
        raise fail("a name must contain a letter or digit", start)
    return end


# ----------------------------------------------------------------------------------------------------
# Statements


class _Parser:
    """Recursive descent over lines; recursion is bounded by max_depth (if/for) plus a fixed amount."""

    def __init__(self, lines: list[tuple[int, str, str]], source: str | None, max_depth: int,
                 max_loop_items: int) -> None:
        self.raw = lines
        self.lines: list[_Line | None] = [None] * len(lines)
        self.source = source
        self.max_depth = max_depth
        self.max_loop_items = max_loop_items
        self.pos = 0
        self.named = False

    # -- helpers ---------------------------------------------------------------------------------------------

    def error(self, message: str, line: _Line, col: int | None = None) -> ParseError:
        return ParseError(message, line.number, col if col is not None else len(line.indent) + 1, self.source)

    def line_at(self, index: int) -> _Line | None:
        """The index-th non-blank line, cut into tokens on first use."""
        if index >= len(self.raw):
            return None
        line = self.lines[index]
        if line is None:
            number, indent, raw = self.raw[index]
            tokens, comment = _tokenize(raw, len(indent), number, self.source)
            line = self.lines[index] = _Line(number, indent, tokens, comment)
        return line

    def peek(self) -> _Line | None:
        return self.line_at(self.pos)

    def deeper(self, line: _Line | None, indent: str) -> bool:
        return line is not None and len(line.indent) > len(indent) and line.indent.startswith(indent)

    def check_indent(self, line: _Line, outer: tuple[str, ...]) -> None:
        """A line that ends a block must return to one of the enclosing indentations exactly."""
        if line.indent not in outer:
            raise self.error("inconsistent indentation (it matches no enclosing block; are tabs and spaces "
                             "mixed?)", line, 1)

    # -- program and blocks ----------------------------------------------------------------------------------

    def program(self) -> Program:
        first = self.peek()
        if first is None:
            return Program(())
        name = None
        leading = 0  # comment lines before a `def` header are outside the function, so they are dropped
        while (line := self.line_at(leading)) is not None and not line.tokens:
            leading += 1
        if line is not None and line.first == "def" and line.indent == first.indent:
            self.pos = leading
            first = line
            name = self.header(first)
            self.named = True
            self.pos += 1
            nxt = self.peek()
            body: tuple[Statement, ...] = ()
            if nxt is not None and nxt.indent != first.indent:
                if not self.deeper(nxt, first.indent):
                    self.check_indent(nxt, ())
                body = self.block(nxt.indent, (first.indent,), 0, frozenset())
        else:
            body = self.block(first.indent, (), 0, frozenset())
        while name is not None and (rest := self.peek()) is not None and not rest.tokens:
            self.pos += 1  # comment lines after the function body are outside it: dropped
        rest = self.peek()
        if rest is not None:
            if self.deeper(rest, first.indent):
                raise self.error("unexpected indent", rest, 1)
            self.check_indent(rest, (first.indent,))
            if rest.first == "def":
                raise self.error("only one function per plan is allowed", rest)
            if name is not None and not body:
                raise self.error("expected an indented block after 'def'", first, first.tokens[-1].col)
            raise self.error("statements after the function body are not allowed", rest)
        return Program(body, name)

    def header(self, line: _Line) -> str:
        cursor = _Cursor(self, line)
        cursor.take("NAME", "def")
        name = cursor.name("a function name")
        cursor.take("OP", "(", "function parameters are not allowed")
        cursor.take("OP", ")", "function parameters are not allowed")
        cursor.take("OP", ":", "expected ':' after the function header")
        if not cursor.done():
            raise self.error("write the function body on the following lines", line, cursor.col())
        return name

    def block(self, indent: str, outer: tuple[str, ...], depth: int,
              bound: frozenset[str]) -> tuple[Statement, ...]:
        """Statements at exactly `indent` until a line returns to one of the `outer` indentations."""
        statements: list[Statement] = []
        while (line := self.peek()) is not None:
            if line.indent != indent:
                if self.deeper(line, indent):
                    raise self.error("unexpected indent", line, 1)
                self.check_indent(line, outer)
                break
            if line.first == "else":
                raise self.error("'else' without a preceding assert or if", line)
            statement = self.statement(line, indent, outer, depth, bound)
            if statement is not None:
                statements.append(statement)
        return tuple(statements)

    def child_block(self, opener: _Line, indent: str, outer: tuple[str, ...], depth: int,
                    bound: frozenset[str]) -> tuple[Statement, ...]:
        """The deeper-indented block that must follow `opener` (a line ending in ':')."""
        nxt = self.peek()
        if not self.deeper(nxt, indent):
            raise self.error(f"expected an indented block after '{opener.first}'", opener,
                             opener.tokens[-1].col)
        assert nxt is not None
        return self.block(nxt.indent, (indent, *outer), depth, bound)

    def statement(self, line: _Line, indent: str, outer: tuple[str, ...], depth: int,
                  bound: frozenset[str]) -> Statement | None:
        self.pos += 1
        if not line.tokens:
            return Comment(line.comment or "", line.number)
        if line.first == "for":
            _check_loop_shape(self, line)
        head = line.tokens[0]
        if head.kind == "NAME":
            if head.text == "def":
                raise self.error("nested function definitions are not allowed" if self.named or depth
                                 else "a function definition is only allowed as the first line", line)
            if head.text == "pass":
                _Cursor(self, line, 1).end()
                return None
            if head.text == "assert":
                return self.assertion(line, indent, bound)
            if head.text == "if":
                return self.conditional(line, indent, outer, depth, bound)
            if head.text == "for":
                return self.loop(line, indent, outer, depth, bound)
            return _Cursor(self, line).call_statement(bound)
        if head.text == "@":
            raise self.error("decorators are not allowed", line, head.col)
        raise self.error(f"expected a statement, found {_shown(head)}", line, head.col)

    # -- compound statements ---------------------------------------------------------------------------------

    def assertion(self, line: _Line, indent: str, bound: frozenset[str]) -> Assert:
        cursor = _Cursor(self, line, 1)
        condition = cursor.condition(bound)
        cursor.end()
        recovery: list[Call] = []
        rind: str | None = None
        while (nxt := self.peek()) is not None:
            if self.deeper(nxt, indent) and (rind is None or nxt.indent == rind):
                rind = nxt.indent
            elif not (nxt.indent == indent and nxt.first == "else"):
                break
            self.pos += 1
            recovery.extend(self.recovery_line(nxt, bound))
        return Assert(condition, tuple(recovery), line.number)

    def recovery_line(self, line: _Line, bound: frozenset[str]) -> list[Call]:
        if not line.tokens:
            return []
        if line.first != "else":
            raise self.error("only 'else:' lines may follow an assert at a deeper indentation", line)
        cursor = _Cursor(self, line, 1)
        cursor.take("OP", ":", "expected ':' after 'else'")
        if not cursor.done():
            call = cursor.call_statement(bound)
            return [call] if call else []
        calls: list[Call] = []
        nxt = self.peek()
        if not self.deeper(nxt, line.indent):
            raise self.error("expected an indented block after 'else:'", line, line.tokens[-1].col)
        assert nxt is not None
        inner = nxt.indent
        while (nxt := self.peek()) is not None and self.deeper(nxt, line.indent):
            if nxt.indent != inner:
                message = "unexpected indent" if self.deeper(nxt, inner) else "inconsistent indentation"
                raise self.error(message, nxt, 1)
            self.pos += 1
            if not nxt.tokens:
                continue
            if nxt.first == "pass":
                _Cursor(self, nxt, 1).end()
                continue
            if nxt.first in ("assert", "if", "for", "else"):
                raise self.error(f"only action calls are allowed in recovery, found '{nxt.first}'", nxt)
            call = _Cursor(self, nxt).call_statement(bound)
            if call:
                calls.append(call)
        return calls

    def nested(self, line: _Line, cursor: _Cursor, indent: str, outer: tuple[str, ...], depth: int,
               bound: frozenset[str]) -> tuple[Statement, ...]:
        """The body after a ':' — an inline call on the same line or a deeper block."""
        if depth + 1 > self.max_depth:
            raise self.error(f"nesting deeper than max_depth={self.max_depth}", line)
        if not cursor.done():
            call = cursor.call_statement(bound)
            return (call,) if call else ()
        return self.child_block(line, indent, outer, depth + 1, bound)

    def conditional(self, line: _Line, indent: str, outer: tuple[str, ...], depth: int,
                    bound: frozenset[str]) -> If:
        cursor = _Cursor(self, line, 1)
        condition = cursor.condition(bound)
        cursor.take("OP", ":", "expected ':' after the if condition")
        then = self.nested(line, cursor, indent, outer, depth, bound)
        otherwise: tuple[Statement, ...] = ()
        nxt = self.peek()
        if nxt is not None and nxt.indent == indent and nxt.first == "else":
            self.pos += 1
            cursor = _Cursor(self, nxt, 1)
            cursor.take("OP", ":", "expected ':' after 'else'")
            otherwise = self.nested(nxt, cursor, indent, outer, depth, bound)
        return If(condition, then, otherwise, line.number)

    def loop(self, line: _Line, indent: str, outer: tuple[str, ...], depth: int,
             bound: frozenset[str]) -> For:
        cursor = _Cursor(self, line, 1)
        var_token = cursor.current()
        var = cursor.name("a loop variable")
        if var in _RESERVED_VAR_NAMES or var in DANGEROUS_NAMES or keyword.iskeyword(var):
            raise self.error(f"{var!r} cannot be a loop variable", line, var_token.col)
        if var in bound:
            raise self.error(f"loop variable {var!r} is already bound by an enclosing 'for'", line,
                             var_token.col)
        cursor.take("NAME", "in", _LOOP_USAGE)
        cursor.take("OP", "[", _LOOP_USAGE)
        items: list[str] = []
        while cursor.peek_text() != "]":
            token = cursor.current()
            if token.kind != "STR":
                raise self.error(_LOOP_USAGE, line, token.col)
            if len(items) >= self.max_loop_items:
                raise self.error(f"a loop list may have at most max_loop_items={self.max_loop_items} items",
                                 line, token.col)
            items.append(token.text)
            cursor.advance()
            if cursor.peek_text() != "]":
                cursor.take("OP", ",", "expected ',' or ']' in the loop list")
        cursor.take("OP", "]")
        cursor.take("OP", ":", "expected ':' after the loop list")
        body = self.nested(line, cursor, indent, outer, depth, bound | {var})
        return For(var, tuple(items), body, line.number)


# ----------------------------------------------------------------------------------------------------
# Within one line


class _Cursor:
    """Reads the tokens of one line left to right."""

    def __init__(self, parser: _Parser, line: _Line, pos: int = 0) -> None:
        self.parser = parser
        self.line = line
        self.pos = pos

    def done(self) -> bool:
        return self.pos >= len(self.line.tokens)

    def col(self) -> int:
        if self.done():
            last = self.line.tokens[-1] if self.line.tokens else None
            return last.end if last else len(self.line.indent) + 1
        return self.line.tokens[self.pos].col

    def current(self) -> _Token:
        if self.done():
            raise self.parser.error("unexpected end of line", self.line, self.col())
        return self.line.tokens[self.pos]

    def peek_text(self) -> str | None:
        return None if self.done() else self.line.tokens[self.pos].text

    def advance(self) -> None:
        self.pos += 1

    def fail(self, message: str) -> ParseError:
        return self.parser.error(message, self.line, self.col())

    def take(self, kind: str, text: str, message: str | None = None) -> _Token:
        token = None if self.done() else self.line.tokens[self.pos]
        if token is None or token.kind != kind or token.text != text:
            found = "the end of the line" if token is None else _shown(token)
            raise self.fail(f"{message or f'expected {text!r}'}, found {found}")
        self.pos += 1
        return token

    def end(self) -> None:
        if not self.done():
            raise self.fail(f"unexpected {_shown(self.current())}")

    def name(self, what: str) -> str:
        token = None if self.done() else self.line.tokens[self.pos]
        if token is None or token.kind != "NAME" or keyword.iskeyword(token.text):
            found = "the end of the line" if token is None else _shown(token)
            raise self.fail(f"expected {what}, found {found}")
        self.pos += 1
        return token.text

    def arg(self, bound: frozenset[str]) -> Arg:
        token = self.current()
        if token.kind == "STR":
            self.pos += 1
            return token.text
        if token.kind == "NAME" and not keyword.iskeyword(token.text):
            if self.pos + 1 < len(self.line.tokens) and self.line.tokens[self.pos + 1].text == "(":
                raise self.fail("nested calls are not allowed; arguments are object names in quotes")
            if token.text not in bound:
                raise self.fail(f"unbound name {token.text!r}: object names must be quoted, and bare names "
                                "are only allowed for the variable of an enclosing 'for'")
            self.pos += 1
            return Var(token.text)
        if token.text == "[":
            raise self.fail("lists are only allowed in 'for' loops")
        raise self.fail(f"expected an object name in quotes, found {_shown(token)}")

    def call_statement(self, bound: frozenset[str]) -> Call | None:
        """`action(args)` up to the end of the line (`pass` gives None)."""
        token = self.current()
        if token.text == "pass" and token.kind == "NAME":
            self.advance()
            self.end()
            return None
        if token.kind != "NAME" or keyword.iskeyword(token.text):
            raise self.fail(f"only calls of actions are allowed here, found {_shown(token)}")
        if token.text in bound:
            raise self.fail(f"calling the loop variable {token.text!r} is not allowed; call an action by "
                            "name")
        self.pos += 1
        if self.done():
            raise self.fail(f"a bare name is not a statement; did you mean {token.text}()?")
        self.take("OP", "(", f"only calls of actions are allowed (expected '(' after {token.text!r})")
        args: list[Arg] = []
        while self.peek_text() != ")":
            args.append(self.arg(bound))
            if self.peek_text() != ")":
                self.take("OP", ",", "expected ',' or ')' between arguments")
        self.take("OP", ")")
        self.end()
        return Call(token.text, tuple(args), self.line.number, token.col)

    def condition(self, bound: frozenset[str]) -> Condition:
        """`('close' to X)`, `(X is 'state')`, `(X in 'hands')`, `(X in Y)`, `(X on Y)`, maybe negated."""
        opens, negated = 0, False
        while self.peek_text() in ("(", "not"):
            if self.current().text == "(":
                opens += 1
            else:
                negated = not negated
            self.pos += 1
        left_col = self.col()
        left = self.arg(bound)
        relation = self.current()
        self.pos += 1
        if relation.kind != "NAME":
            raise self.parser.error(f"{_RELATIONS}, found {_shown(relation)}", self.line, relation.col)
        if relation.text == "is" and self.peek_text() == "not":
            self.pos += 1
            negated = not negated
        elif relation.text == "not" and self.peek_text() == "in":
            self.pos += 1
            negated = not negated
            relation = _Token("NAME", "in", relation.col)
        right_col = self.col()
        right = self.arg(bound)
        for _ in range(opens):
            self.take("OP", ")", "expected ')' closing the condition")
        if relation.text == "to":
            if not isinstance(left, str) or left.lower() != "close":
                raise self.parser.error("only 'close' to X is allowed with 'to'", self.line, left_col)
            condition = Condition("close", (right,), negated)
        elif relation.text == "is":
            if not isinstance(right, str) or not _STATE.fullmatch(right.lower()):
                raise self.parser.error("a state must be a quoted word such as 'opened' or 'switchon'",
                                        self.line, right_col)
            condition = Condition("state", (left, right.lower()), negated)
        elif relation.text == "in":
            if isinstance(right, str) and right.lower() == HANDS:
                condition = Condition("holds", (left,), negated)
            else:
                condition = Condition("inside", (left, right), negated)
        elif relation.text == "on":
            condition = Condition("on", (left, right), negated)
        else:
            raise self.parser.error(f"{_RELATIONS}, found {_shown(relation)}", self.line, relation.col)
        return condition


def _shown(token: _Token) -> str:
    if token.kind == "STR":
        return f"the string {token.text!r}"
    if token.kind == "NUM":
        return f"the number {token.text}"
    return repr(token.text)


def _check_loop_shape(parser: _Parser, line: _Line) -> None:
    """`for NAME in [` before anything else, so that `for i in range(3):` is named for what it is."""
    tokens = line.tokens
    for index, kind, text in ((1, "NAME", None), (2, "NAME", "in"), (3, "OP", "[")):
        token = tokens[index] if index < len(tokens) else None
        if token is None or token.kind != kind or (text is not None and token.text != text):
            col = token.col if token else tokens[-1].end
            raise parser.error(_LOOP_USAGE, line, col)


def _forbidden(tokens: list[_Token]) -> str | None:
    """Why the last of `tokens` has no place in any statement (None if it may), naming the construct.

    Checked as each token is read, so the leftmost offender is reported; it looks only at earlier tokens."""
    token, index = tokens[-1], len(tokens) - 1
    text, prev = token.text, tokens[index - 1].text if index else None
    if tokens[0].kind == "NAME" and tokens[0].text == "for" and 1 <= index <= 3:
        kind, expected = (("NAME", None), ("NAME", "in"), ("OP", "["))[index - 1]
        if token.kind != kind or (expected is not None and text != expected):
            return _LOOP_USAGE
    if token.kind == "NUM":
        return "numbers are not allowed"
    if token.kind == "NAME":
        if "__" in text:
            return f"names containing '__' are not allowed ({text!r})"
        if text in DANGEROUS_NAMES:
            return f"{text!r} is not allowed; only calls of actions are allowed"
        if text in _KEYWORD_MESSAGES:
            return _KEYWORD_MESSAGES[text]
        if text == "for" and index > 0:
            return "comprehensions are not allowed"
        if text == "if" and index > 0:
            return "conditional expressions are not allowed; 'if' must start its own line"
        if text == "def" and index > 0:
            return "nested function definitions are not allowed"
        return None
    if token.kind != "OP":
        return None
    if text == ".":
        return "attribute access is not allowed"
    if text == "...":
        return "'...' is not allowed"
    if text == "=" and index >= 2 and tokens[index - 1].kind == "NAME" and tokens[index - 2].text in "(,":
        return "function parameters are not allowed" if tokens[0].text == "def" else "keyword arguments are not allowed"
    if text in _ASSIGN_OPS:
        return "assignments are not allowed"
    if text in ("*", "**") and prev in ("(", ",", "["):
        return "star arguments are not allowed"
    if text in _COMPARE_OPS:
        return "comparison operators are not allowed; conditions use 'to', 'is', 'in' or 'on'"
    if text in ("{", "}"):
        return "dicts and sets are not allowed"
    if text == ";":
        return "';' is not allowed; write one statement per line"
    if text == "->":
        return "return annotations are not allowed"
    if text == "@" and index == 0:
        return "decorators are not allowed"
    if text == "[" and index > 0 and tokens[index - 1].kind in ("NAME", "STR") and prev not in ("in",):
        return "subscripts are not allowed"
    if text == "[" and prev in (")", "]"):
        return "subscripts are not allowed"
    if text in ("+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "~", "<<", ">>"):
        return "arithmetic and operators are not allowed"
    if text == "!":
        return "unexpected character '!'"
    return None

"""The command line stays thin: every function under src/situated/cli/ fits in 40 lines, and no command module
draws with matplotlib."""

from __future__ import annotations

import ast

from fakes import ROOT

CLI = ROOT / "src" / "situated" / "cli"
LONGEST = 40


def _functions(path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return [(f"{path.name}:{node.name}", node.end_lineno - node.lineno + 1)  # decorators not counted
            for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]


def test_no_command_function_is_longer_than_40_lines() -> None:
    modules = sorted(CLI.glob("*.py"))
    found = [f for p in modules for f in _functions(p)]
    assert len(found) > 20  # the commands were read
    assert [(name, lines) for name, lines in found if lines > LONGEST] == []


def test_the_check_sees_a_long_function(tmp_path) -> None:
    long = tmp_path / "long.py"
    long.write_text("def f():\n" + "    x = 1\n" * LONGEST)
    assert _functions(long) == [("long.py:f", LONGEST + 1)]


def test_no_matplotlib_in_the_command_line() -> None:
    for path in sorted(CLI.glob("*.py")):
        names = {alias.name.split(".")[0] for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, ast.Import | ast.ImportFrom)
                 for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])}
        assert "matplotlib" not in names, path.name

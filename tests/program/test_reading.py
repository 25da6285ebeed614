"""Reading model text into a plan: bad lines dropped and reported, in time linear in the text."""

from __future__ import annotations

from situated.program.reading import complete_statements


def test_complete_statements() -> None:
    assert complete_statements("grab('a')\n\tassert('close' to 'b')\n\t\telse: find('b')\n\tput") == (
        "grab('a')\n\tassert('close' to 'b')\n\t\telse: find('b')\n")
    assert complete_statements("grab('a')\n\tassert('close' to 'b')\n") == "grab('a')\n"
    assert complete_statements("gra") == ""


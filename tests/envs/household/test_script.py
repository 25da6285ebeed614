"""Parsing VirtualHome script lines in ProgPrompt's and eai-eval's formats."""

from __future__ import annotations

import pytest

from situated.envs.household import parse_script, parse_script_line
from situated.errors import ParseError


def test_progprompt_line() -> None:
    step = parse_script_line("<char0> [putin] <barsoap> (34) <bathroomcabinet> (26)")
    assert (step.action, step.names, step.ids) == ("putin", ("barsoap", "bathroomcabinet"), (34, 26))


def test_eai_line_uses_the_number_after_the_dot() -> None:
    step = parse_script_line("[PUTIN] <barsoap> (1.34) <cabinet> (1.126)")
    assert (step.action, step.names, step.ids) == ("putin", ("barsoap", "cabinet"), (34, 126))
    assert parse_script_line("[FIND] <food_food> (1.1000)").ids == (1000,)
    assert parse_script_line("[STANDUP]").ids == ()


def test_script_skips_text_and_comments_and_reports_bad_lines() -> None:
    steps = parse_script(["Write an email", "go to the office", "", "[RUN] <home_office> (1.319)",
                          "# [WALK] <x> (1.2)", "[WALK] <computer> (1.417)"])
    assert [s.action for s in steps] == ["run", "walk"]
    with pytest.raises(ParseError) as info:
        parse_script(["[WALK] <computer> (1.417)", "[GRAB] <cup> (abc)"], source="prog.txt")
    assert info.value.line == 2 and "prog.txt" in str(info.value)

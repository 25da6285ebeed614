"""Failure reasons grouped across objects and ids; where navigation agents stopped."""

from __future__ import annotations

from situated.eval.episode import Episode
from situated.eval.report.failures import (
    group,
    normalize_reason,
    rejected_drafts,
    route_followed,
    stop_kind,
)


def test_the_same_failure_on_other_objects_reads_the_same() -> None:
    one = normalize_reason("grab keyboard: the character is not close to keyboard (id 96)", "grab('keyboard')")
    two = normalize_reason("grab cup: the character is not close to cup (id 12)", "grab('cup')")
    assert one == two == "grab <obj>: the character is not close to <obj>"
    assert normalize_reason("putin salmon fridge: fridge (id 3) is closed", "putin('salmon', 'fridge')") == (
        "putin <obj1> <obj2>: <obj2> is closed")
    # a name inside another word is left alone; numbers that are not ids become N
    assert normalize_reason("find tvstand: 2 tv found", "find('tv')") == "find tvstand: N <obj> found"


def test_rejected_drafts_are_split_into_call_and_reason() -> None:
    episode = Episode("0", "watch tv", 0, {"success": 0.0}, details={"rejected": [
        "line 11: open('kitchencabinet'): open kitchencabinet: kitchencabinet (id 208) is already open",
        "line 4: open('fridge'): open fridge: fridge (id 7) is already open",
    ]})
    groups = group([rejected_drafts([episode])])
    assert len(groups) == 1 and groups[0].reason == "open <obj>: <obj> is already open"
    assert groups[0].counts == (2,) and groups[0].example.startswith("line 11:")


def test_groups_count_per_run_most_frequent_first() -> None:
    groups = group([[("a", "x"), ("b", "y"), ("b", "z")], [("a", "w")], []], limit=1)
    assert [(g.reason, g.counts, g.total) for g in groups] == [("a", (1, 1, 0), 2)]


def nav(path: list[str], actions: list[str], tc: bool = False) -> Episode:
    return Episode("1", "go", 0, {"tc": float(tc)},
                   details={"gold_path": ["A", "B", "C", "D"], "pano_path": path, "actions": actions})


def test_where_an_agent_stopped() -> None:
    assert stop_kind(nav(["A", "B", "C", "D"], ["forward"] * 3 + ["stop"], tc=True)) == "reached"
    assert stop_kind(nav(["A", "B"], ["forward", "stop"])) == "early"
    assert stop_kind(nav(["A", "B", "C", "D", "E", "F"], ["forward"] * 5 + ["stop"])) == "past"
    assert stop_kind(nav(["A", "B", "W"], ["forward", "left", "forward", "stop"])) == "off"
    assert stop_kind(nav(["A", "B", "W"], ["forward"] * 55)) == "never"
    assert route_followed(nav(["A", "B", "W"], [])) == 1 / 3
    assert route_followed(nav(["A", "B", "C", "D"], [])) == 1.0

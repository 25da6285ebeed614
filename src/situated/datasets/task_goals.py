"""Task files with goal conditions: a JSON list of `{"task": "...", "goal": ["<condition>", ...]}`.

Conditions are class-level facts as the household metrics count them ("salmon INSIDE microwave", "tv ON").
"""

from __future__ import annotations

from pathlib import Path

from .. import files
from ..errors import DataError


def goals_for(path: Path, task: str) -> list[str] | None:
    """The goal conditions the file lists for `task` (case-insensitive match), or None when it has none."""
    rows = files.read_json(path, what="tasks file")
    if not isinstance(rows, list):
        raise DataError(f"{path}: expected a list of {{'task', 'goal'}} objects")
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("task"), str):
            raise DataError(f"{path}: item {i}: expected an object with a 'task' string")
        if row["task"].strip().lower() == task.strip().lower():
            goal = row.get("goal", [])
            if not isinstance(goal, list) or not all(isinstance(g, str) for g in goal):
                raise DataError(f"{path}: item {i} field 'goal': expected a list of condition strings")
            return goal
    return None

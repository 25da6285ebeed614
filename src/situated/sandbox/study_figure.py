"""The `situated sandbox report` figure: four panels over sessions, like the paper's study figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DataError, SituatedError


def draw_report(rows: list[Any], out: Path) -> Path:
    """Four panels over sessions, like the paper's study figure: supervision, behaviour complexity, skill
    failures, time."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise SituatedError(f"the plot needs matplotlib ({err}): pip install 'situated[plot]'") from None
    panels = (("supervision", "supervision events"), ("skills_per_behaviour", "skills per behaviour call"),
              ("skill_failures", "skill failures"), ("seconds", "session time (s)"))
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.2))
    sessions = [str(r.session) for r in rows]
    for ax, (key, title) in zip(axes, panels, strict=True):
        values = [r.to_dict()[key] for r in rows]
        ax.bar(sessions, values, color="#7a3b69")
        ax.set_ylim(0, max(1.0, *values) * 1.15)
        ax.set_title(title)
        ax.set_xlabel("session")
    fig.tight_layout()
    try:
        fig.savefig(out, dpi=100)
    except OSError as err:
        raise DataError(f"{out}: cannot write the plot ({err.strerror or err})") from None
    finally:
        plt.close(fig)
    return out

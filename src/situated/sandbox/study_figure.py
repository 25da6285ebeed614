"""The study's figures: `situated sandbox report`'s panels over sessions, and `situated sandbox study`'s panels per
bag, teaching against no-teaching, like the paper's study figure."""

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


STUDY_PANELS = (("person_supervision_minutes", "supervision (min, person model)"),
                ("skills_per_behaviour", "skills per behaviour call"),
                ("skills_per_command", "seed skills per command"),
                ("skill_failures", "skill failures"))
"""The study figure's panels, per bag: the paper's supervision, behaviour complexity and failures, and the seed
skills each command ran (which the no-teaching baseline, with no behaviours, also has)."""
_COLOURS = {"teaching": "#7a3b69", "no-teaching": "#9a9a9a"}


def study_png(trials: list[dict[str, Any]]) -> bytes:
    """The per-bag panels (teaching vs no-teaching, means over participants) as PNG bytes."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise SituatedError(f"the plot needs matplotlib ({err}): pip install 'situated[plot]'") from None
    import io

    fig, axes = plt.subplots(1, len(STUDY_PANELS), figsize=(4 * len(STUDY_PANELS), 3.3))
    conditions = sorted({str(t["condition"]) for t in trials}, key=lambda c: (c != "no-teaching", c))
    bags = sorted({int(t["trial"]) for t in trials})
    width = 0.8 / max(1, len(conditions))
    for ax, (key, title) in zip(axes, STUDY_PANELS, strict=True):
        top = 1.0
        for i, condition in enumerate(conditions):
            by_bag = {int(t["trial"]): float(t[key]) for t in trials if t["condition"] == condition}
            xs = [b + (i - (len(conditions) - 1) / 2) * width for b in bags if b in by_bag]
            ys = [by_bag[b] for b in bags if b in by_bag]
            ax.bar(xs, ys, width, label=condition, color=_COLOURS.get(condition, "#3b6a7a"))
            top = max(top, *ys) if ys else top
        ax.set_ylim(0, top * 1.2)
        ax.set_xticks(bags)
        ax.set_xlabel("bag")
        ax.set_title(title, fontsize=10)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=100)
    finally:
        plt.close(fig)
    return buffer.getvalue()


def draw_study(trials: list[dict[str, Any]], out: Path) -> Path:
    """`study_png` written to `out`."""
    data = study_png(trials)
    try:
        out.write_bytes(data)
    except OSError as err:
        raise DataError(f"{out}: cannot write the plot ({err.strerror or err})") from None
    return out

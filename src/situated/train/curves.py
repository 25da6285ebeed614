"""Training curves beside the adapter: the loss per route and its mean per optimizer step (batch), and the held-out
routes' next-action accuracy and TC per epoch (epoch 0: the base model)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def draw_curves(losses: Sequence[float], evaluations: Sequence[tuple[int, float, float]], *, batch: int,
                method: str, held: int, out: Path) -> str | None:
    """Write the curves to `out` (PNG): `losses` one per route trained on, `evaluations` (epoch, accuracy %,
    TC %); None (nothing written) when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    window = max(1, batch)
    starts = range(0, len(losses), window)
    means = [sum(losses[i:i + window]) / len(losses[i:i + window]) for i in starts]
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    left.plot(range(1, len(losses) + 1), losses, ".", alpha=0.35, label="route")
    left.plot([min(i + window, len(losses)) for i in starts], means, "o-", label=f"batch of {window} (one step)")
    left.set_xlabel("routes trained on")
    left.set_ylabel("loss on action tokens (nats)")
    left.set_title(f"VELMA-{method.upper()} training loss")
    left.legend()
    epochs = [e[0] for e in evaluations]
    right.plot(epochs, [e[1] for e in evaluations], "o-", label="next-action accuracy %")
    right.plot(epochs, [e[2] for e in evaluations], "s-", label="TC %")
    right.set_xlabel("epoch (0: base model)")
    right.set_ylim(-2, 102)
    right.set_title(f"{held} held-out training-area routes")
    right.legend()
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=110)
    plt.close(figure)
    return out.name

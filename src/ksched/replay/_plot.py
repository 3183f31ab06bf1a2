"""``ksched replay --plot FILE.png``: utilization and fragmentation over trace time, for
one replay or two compared (needs matplotlib, the ``plot`` extra)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..cli._plot import require_matplotlib

__all__ = ["write_replay_plot"]

_PANELS = (("cpu", 1), ("memory", 2), ("fragmentation cpu", 4), ("fragmentation memory", 5))


def write_replay_plot(reports: Sequence[Mapping[str, Any]], path: str | Path) -> None:
    """One panel per measure, one step line per report (named by its configuration).

    Raises:
        PlotUnavailableError: matplotlib is missing.
        OSError: the file cannot be written.
    """
    require_matplotlib()
    matplotlib: Any = importlib.import_module("matplotlib")
    matplotlib.use("Agg")
    plt: Any = importlib.import_module("matplotlib.pyplot")
    fig, axes = plt.subplots(len(_PANELS), 1, figsize=(10, 10), sharex=True)
    for ax, (name, column) in zip(axes, _PANELS, strict=True):
        for report in reports:
            samples = report["utilization"]["samples"]
            end = float(report["summary"]["duration"])
            xs = [s[0] for s in samples] + [max(end, samples[-1][0] if samples else 0.0)]
            ys = [s[column] for s in samples] + [samples[-1][column] if samples else 0.0]
            ax.step(xs, ys, where="post", label=str(report["config"]))
        ax.set_ylabel(f"{name} (%)")
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3)
    axes[0].legend(loc="upper left", fontsize=8)
    axes[-1].set_xlabel("trace time (s)")
    first = reports[0]
    fig.suptitle(f"ksched replay: {first['trace']['path']}")
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=110)
    finally:
        plt.close(fig)

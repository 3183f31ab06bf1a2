"""The FGD study's curves in the paper's form (its Fig. 7 and 9: unallocated GPUs,
fragmentation amount and ratio against the arrived workload), from the tables' rows.

# experiments/plot/plot_openb_alloc.py, plot_openb_frag_amount.py, plot_openb_frag_ratio.py

One line per policy: the median over the seeds, with the band between the 25th and 75th
percentiles (seaborn's ``estimator='median', errorbar=('pi', 50)`` in the artifact's
scripts); the unallocated-GPU plot adds the ideal line (nothing left while the arrived
workload is under 100 %). Needs matplotlib (the ``plot`` extra).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import KschedError
from ._table import POINTS, TableRow

__all__ = ["KINDS", "PlotUnavailableError", "plot_curves"]

KINDS = {
    "alloc": ("Unallocated GPU (% of capacity)", (75, 130), (0, 25)),
    "frag": ("GPU fragmentation (% of capacity)", (0, 130), (0, None)),
    "frag_ratio": ("GPU fragmentation (% of idle GPU)", (0, 130), (0, 100)),
}
"""What each table plots: the y label and the paper's x and y ranges."""
_SHORT = {
    "01-Random": "Random",
    "02-DotProd": "DotProd",
    "03-GpuClustering": "Clustering",
    "04-GpuPacking": "Packing",
    "05-BestFit": "BestFit",
    "06-FGD": "FGD",
}


class PlotUnavailableError(KschedError, RuntimeError):
    """A plot asked for without matplotlib installed."""


def _pyplot() -> Any:
    try:
        found = importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise PlotUnavailableError(
            "plotting needs matplotlib, which is not installed: pip install 'ksched[plot]'"
        )
    matplotlib: Any = importlib.import_module("matplotlib")
    matplotlib.use("Agg")
    return importlib.import_module("matplotlib.pyplot")


def _band(rows: Sequence[TableRow], unallocated: bool) -> tuple[list[int], list[list[float]]]:
    xs, quartiles = [], []
    for point in POINTS:
        cells = [r.values[point] for r in rows if point in r.values]
        if not cells:
            continue
        values = np.array(cells)
        if unallocated:
            values = 100.0 - values
        xs.append(point)
        quartiles.append([float(q) for q in np.percentile(values, [25, 50, 75])])
    return xs, quartiles


def plot_curves(
    rows: Sequence[TableRow], kind: str, path: str | Path, *, title: str | None = None
) -> None:
    """Draw one table's rows (one workload; any policies and seeds) to ``path`` (PNG, PDF...).

    Args:
        rows: rows of an ``analysis_allo_discrete`` (``kind="alloc"``, drawn as unallocated
            GPUs), ``analysis_frag_discrete`` (``"frag"``) or
            ``analysis_frag_ratio_discrete`` (``"frag_ratio"``) table.
        kind: which table the rows come from.
        path: the file to write.
        title: a title (the workload's name when None).

    Raises:
        PlotUnavailableError: matplotlib is missing.
        ValueError: an unknown kind, or rows of several workloads.
    """
    if kind not in KINDS:
        raise ValueError(f"kind: {kind!r} is none of {', '.join(KINDS)}")
    workloads = sorted({r.workload for r in rows})
    if len(workloads) > 1:
        raise ValueError(f"rows of {len(workloads)} workloads: plot one at a time")
    plt = _pyplot()
    label, xlim, ylim = KINDS[kind]
    fig, ax = plt.subplots(figsize=(10, 3.5))
    try:
        for policy in sorted({r.policy for r in rows}):
            xs, q = _band([r for r in rows if r.policy == policy], kind == "alloc")
            if not xs:
                continue
            low, mid, high = (list(col) for col in zip(*q, strict=True))
            (line,) = ax.plot(xs, mid, label=_SHORT.get(policy, policy), linewidth=2)
            ax.fill_between(xs, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
        if kind == "alloc":
            ax.plot([0, 100], [100, 0], linestyle=":", color="grey", label="Ideal")
        ax.set_xlim(*xlim)
        ax.set_ylim(*ylim)
        ax.set_xlabel("Arrived workload (% of cluster GPU capacity)")
        ax.set_ylabel(label)
        ax.set_title(title if title is not None else (workloads[0] if workloads else ""))
        ax.grid(linestyle="-.", alpha=0.8)
        ax.legend(loc="upper left", bbox_to_anchor=(1, 1.02), frameon=False)
        fig.savefig(path, bbox_inches="tight", dpi=110)
    finally:
        plt.close(fig)

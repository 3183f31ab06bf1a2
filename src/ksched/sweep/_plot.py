"""The spec's figures, drawn from the table (matplotlib, the ``plot`` extra).

Each figure is one metric against an axis (or ``at``, a curve's x) with a line per value
of ``by``; where several cells share a point (seeds, other axes), the line is their mean
and a band their range.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._errors import KschedError
from ._spec import PlotSpec

__all__ = ["plot_series", "write_plots"]

Series = dict[str, dict[str, list[float]]]
"""line label -> x (as text) -> the values at it."""


def plot_series(rows: Iterable[Mapping[str, str]], plot: PlotSpec) -> Series:
    """The values of ``plot.metric`` by line and x (failed cells have none)."""
    series: Series = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if row["metric"] != plot.metric or not row["value"]:
            continue
        if any(row.get(axis) != label for axis, label in plot.where.items()):
            continue
        line = row[plot.by] if plot.by else plot.metric
        series[line][row[plot.x]].append(float(row["value"]))
    return series


def _numeric(xs: Sequence[str]) -> list[float] | None:
    try:
        return [float(x) for x in xs]
    except ValueError:
        return None


def write_plots(
    rows: Sequence[Mapping[str, str]], plots: Sequence[PlotSpec], warn: Callable[[str], None]
) -> list[Path]:
    """Draw each figure; returns the files written (one without values is ``warn``-ed)."""
    if not plots:
        return []
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise KschedError("plots need matplotlib: pip install 'ksched[plot]'") from None
    written = []
    for plot in plots:
        series = plot_series(rows, plot)
        if not series:
            warn(f"plot {plot.file}: not drawn: the table has no value of {plot.metric!r}")
            continue
        figure, ax = plt.subplots(figsize=(7, 4.2))
        xs_all = sorted({x for values in series.values() for x in values}, key=_order_key)
        positions = _numeric(xs_all)
        for line, by_x in sorted(series.items()):
            _draw(ax, line, by_x, xs_all, positions)
        if positions is None:
            ax.set_xticks(range(len(xs_all)), xs_all, rotation=20, ha="right")
        ax.set_xlabel("arrived workload (% of GPU capacity)" if plot.x == "at" else plot.x)
        ax.set_ylabel(plot.metric)
        ax.set_title(plot.title or f"{plot.metric} by {plot.x}")
        ax.grid(alpha=0.3)
        if plot.by:
            ax.legend(title=plot.by, fontsize="small")
        figure.tight_layout()
        plot.file.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(plot.file, dpi=110)
        plt.close(figure)
        written.append(plot.file)
    return written


def _order_key(x: str) -> tuple[int, float, str]:
    try:
        return (0, float(x), "")
    except ValueError:
        return (1, 0.0, x)


def _draw(
    ax: Any,
    line: str,
    by_x: Mapping[str, list[float]],
    xs_all: Sequence[str],
    positions: Sequence[float] | None,
) -> None:
    xs = [x for x in xs_all if x in by_x]
    where = [positions[xs_all.index(x)] if positions else float(xs_all.index(x)) for x in xs]
    means = [sum(by_x[x]) / len(by_x[x]) for x in xs]
    marker = "o" if len(xs) < 30 else None
    ax.plot(where, means, marker=marker, markersize=3, label=line)
    if any(len(by_x[x]) > 1 for x in xs):
        ax.fill_between(where, [min(by_x[x]) for x in xs], [max(by_x[x]) for x in xs], alpha=0.15)

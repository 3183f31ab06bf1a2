"""``ksched simulate --plot FILE.png``: node utilization and pods bound over simulated time.

Needs matplotlib, the optional extra ``ksched[plot]``. It draws the ``history`` part of
the report that ``run_scenario(history=True)`` returns.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._errors import KschedError

__all__ = ["PlotUnavailableError", "require_matplotlib", "write_plot"]

MAX_NODE_LINES = 12
"""Nodes drawn one line each; beyond that, the busiest ones and the mean of all."""


class PlotUnavailableError(KschedError, RuntimeError):
    """``--plot`` without matplotlib installed."""


def require_matplotlib() -> None:
    """Raise PlotUnavailableError, saying how to install it, when matplotlib is missing."""
    try:
        found = importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise PlotUnavailableError(
            "--plot needs matplotlib, which is not installed: "
            "pip install 'ksched[plot]' (or pip install matplotlib)"
        )


def _series(
    history: Mapping[str, Any],
) -> tuple[list[float], dict[str, list[tuple[float, float, float]]], bool]:
    """The x of every sample, per node (x, cpu %, memory %) steps, and whether x is time.

    When everything happened at one simulated instant, x is the order of the changes
    instead, so that the plot still shows how the cluster filled up.
    """
    usage: Sequence[Sequence[Any]] = history["usage"]
    allocatable: Mapping[str, Mapping[str, float]] = history["allocatable"]
    times = [float(s[0]) for s in usage]
    by_time = bool(times) and max(times) > min(times)
    per_node: dict[str, list[tuple[float, float, float]]] = {
        n: [(0.0, 0.0, 0.0)] for n in allocatable
    }
    for i, (t, node, cpu, memory, _pods) in enumerate(usage):
        alloc = allocatable.get(node)
        if alloc is None:
            continue
        x = float(t) if by_time else float(i + 1)
        cpu_pct = 100.0 * cpu / alloc["cpu"] if alloc["cpu"] else 0.0
        mem_pct = 100.0 * memory / alloc["memory"] if alloc["memory"] else 0.0
        per_node[node].append((x, cpu_pct, mem_pct))
    xs = times if by_time else [float(i + 1) for i in range(len(usage))]
    return xs, per_node, by_time


def write_plot(report: Mapping[str, Any], path: str | Path, *, title: str | None = None) -> None:
    """Write a PNG: cpu and memory utilization per node, pods bound, over simulated time.

    Raises:
        PlotUnavailableError: matplotlib is missing.
        OSError: the file cannot be written.
    """
    require_matplotlib()
    # Imported by name: matplotlib is optional, and has no say in type checking here.
    matplotlib: Any = importlib.import_module("matplotlib")
    matplotlib.use("Agg")
    plt: Any = importlib.import_module("matplotlib.pyplot")

    history: Mapping[str, Any] = report["history"]
    xs, per_node, by_time = _series(history)
    if by_time:
        end = max(xs[-1] if xs else 0.0, float(report.get("time", 0.0))) or 1.0
    else:  # one step past the last change, so that it shows as a step, not a spike
        end = float(len(xs) + 1)
    fig, (ax_cpu, ax_mem, ax_pods) = plt.subplots(3, 1, figsize=(10, 9), sharex=by_time)
    names = list(per_node)
    drawn = names
    if len(names) > MAX_NODE_LINES:
        drawn = sorted(names, key=lambda n: max(p[1] for p in per_node[n]), reverse=True)
        drawn = drawn[:MAX_NODE_LINES]
    for name in drawn:
        points = [*per_node[name], (end, per_node[name][-1][1], per_node[name][-1][2])]
        x = [p[0] for p in points]
        ax_cpu.step(x, [p[1] for p in points], where="post", label=name)
        ax_mem.step(x, [p[2] for p in points], where="post", label=name)
    if len(drawn) < len(names):
        ax_cpu.set_title(f"busiest {len(drawn)} of {len(names)} nodes", fontsize=9)
    if not by_time:
        ax_mem.set_xlabel("order of the changes (everything happened at t=0s)")
    ax_cpu.set_ylabel("cpu requested (%)")
    ax_mem.set_ylabel("memory requested (%)")
    for ax in (ax_cpu, ax_mem):
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3)
    if drawn:
        ax_cpu.legend(loc="upper left", fontsize=7, ncol=max(1, len(drawn) // 6))
    bound: Sequence[Sequence[float]] = history["bound"]
    if by_time:
        bx = [0.0, *(float(b[0]) for b in bound), end]
        by = [0, *(int(b[1]) for b in bound)]
        by.append(by[-1])
        ax_pods.step(bx, by, where="post", color="tab:green")
        ax_pods.set_xlabel("simulated time (s)")
    else:
        counts = [0, *(int(b[1]) for b in bound)]
        ax_pods.step([*range(len(bound) + 1), len(bound) + 1], [*counts, counts[-1]], where="post")
        ax_pods.set_xlabel("order of placement (everything happened at t=0s)")
    ax_pods.set_ylabel("pods bound by the scheduler")
    ax_pods.grid(alpha=0.3)
    fig.suptitle(title or f"ksched simulate: {report.get('scenario', '')}")
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=110)
    finally:
        plt.close(fig)

"""The table view at cluster scale: pods not bound grouped by why, node utilization as a
histogram. Like ``_render``, it reads only the JSON report (scenario-format.md).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from rich import box
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from ._format import PHASE_STYLES, format_bytes, format_cpu

__all__ = [
    "NODE_BARS_UP_TO",
    "PENDING_GROUPS_FROM",
    "fit_reasons",
    "pending_reasons",
    "utilization_histogram",
]

NODE_BARS_UP_TO = 40
"""Up to this many nodes, a bar per node; past it, a histogram of nodes by utilization."""
PENDING_GROUPS_FROM = 10
"""Pods not bound are grouped by reason past this many, or when the placements are cut."""

# The FitError text: pkg/scheduler/framework/types.go FitError.Error
_FIT_ERROR = re.compile(r"0/(\d+) nodes are available: ")
_REASON = re.compile(r"(\d+) (.+?)(, (?=\d+ )|\.(?= |$))", re.S)
_NOT_TRIED = {
    "Pending": "in the scheduling queue, no failure yet",
    "Waiting": "holding a node at Permit",
    "Gated": "blocked at PreEnqueue (scheduling gates)",
    "Unschedulable": "failed, no message",
}


def fit_reasons(message: str) -> tuple[int, tuple[tuple[str, int], ...]] | None:
    """The node count and the per-reason node counts of a FitError message, in its order.

    ``"0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s).
    preemption: ..."`` gives ``(3, (("Insufficient cpu", 1), ("node(s) had ...", 2)))``;
    a message in another form gives None.
    """
    head = _FIT_ERROR.match(message)
    if head is None:
        return None
    reasons: list[tuple[str, int]] = []
    pos = head.end()
    while (item := _REASON.match(message, pos)) is not None:
        reasons.append((item[2], int(item[1])))
        pos = item.end()
        if item[3] != ", ":
            break
    if not reasons:
        return None
    return int(head[1]), tuple(reasons)


def _why(pod: Mapping[str, Any]) -> str:
    message = pod.get("message") or ""
    parsed = fit_reasons(message) if message else None
    if parsed is not None:
        return ", ".join(
            f"{reason} on {count} node{'s' * (count != 1)}" for reason, count in parsed[1]
        )
    if message:
        # A PreFilter rejection or an error: its first sentence says it.
        return message.split(". preemption: ")[0]
    phase = str(pod["phase"])
    return _NOT_TRIED.get(phase, phase)


def pending_reasons(pods: Mapping[str, Mapping[str, Any]]) -> Table | None:
    """``4000 pods: Insufficient cpu on 1000 nodes``: pods not bound, one row per reason
    histogram of their last failure (or per phase when they have none), most pods first."""
    groups: Counter[tuple[str, str]] = Counter()
    for pod in pods.values():
        if pod["phase"] != "Bound":
            groups[(pod["phase"], _why(pod))] += 1
    if not groups:
        return None
    table = Table(title="pods not bound, by reason", box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("pods", justify="right", no_wrap=True)
    table.add_column("phase", no_wrap=True)
    table.add_column("why (nodes per Filter reason)", overflow="fold")
    for (phase, why), count in sorted(groups.items(), key=lambda kv: (-kv[1], kv[0])):
        table.add_row(str(count), Text(phase, style=PHASE_STYLES.get(phase, "")), why)
    return table


_BUCKETS = ["0%", *(f"{10 * i + 1}-{10 * (i + 1)}%" for i in range(9)), "91-99%", "100%"]


def _bucket(used: float, total: float) -> int:
    if used <= 0:
        return 0
    if total <= 0 or used >= total:
        return len(_BUCKETS) - 1
    return min(math.ceil(used / total * 10), 10)


def _percent(used: float, total: float) -> str:
    return f"{100 * used / total:.0f}%" if total > 0 else "-"


def utilization_histogram(nodes: Mapping[str, Mapping[str, Any]], console_width: int) -> Table:
    """How many nodes have how much of their cpu, memory and pod slots requested, in 10 %
    steps (an empty and a full node have rows of their own), and the cluster's totals."""
    counts = {resource: [0] * len(_BUCKETS) for resource in ("cpu", "memory", "pods")}
    requested = dict.fromkeys(counts, 0.0)
    allocatable = dict.fromkeys(counts, 0.0)
    for entry in nodes.values():
        req, alloc = entry["requested"], entry["allocatable"]
        for resource, per_bucket in counts.items():
            per_bucket[_bucket(req[resource], alloc[resource])] += 1
            requested[resource] += req[resource]
            allocatable[resource] += alloc[resource]
    used = [i for i in range(len(_BUCKETS)) if any(c[i] for c in counts.values())]
    # Seven columns: the label (9), then a bar and a count per resource; each column has
    # 1 + 1 of padding and the box 8 separators.
    count_width = max(len(str(len(nodes))), len("nodes"))
    bar_width = max(6, min(30, (console_width - 31) // 3 - count_width))
    table = Table(
        title=f"node utilization: {len(nodes)} nodes by share requested (requested / allocatable)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
        padding=(0, 1),
    )
    table.add_column("requested", justify="right", no_wrap=True)
    for resource in counts:
        table.add_column(resource, width=bar_width, no_wrap=True)
        table.add_column("nodes", justify="right", no_wrap=True)
    for i in range(used[0], used[-1] + 1) if used else ():
        cells: list[Any] = [_BUCKETS[i]]
        for per_bucket in counts.values():
            cells.append(
                ProgressBar(total=max(len(nodes), 1), completed=per_bucket[i], width=bar_width)
            )
            cells.append(str(per_bucket[i]))
        table.add_row(*cells)
    table.caption = "cluster: " + ", ".join(
        [
            f"cpu {format_cpu(requested['cpu'])}/{format_cpu(allocatable['cpu'])} "
            f"({_percent(requested['cpu'], allocatable['cpu'])})",
            f"memory {format_bytes(requested['memory'])}/{format_bytes(allocatable['memory'])} "
            f"({_percent(requested['memory'], allocatable['memory'])})",
            f"pods {requested['pods']:.0f}/{allocatable['pods']:.0f} "
            f"({_percent(requested['pods'], allocatable['pods'])})",
        ]
    )
    table.caption_justify = "left"
    return table

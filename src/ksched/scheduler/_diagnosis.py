"""Why a pod did not fit (FitError), what an attempt saw (AttemptReport), and events.

# pkg/scheduler/framework/types.go FitError.Error
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import attrs

from ..framework import NodeToStatus, Status

__all__ = ["AttemptReport", "FitError", "SchedulingEvent"]

NO_NODE_AVAILABLE = "0/{} nodes are available"


@attrs.define(eq=False)
class FitError:
    """No node fits: the status of every node, and PreFilter/PostFilter messages."""

    num_all_nodes: int
    statuses: NodeToStatus
    unschedulable_plugins: set[str] = attrs.field(factory=set)
    pre_filter_message: str = ""
    post_filter_message: str = ""

    def message(self) -> str:
        """Upstream's text: ``0/3 nodes are available: 1 Insufficient cpu, ...``."""
        text = NO_NODE_AVAILABLE.format(self.num_all_nodes) + ":"
        if self.pre_filter_message:
            text += f" {self.pre_filter_message}."
        else:
            counts: Counter[str] = Counter()
            # Nodes share status objects (batch forms make one per distinct verdict):
            # count objects first, then their reasons.
            for status, times in self.statuses.counts():
                for reason in status.reasons:
                    counts[reason] += times
            absent = self.num_all_nodes - len(self.statuses)
            if absent > 0:
                for reason in self.statuses.absent.reasons:
                    counts[reason] += absent
            parts = sorted(f"{count} {reason}" for reason, count in counts.items())
            if parts:
                text += f" {', '.join(parts)}."
        if self.post_filter_message:
            text += f" {self.post_filter_message}"
        return text


@attrs.define(eq=False)
class AttemptReport:
    """What one scheduling attempt evaluated (kept for a pod's first attempt)."""

    pre_filter: Status | None = None
    filter: dict[str, Status] = attrs.field(factory=dict)
    evaluated: list[str] = attrs.field(factory=list)
    scores: dict[str, dict[str, int]] = attrs.field(factory=dict)
    totals: dict[str, int] = attrs.field(factory=dict)
    skipped_score_plugins: set[str] = attrs.field(factory=set)
    selected: str | None = None
    all_nodes: list[str] = attrs.field(factory=list)
    hinted: bool = False
    """The node was the opportunistic-batching hint: tried alone, no Score pass."""
    decisions: dict[str, Any] = attrs.field(factory=dict)
    """Plugin -> what it chose for the pod on the selected node (VolumeBinding: the PVs)."""
    group: dict[str, Any] | None = None
    """For a member of a gang: the pod-group cycle's decision (members, nodes, outcome)."""


def plugin_decisions(plugins: Iterable[Any], state: Any, node_name: str) -> dict[str, Any]:
    """What the plugins with an ``explain_decision(state, node_name)`` method chose for the
    pod on ``node_name`` after Reserve (asked only when an attempt is being explained)."""
    out: dict[str, Any] = {}
    for plugin in plugins:
        explain = getattr(plugin, "explain_decision", None)
        if explain is not None and (decision := explain(state, node_name)):
            out[plugin.name] = decision
    return out


@attrs.frozen
class SchedulingEvent:
    """Something that happened to a pod: Queued, Unschedulable, WaitingOnPermit, Bound..."""

    kind: str
    pod: str
    time: float
    details: dict[str, Any] = attrs.field(factory=dict)

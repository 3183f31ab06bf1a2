"""The report of a replay (its keys are described in docs/trace-format.md)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..trace import TraceHeader
from ._engine import PodFate, ReplayRun
from ._metrics import agreement, percentiles

__all__ = ["build_report"]

SHOWN_PENDING = 1000
"""Pending pods listed one by one (all are counted by reason)."""


def _phase(run: ReplayRun, fate: PodFate) -> str:
    if fate.evicted is not None:
        return "Evicted"
    if fate.node is not None:
        return "Bound"
    if fate.deleted is not None:
        return "Deleted"
    if not fate.ours and not fate.preset:
        return "OtherScheduler"
    record = run.scheduler.records.get(fate.uid)
    if record is not None and record.message:
        return "Unschedulable"
    return "Pending"


def _pod_entry(run: ReplayRun, fate: PodFate) -> dict[str, Any]:
    phase = _phase(run, fate)
    entry: dict[str, Any] = {
        "pod": fate.key,
        "uid": fate.uid,
        "scheduler": fate.scheduler,
        "ours": fate.ours,
        "created": round(fate.created, 3),
        "recordedNode": fate.recorded_node,
        "node": fate.node,
        "phase": phase,
    }
    if fate.recorded_bound is not None:
        entry["recordedBound"] = round(fate.recorded_bound, 3)
    if fate.controller is not None:
        entry["recordedBy"] = fate.controller
    if fate.bound is not None:
        entry["bound"] = round(fate.bound, 3)
    if fate.deleted is not None:
        entry["deleted"] = round(fate.deleted, 3)
    if fate.evicted is not None:
        entry["evicted"] = round(fate.evicted, 3)
    if fate.ours and fate.recorded_node is not None and fate.node is not None:
        if run.follow and fate.decision is not None:
            entry["agreed"] = bool(fate.decision["agreed"])
        elif not run.follow:
            entry["agreed"] = fate.node == fate.recorded_node
    if phase in ("Unschedulable", "Pending", "Deleted") and fate.ours:
        record = run.scheduler.records.get(fate.uid)
        if record is not None and record.message:
            entry["message"] = record.message
        elif run.follow and fate.explanation is not None:
            entry["message"] = _judged_pending(fate.explanation)
    if fate.decision is not None:
        entry["decision"] = fate.decision
    if fate.explanation is not None:
        entry["explanation"] = fate.explanation
    return entry


def _judged_pending(explanation: dict[str, Any]) -> str:
    """The reason of a pod the recording left pending, as ksched judges it now."""
    top = explanation.get("top")
    if top:
        return f"left pending in the recording; ksched would place it on {top[0][0]}"
    rejected = explanation.get("rejected") or {}
    parts = ", ".join(f"{n} {reason}" for reason, n in rejected.items())
    return f"left pending in the recording; no node fits: {parts}".rstrip(": ")


def _agreement(run: ReplayRun) -> dict[str, Any]:
    if run.follow:
        judged = [f.decision for f in run.fates if f.decision is not None]
        return agreement(len(judged), sum(1 for d in judged if d["agreed"]))
    both = [f for f in run.fates if f.ours and f.recorded_node and f.node]
    return agreement(len(both), sum(1 for f in both if f.node == f.recorded_node))


def _nodes(run: ReplayRun) -> dict[str, Any]:
    out: dict[str, Any] = {}
    none = (0, 0, 0)
    for name, alloc in run.usage.allocatable.items():
        req = run.usage.requested.get(name, none)
        out[name] = {
            "requested": {"cpu": req[0] / 1000, "memory": req[1], "pods": req[2]},
            "allocatable": {"cpu": alloc[0] / 1000, "memory": alloc[1], "pods": alloc[2]},
        }
    return out


def build_report(run: ReplayRun, header: TraceHeader, *, trace: str, config: str) -> dict[str, Any]:
    """The JSON report of a finished run."""
    pods = [_pod_entry(run, fate) for fate in run.fates]
    ours = [p for p in pods if p["ours"]]
    pending = [p for p in ours if p["phase"] in ("Pending", "Unschedulable")]
    reasons = Counter(p.get("message") or "not attempted yet" for p in pending)
    replayed = [f.bound - f.created for f in run.fates if f.ours and f.bound is not None]
    recorded = [
        f.recorded_bound - f.created
        for f in run.fates
        if f.ours and f.recorded_bound is not None and not f.preset
    ]
    summary = {
        "pods": len(pods),
        "ours": len(ours),
        "bound": sum(1 for p in ours if p["phase"] == "Bound"),
        "recordedBound": sum(1 for p in ours if p["recordedNode"]),
        "pending": len(pending),
        "preemptions": len(run.preemptions),
        "duration": round(run.end or 0.0, 3),
    }
    trace_info: dict[str, Any] = {"path": trace, "source": header.source}
    for field in ("name", "start", "cluster"):
        value = getattr(header, field)
        if value is not None:
            trace_info[field] = value
    if header.anonymized:
        trace_info["anonymized"] = True
    return {
        "trace": trace_info,
        "config": config,
        "mode": "follow-recorded" if run.follow else "replay",
        "summary": summary,
        "agreement": _agreement(run),
        "timeToSchedule": {"replayed": percentiles(replayed), "recorded": percentiles(recorded)},
        "pending": {
            "byReason": dict(reasons.most_common()),
            "pods": [p["pod"] for p in pending[:SHOWN_PENDING]],
        },
        "preemptions": run.preemptions,
        "utilization": run.usage.summary(),
        "nodes": _nodes(run),
        "pods": pods,
    }

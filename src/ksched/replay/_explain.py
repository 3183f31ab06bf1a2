"""A pod's first scheduling attempt in a replay, summarized for the report.

The engine's AttemptReport holds a verdict per node and a score per plugin per node; a
replay keeps, per pod, only what the report shows: the rejected nodes counted by reason,
the best few nodes with their totals (each plugin's score for the first three), and the
totals of up to ``KEPT_TOTALS`` feasible nodes so that the recorded node, known only
later in the trace, can be found among them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..scheduler import AttemptReport, Evaluation

__all__ = ["KEPT_TOTALS", "summarize_attempt", "summarize_evaluation"]

TOP = 5
DETAILED = 3
KEPT_TOTALS = 256


def summarize_attempt(report: AttemptReport, weights: Mapping[str, int]) -> dict[str, Any]:
    """The ``explanation`` entry of a pod (see docs/trace-format.md, the report)."""
    out: dict[str, Any] = {"selected": report.selected, "nodes": len(report.all_nodes)}
    if report.pre_filter is not None and not report.pre_filter.is_success:
        plugin = report.pre_filter.plugin
        out["preFilter"] = (
            f"{plugin}: {report.pre_filter.message}" if plugin else (report.pre_filter.message)
        )
    rejected: Counter[str] = Counter()
    for status in report.filter.values():
        if status.is_success:
            continue
        prefix = f"{status.plugin}: " if status.plugin else ""
        for reason in status.reasons or (status.code.label,):
            rejected[prefix + reason] += 1
    if rejected:
        out["rejected"] = dict(rejected.most_common())
    totals = report.totals
    out["feasible"] = (
        len(totals) if totals else sum(1 for s in report.filter.values() if s.is_success)
    )
    if totals:
        ranked = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))
        out["top"] = [[node, total] for node, total in ranked[:TOP]]
        out["scores"] = {
            node: {plugin: per_node[node] for plugin, per_node in report.scores.items()}
            for node, _ in ranked[:DETAILED]
        }
        out["weights"] = {plugin: weights.get(plugin, 1) for plugin in report.scores}
        if len(ranked) <= KEPT_TOTALS:
            out["totals"] = dict(ranked)
    if report.hinted:
        out["hinted"] = True
    return out


def summarize_evaluation(evaluation: Evaluation) -> dict[str, Any]:
    """What ksched makes of a pod the recording left pending (``--follow-recorded``)."""
    out: dict[str, Any] = {"selected": None, "feasible": len(evaluation.feasible)}
    if evaluation.error is not None:
        out["error"] = evaluation.error.message
        return out
    rejected: Counter[str] = Counter()
    for _, status in evaluation.statuses.items():
        prefix = f"{status.plugin}: " if status.plugin else ""
        for reason in status.reasons or (status.code.label,):
            rejected[prefix + reason] += 1
    if rejected:
        out["rejected"] = dict(rejected.most_common())
    if evaluation.totals:
        ranked = sorted(evaluation.totals.items(), key=lambda kv: (-kv[1], kv[0]))
        out["top"] = [[node, total] for node, total in ranked[:TOP]]
    return out

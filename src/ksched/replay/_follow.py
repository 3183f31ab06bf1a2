"""``--follow-recorded``: each recorded decision judged against ksched's own choice set.

ksched's choice set is the feasible nodes with the best total (upstream's selectHost
draws among exactly these, so a tie is agreement only when the recorded node is one of
them). The cluster is the recording's at the moment of the binding: every earlier pod
on its recorded node. Nodes are judged all, as with ``percentageOfNodesToScore: 100``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..api import Pod
from ..framework import Status
from ..scheduler import Evaluation, Scheduler

__all__ = ["judge_decision"]

SHOWN_CHOICES = 10
"""Nodes of the choice set named in a decision (the size is always given)."""


def _status_text(status: Status) -> str:
    plugin = f"{status.plugin}: " if status.plugin else ""
    return plugin + (status.message or status.code.label)


def _node_scores(evaluation: Evaluation, node: str) -> dict[str, int]:
    scores = {plugin: per_node[node] for plugin, per_node in evaluation.scores.items()}
    scores["total"] = evaluation.totals[node]
    return scores


def _no_fit(evaluation: Evaluation) -> str:
    counts: Counter[str] = Counter()
    for _, status in evaluation.statuses.items():
        counts[_status_text(status)] += 1
    parts = [f"{n} {reason}" for reason, n in counts.most_common(4)]
    return "no feasible node: " + "; ".join(parts)


async def judge_decision(scheduler: Scheduler, pod: Pod, recorded: str) -> dict[str, Any]:
    """Whether ``recorded`` is in ksched's choice set for ``pod`` now, and if not why."""
    evaluation = await scheduler.evaluate(pod, score=True)
    out: dict[str, Any] = {"recordedNode": recorded}
    if evaluation.error is not None:
        out.update(agreed=False, reason=f"error: {_status_text(evaluation.error)}")
        return out
    feasible = evaluation.feasible
    if not feasible:
        out.update(agreed=False, choiceSize=0, choice=[], reason=_no_fit(evaluation))
        return out
    totals = evaluation.totals
    if totals:
        best = max(totals.values())
        choice = sorted(n for n, total in totals.items() if total == best)
        out["bestTotal"] = best
    else:  # no Score plugin: every feasible node is a choice
        choice = sorted(feasible)
    agreed = recorded in choice
    out.update(agreed=agreed, choiceSize=len(choice), choice=choice[:SHOWN_CHOICES])
    if agreed:
        return out
    if recorded not in feasible:
        if scheduler.cluster.get("Node", recorded) is None:
            why = "not a node of the cluster"
        else:
            why = _status_text(evaluation.statuses.get(recorded))
        out["reason"] = f"recorded node infeasible: {why}"
        if totals:
            out["scores"] = {choice[0]: _node_scores(evaluation, choice[0])}
        return out
    fw = scheduler.frameworks.get(pod.spec.scheduler_name)
    weights = fw.weights if fw is not None else {}
    out["reason"] = f"recorded node scored {totals[recorded]}, below the best {out['bestTotal']}"
    out["scores"] = {
        recorded: _node_scores(evaluation, recorded),
        choice[0]: _node_scores(evaluation, choice[0]),
    }
    out["weights"] = {plugin: weights.get(plugin, 1) for plugin in evaluation.scores}
    return out

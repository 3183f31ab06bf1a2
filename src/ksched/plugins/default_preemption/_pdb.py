"""PodDisruptionBudgets: which victims would violate one.

# pkg/scheduler/framework/preemption/preemption.go (filterPodsWithPDBViolation)
# pkg/controller/disruption (disruptionsAllowed, when the status does not say)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ...api import Pod, PodDisruptionBudget
from ...framework import PodInfo

__all__ = ["disruptions_allowed", "filter_pods_with_pdb_violation"]


# ---- PodDisruptionBudgets ---------------------------------------------------------------


def _scaled(value: int | str, total: int) -> int | None:
    """intstr GetScaledValueFromIntOrPercent with rounding up; None when malformed."""
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        return None
    try:
        pct = int(value[:-1])
    except ValueError:
        return None
    return math.ceil(pct * total / 100)


def _pdb_selects(pdb: PodDisruptionBudget, pod: Pod) -> bool:
    """Same namespace and a non-empty selector that matches (the preemption side's rule)."""
    selector = pdb.selector
    return (
        pdb.metadata.namespace == pod.namespace
        and selector is not None
        and not selector.is_empty
        and selector.matches(pod.labels)
    )


def disruptions_allowed(pdb: PodDisruptionBudget, pods: Iterable[Pod]) -> int:
    """``status.disruptionsAllowed``, or what the disruption controller would compute.

    The pods the budget selects are the expected count (each counted as its own
    controller's replica); running (bound, not terminating) ones are the healthy count.
    """
    if pdb.disruptions_allowed is not None:
        return pdb.disruptions_allowed
    selector = pdb.selector
    if selector is None:
        return 0
    namespace = pdb.metadata.namespace
    selected = [p for p in pods if p.namespace == namespace and selector.matches(p.labels)]
    expected = len(selected)
    healthy = sum(1 for p in selected if p.spec.node_name and not p.is_terminating)
    if pdb.max_unavailable is not None:
        max_unavailable = _scaled(pdb.max_unavailable, expected)
        if max_unavailable is None:
            return 0
        desired = max(expected - max_unavailable, 0)
    elif pdb.min_available is not None:
        min_available = _scaled(pdb.min_available, expected)
        if min_available is None:
            return 0
        desired = min_available
    else:
        desired = 0
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        return 0
    return allowed


def filter_pods_with_pdb_violation(
    pod_infos: Sequence[PodInfo],
    pdbs: Sequence[PodDisruptionBudget],
    allowed: Sequence[int],
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split pods (order kept) into those whose eviction breaks a budget and the rest.

    ``allowed`` holds each budget's disruptions allowed; it is copied, not changed.
    """
    budget = list(allowed)
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for info in pod_infos:
        pod = info.pod
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if not _pdb_selects(pdb, pod):
                    continue
                budget[i] -= 1
                if budget[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(info)
    return violating, non_violating

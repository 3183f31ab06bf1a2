"""The deletePods op: delete the pods of a namespace that match a label selector.

# test/integration/scheduler_perf/operations.go deletePodsOp (isValid),
# executor.go runDeletePodsOp
The pods are listed when the op starts; later pods are not touched. With
``deletePodsPerSecond`` they go one per tick (the first after one interval), else all at
once. ``skipWaitToCompletion`` runs the deletions in the background and moves on to the next
op. ksched deletes at once: there is no kubelet, so no grace period is waited for, and a
pod's finalizers do not keep it (upstream it would stay, terminating).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ..cluster import InMemoryCluster
from ._errors import WorkloadError
from ._pace import Ticker
from ._testcase import mapping

__all__ = ["DELETE_PODS_FIELDS", "DeletePods", "delete_pods", "matches", "parse_delete_pods"]

DELETE_PODS_FIELDS = {
    "opcode",
    "namespace",
    "labelSelector",
    "skipWaitToCompletion",
    "deletePodsPerSecond",
}


@attrs.frozen(kw_only=True)
class DeletePods:
    """deletePods: the namespace ('' for every namespace), selector and pace."""

    index: int
    namespace: str = ""
    label_selector: Mapping[str, str] = attrs.field(factory=dict)
    per_second: int = 0
    skip_wait: bool = False


def selector(op: Mapping[str, Any], where: str) -> dict[str, str]:
    """An op's ``labelSelector`` (a plain label map, as upstream's ops take it)."""
    return {str(k): str(v) for k, v in mapping(op.get("labelSelector"), where).items()}


def matches(labels: Mapping[str, str], wanted: Mapping[str, str]) -> bool:
    """Every ``wanted`` label is set to its value (an empty selector matches all)."""
    return all(labels.get(k) == v for k, v in wanted.items())


def parse_delete_pods(op: Mapping[str, Any], index: int, where: str) -> DeletePods:
    """The deletePods op at ``index``. Raises WorkloadError for invalid fields."""
    rate = op.get("deletePodsPerSecond", 0)
    if isinstance(rate, bool) or not isinstance(rate, int):
        raise WorkloadError(f"{where}: deletePodsPerSecond: expected an integer, got {rate!r}")
    if rate < 0:
        raise WorkloadError(f"{where}: invalid DeletePodsPerSecond={rate}; should be non-negative")
    return DeletePods(
        index=index,
        namespace=str(op.get("namespace") or ""),
        label_selector=selector(op, f"{where}: labelSelector"),
        per_second=rate,
        skip_wait=bool(op.get("skipWaitToCompletion", False)),
    )


async def delete_pods(cluster: InMemoryCluster, op: DeletePods) -> None:
    """Delete the pods ``op`` selects now, at its pace. Pods already gone are skipped."""
    keys = [
        pod.key
        for pod in cluster.pods()
        if (not op.namespace or pod.namespace == op.namespace)
        and matches(pod.labels, op.label_selector)
    ]
    ticker = Ticker(op.per_second) if op.per_second else None
    for key in keys:
        if ticker is not None:
            await ticker.tick()
        if cluster.get("Pod", key) is not None:
            cluster.remove("Pod", key)

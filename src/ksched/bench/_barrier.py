"""The barrier op: wait until the pods of some namespaces are scheduled (or attempted).

# test/integration/scheduler_perf/executor.go runBarrierOp, waitUntilPodsScheduled,
# waitUntilPodsAttempted (and their InNamespace forms), getScheduledPods
Per namespace the barrier waits for ``want`` pods matching ``labelSelector``, where ``want``
is the number of pods created there with ``skipWaitToCompletion`` since the namespace's last
Scheduled barrier (upstream's numPodsScheduledPerNamespace). Scheduled counts bound pods;
Attempted also counts pods that went through a cycle and stayed pending, and gated pods
(upstream: a PodScheduled condition False). No namespaces means every namespace the run
knows. A Scheduled barrier forgets its namespaces' counts afterwards.

Counts are read from the cluster, as upstream lists pods. Each recount is followed by a wait
for as many new scheduling outcomes in the namespace as pods are still missing, since one
outcome changes the count by at most one: the wait is event-driven, never a poll.
"""

from __future__ import annotations

from collections.abc import Mapping

import anyio

from ..cluster import InMemoryCluster
from ._delete import matches
from ._errors import WorkloadError
from ._metrics import Collector

__all__ = ["count_pods", "wait_barrier"]

OP_TIMEOUT = 600.0
"""Upstream gives up after 10 minutes per namespace."""


def count_pods(
    cluster: InMemoryCluster,
    collector: Collector,
    namespace: str,
    selector: Mapping[str, str],
    *,
    attempted: bool,
) -> int:
    """Pods of ``namespace`` matching ``selector`` that are bound (or attempted)."""
    pending = collector.unschedulable.get(namespace, set())
    n = 0
    for pod in cluster.pods():
        if pod.namespace != namespace or not matches(pod.labels, selector):
            continue
        if pod.spec.node_name or (
            attempted and (pod.key in pending or bool(pod.spec.scheduling_gates))
        ):
            n += 1
    return n


async def wait_barrier(
    cluster: InMemoryCluster,
    collector: Collector,
    expected: dict[str, int],
    namespaces: tuple[str, ...],
    selector: Mapping[str, str],
    stage: str,
    where: str,
) -> None:
    """Wait as the barrier op does; ``expected`` is the run's per-namespace pod count.

    Raises:
        WorkloadError: an unknown namespace, or a namespace not done within 10 minutes.
    """
    for ns in namespaces:
        if ns not in expected:
            raise WorkloadError(f"{where}: unknown namespace {ns}")
    attempted = stage == "Attempted"
    for ns in list(namespaces or expected):
        want = expected[ns]
        with anyio.move_on_after(OP_TIMEOUT) as scope:
            while (have := count_pods(cluster, collector, ns, selector, attempted=attempted)) < (
                want
            ):
                await collector.wait_outcomes(ns, collector.outcomes.get(ns, 0) + want - have)
        if scope.cancelled_caught:
            raise WorkloadError(
                f"{where}: timed out waiting for {want} pods of namespace {ns} to be "
                f"{stage.lower()} ({have} are)"
            )
    if not attempted:
        if namespaces:
            for ns in namespaces:
                expected.pop(ns, None)
        else:
            expected.clear()

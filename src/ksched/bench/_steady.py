"""createPods in a steady state, and the signature label of signatureBatchSize.

# test/integration/scheduler_perf/executor.go createPodsSteadily, podTemplateWithParams;
# operations.go createPodsOp (SteadyState, Duration, SignatureBatchSize)
Steady state: ``count`` pods are created; each time one of the namespace's pods is bound it
is deleted and one new pod created, so the scheduler's queue never runs dry while the
cluster stays near its starting state. After ``duration`` the op ends; it fails if no pod
was scheduled at all. A measured window, if any, runs alongside.

signatureBatchSize ``n``: pod ``i`` of the op gets the label
``signature: signature-label-<i // n>``, so runs of ``n`` pods share a signature.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import anyio

from ..api import Pod
from ..cluster import InMemoryCluster
from ._errors import WorkloadError
from ._metrics import Collector

__all__ = ["SIGNATURE_LABEL", "create_steadily", "signature_value"]

SIGNATURE_LABEL = "signature"


def signature_value(index: int, batch: int) -> str:
    """The ``signature`` label of the op's pod ``index`` for batches of ``batch`` pods."""
    return f"signature-label-{index // batch}"


async def create_steadily(
    cluster: InMemoryCluster,
    collector: Collector,
    namespace: str,
    build: Callable[[int], list[Pod]],
    count: int,
    duration: float,
    where: str,
) -> int:
    """Keep ``count`` pods pending in ``namespace`` for ``duration`` seconds.

    ``build(n)`` makes ``n`` new pods. Returns how many pods were scheduled.

    Raises:
        WorkloadError: no pod got scheduled in the whole duration.
    """
    send, receive = anyio.create_memory_object_stream[str](math.inf)
    collector.on_bound[namespace] = send.send_nowait
    scheduled = 0
    try:
        for pod in build(count):
            cluster.apply(pod)
        with anyio.move_on_after(duration), receive:
            async for key in receive:
                scheduled += 1
                if cluster.get("Pod", key) is not None:
                    cluster.remove("Pod", key)
                for pod in build(1):
                    cluster.apply(pod)
    finally:
        collector.on_bound.pop(namespace, None)
        send.close()
    if scheduled == 0:
        raise WorkloadError(
            f"{where}: no pod at all got scheduled, either because of a problem or because "
            "the test interval was too small"
        )
    return scheduled

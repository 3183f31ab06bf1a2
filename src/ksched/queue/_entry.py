"""The queue's own record of a pod: QueuedPodInfo plus the counters backoff needs.

# pkg/scheduler/framework/types.go: QueuedPodInfo / QueueingParams (UnschedulableCount,
# WasFlushedFromUnschedulable, the cached BackoffExpiration)
"""

from __future__ import annotations

import attrs

from ..framework import QueuedPodInfo

__all__ = ["QueuedPod", "adopt"]


@attrs.define(eq=False, slots=True)
class QueuedPod(QueuedPodInfo):
    """A ``QueuedPodInfo`` as the queue keeps it.

    ``unschedulable_count`` counts the attempts that plugins rejected (it drives the
    backoff; ``attempts`` counts pops). ``expiry_ns`` caches the backoff expiry in
    nanoseconds (None: not computed since the last failure).
    """

    unschedulable_count: int = 0
    was_flushed_from_unschedulable: bool = False
    expiry_ns: int | None = attrs.field(default=None, repr=False)

    @property
    def uid(self) -> str:
        return self.pod_info.pod.uid


def adopt(info: QueuedPodInfo) -> QueuedPod:
    """``info`` itself when the queue made it, else a QueuedPod carrying its fields."""
    if isinstance(info, QueuedPod):
        return info
    return QueuedPod(
        pod_info=info.pod_info,
        timestamp=info.timestamp,
        attempts=info.attempts,
        initial_attempt_timestamp=info.initial_attempt_timestamp,
        unschedulable_plugins=info.unschedulable_plugins,
        pending_plugins=info.pending_plugins,
        gated=info.gated,
        gating_plugin=info.gating_plugin,
        consecutive_errors=info.consecutive_errors,
        backoff_expiry=info.backoff_expiry,
        sequence=info.sequence,
    )

"""Failure handling: an attempt that found no node, or a binding cycle that failed.

# pkg/scheduler/schedule_one.go handleSchedulingFailure
"""

from __future__ import annotations

import logging

from ..framework import PodInfo, QueuedPodInfo
from ..framework.runtime import Framework
from ._observer import Observer
from ._state import Failure, SchedulerState

__all__ = ["NOTE_LENGTH_LIMIT", "FailureHandler", "truncate_note"]

logger = logging.getLogger("ksched.scheduler")

NOTE_LENGTH_LIMIT = 1024
"""events.k8s.io/v1 ``note`` limit (apis/events/validation NoteLengthLimit)."""


def truncate_note(message: str) -> str:
    """schedule_one.go truncateMessage: cut to the Event note limit, ending in " ..."."""
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    suffix = " ..."
    return message[: NOTE_LENGTH_LIMIT - len(suffix)] + suffix


class FailureHandler:
    """Requeue the pod, keep or clear its nomination, write its condition and Event."""

    def __init__(self, state: SchedulerState, observer: Observer) -> None:
        self.state = state
        self.observer = observer

    async def handle(self, fw: Framework, qpi: QueuedPodInfo, failure: Failure) -> None:
        """# schedule_one.go handleSchedulingFailure"""
        st, pod, status = self.state, qpi.pod, failure.status
        fit = failure.fit_error
        qpi.unschedulable_plugins = set(fit.unschedulable_plugins) - {""} if fit else set()
        qpi.pending_plugins = set()
        record = st.record(pod.uid)
        record.message = status.message
        current = st.cluster.get_pod(pod.key)
        if current is None or current.uid != pod.uid or current.spec.node_name:
            st.queue.done(pod.uid)
        else:
            qpi.pod_info = PodInfo.of(current)
            st.queue.add_unschedulable_if_not_present(qpi, st.queue.scheduling_cycle)
        nominated_node = current.status.nominated_node_name if current is not None else None
        if failure.nominated:
            nominated_node = failure.nominated
            record.nominated_node = failure.nominated
            st.queue.add_nominated_pod(PodInfo.of(current or pod), failure.nominated)
        elif failure.clear_nomination:
            nominated_node = None
            st.queue.delete_nominated_pod_if_exists(pod)
        reason = "Unschedulable" if status.is_rejected else "SchedulerError"
        self.observer.emit(reason, pod, message=status.message, attempts=qpi.attempts)
        # schedule_one.go handleSchedulingFailure: one line per failure, never per node
        if status.is_rejected:
            if logger.isEnabledFor(logging.INFO):
                pairs = {"pod": pod.key, "err": status.message}
                logger.info("Unable to schedule pod; no fit; waiting", extra={"kv": pairs})
        else:
            logger.error(
                "Error scheduling pod; retrying",
                extra={"kv": {"pod": pod.key, "err": status.message}},
            )
        self.observer.cluster_event(
            pod, None, "Warning", "FailedScheduling", "Scheduling", truncate_note(status.message)
        )
        if current is not None and not current.spec.node_name:
            await st.cluster.update_pod_status(
                current,
                nominated_node_name=nominated_node,
                condition={
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": reason,
                    "message": status.message,
                },
            )

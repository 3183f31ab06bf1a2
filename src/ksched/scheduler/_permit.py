"""Permit for a reserved pod, shared by the scheduling cycle and the pod-group cycle.

# pkg/scheduler/schedule_one.go (schedulingCycle: RunPermitPlugins, the waiting pod)
"""

from __future__ import annotations

import attrs

from ..api import Pod
from ..framework import Code, CycleState, NodeToStatus, Status, WaitingPod
from ..framework.runtime import Framework
from ._diagnosis import FitError
from ._observer import Attempt, Observer
from ._state import Failure, SchedulerState

__all__ = ["Placed", "permit", "single_node_failure"]


@attrs.frozen
class Placed:
    """A pod through Permit: assumed on ``node_name``, waiting there or not."""

    assumed: Pod
    node_name: str
    waiting: WaitingPod | None


def single_node_failure(pod: Pod, node_name: str, status: Status) -> Failure:
    """A failure on the one node the pod was placed on (Reserve, Permit)."""
    if not status.is_rejected:
        return Failure(status, clear_nomination=True)
    statuses = NodeToStatus()
    statuses.set(node_name, status)
    fit = FitError(num_all_nodes=1, statuses=statuses, unschedulable_plugins={status.plugin})
    return Failure(Status(status.code, (fit.message(),)), fit_error=fit, clear_nomination=True)


async def permit(
    st: SchedulerState,
    observer: Observer,
    fw: Framework,
    state: CycleState,
    pod: Pod,
    assumed: Pod,
    node_name: str,
    attempt: Attempt,
) -> Failure | Placed:
    """Permit for a reserved, assumed pod: a rejection unreserves and forgets it; a wait
    registers the waiting pod."""
    status, waiting = await fw.run_permit(state, assumed, node_name, st.now())
    attempt.point("Permit", status)
    if status.code is not Code.WAIT and not status.is_success:
        await fw.run_unreserve(state, assumed, node_name)
        st.cache.forget_pod(assumed)
        return single_node_failure(pod, node_name, status)
    if waiting is not None:
        st.waiting_pods.add(waiting)
        observer.emit("WaitingOnPermit", pod, node=node_name, plugins=waiting.pending_plugins)
    return Placed(assumed, node_name, waiting)

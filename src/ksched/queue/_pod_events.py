"""Which cluster events a pod update amounts to.

# pkg/scheduler/framework/events.go: PodSchedulingPropertiesChange (labels, scale-down,
# scheduling gates eliminated, tolerations; otherwise a plain Update)
"""

from __future__ import annotations

from ..api import Pod, pod_requests
from ..framework import ActionType, ClusterEvent, EventResource

__all__ = ["pod_scheduling_properties_change"]


def _scaled_down(new: Pod, old: Pod) -> bool:
    new_requests = pod_requests(new)
    for name, amount in pod_requests(old).items():
        if name not in new_requests or amount > new_requests[name]:
            return True
    return False


def pod_scheduling_properties_change(new: Pod, old: Pod) -> list[ClusterEvent]:
    """The events of the update ``old`` -> ``new``: AssignedPod events when ``new`` has a
    node, UnscheduledPod events otherwise; a plain Update when nothing specific changed."""
    resource = EventResource.ASSIGNED_POD if new.spec.node_name else EventResource.UNSCHEDULED_POD
    actions: list[ActionType] = []
    if dict(new.labels) != dict(old.labels):
        actions.append(ActionType.UPDATE_POD_LABEL)
    if _scaled_down(new, old):
        actions.append(ActionType.UPDATE_POD_SCALE_DOWN)
    if not new.spec.scheduling_gates and old.spec.scheduling_gates:
        actions.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if len(new.spec.tolerations) != len(old.spec.tolerations):
        actions.append(ActionType.UPDATE_POD_TOLERATION)
    if new.status.resource_claim_statuses != old.status.resource_claim_statuses:
        actions.append(ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    if not actions:
        actions.append(ActionType.UPDATE)
    return [ClusterEvent(resource, action) for action in actions]

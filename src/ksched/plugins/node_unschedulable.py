"""NodeUnschedulable: keep pods off cordoned nodes unless they tolerate it.

# pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import numpy as np

from ..api import Node, Pod, Taint, Toleration
from ..framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    QueueingHint,
    Status,
)
from ..framework.batch import (
    POD_TOLERATIONS,
    TOLERATIONS,
    BoolArray,
    Capabilities,
    NodeTable,
    SignFragment,
    tolerations_signer,
)

__all__ = ["ERR_REASON_UNKNOWN_CONDITION", "ERR_REASON_UNSCHEDULABLE", "NodeUnschedulable"]

NAME: Final = "NodeUnschedulable"
ERR_REASON_UNKNOWN_CONDITION: Final = "node(s) had unknown conditions"
ERR_REASON_UNSCHEDULABLE: Final = "node(s) were unschedulable"

TAINT_NODE_UNSCHEDULABLE: Final = "node.kubernetes.io/unschedulable"
_UNSCHEDULABLE_TAINT: Final = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule")
_REJECTED: Final = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNSCHEDULABLE,))


def _tolerates_unschedulable(tolerations: Iterable[Toleration]) -> bool:
    return any(t.tolerates(_UNSCHEDULABLE_TAINT) for t in tolerations)


class NodeUnschedulable:
    """Rejects nodes with ``spec.unschedulable`` unless the pod tolerates the
    ``node.kubernetes.io/unschedulable:NoSchedule`` taint."""

    name = NAME
    capabilities = Capabilities(node_local_filter=True, pod_fields=(POD_TOLERATIONS,))

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> NodeUnschedulable:
        return cls()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not node_info.node.spec.unschedulable:
            return None
        if _tolerates_unschedulable(pod.spec.tolerations):
            return None
        return _REJECTED

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray:
        if _tolerates_unschedulable(pod.spec.tolerations):
            return np.ones(len(table), dtype=np.bool_)
        return ~table.unschedulable

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
        return ((TOLERATIONS, tolerations_signer(pod)),)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
                self.is_schedulable_after_pod_toleration_change,
            ),
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """A schedulable node added, or a node uncordoned."""
        if not isinstance(new, Node) or (old is not None and not isinstance(old, Node)):
            return QueueingHint.QUEUE
        if new.spec.unschedulable:
            return QueueingHint.SKIP
        if old is None or old.spec.unschedulable:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_pod_toleration_change(
        self, pod: Pod, old: Any, new: Any
    ) -> QueueingHint:
        """The rejected pod itself now tolerates the unschedulable taint."""
        if not isinstance(new, Pod) or (old is not None and not isinstance(old, Pod)):
            return QueueingHint.QUEUE
        if new.uid == pod.uid and _tolerates_unschedulable(new.spec.tolerations):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

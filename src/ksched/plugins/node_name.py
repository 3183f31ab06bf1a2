"""NodeName: a pod that names a node fits only that node.

# pkg/scheduler/framework/plugins/nodename/node_name.go
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np

from ..api import Pod
from ..framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    Status,
)
from ..framework.batch import (
    NODE_NAME,
    POD_NODE_NAME,
    BoolArray,
    Capabilities,
    NodeTable,
    SignFragment,
)

__all__ = ["ERR_REASON", "NodeName", "fits"]

NAME: Final = "NodeName"
ERR_REASON: Final = "node(s) didn't match the requested node name"

_REJECTED: Final = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON,))


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether ``pod`` names no node, or names this one."""
    return not pod.spec.node_name or pod.spec.node_name == node_info.node.name


class NodeName:
    """Filters out every node but the one in ``spec.nodeName`` (if set)."""

    name = NAME
    capabilities = Capabilities(node_local_filter=True, pod_fields=(POD_NODE_NAME,))

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> NodeName:
        return cls()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None if fits(pod, node_info) else _REJECTED

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray:
        if not pod.spec.node_name:
            return np.ones(len(table), dtype=np.bool_)
        mask: BoolArray = np.zeros(len(table), dtype=np.bool_)
        row = table.index.get(pod.spec.node_name)
        if row is not None:
            mask[row] = True
        return mask

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
        return ((NODE_NAME, pod.spec.node_name),)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Only a new node can be the named one; no hint needed.
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD))]

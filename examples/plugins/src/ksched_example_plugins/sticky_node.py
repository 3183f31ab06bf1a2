"""StickyNode: a pod goes back to the node its owner recorded on first placement.

The use case: a virtual machine keeps its disk on the local storage of one node. The VM
runs as a pod owned by a controller object (here a StatefulSet of one replica, as a
VM operator would create); when the VM restarts, its pod is deleted and created again
with a new uid, while the owner stays. So the owner is where the node is recorded:

- PreFilter reads the annotation ``ksched.example/sticky-node`` from the pod's
  controlling owner. No owner, or nothing recorded yet: SKIP (this plugin's Filter does
  not run for the pod). Otherwise the node goes into CycleState.
- Filter admits only that node (UnschedulableAndUnresolvable elsewhere: preemption
  cannot move a disk).
- PostBind writes the node onto the owner the first time the pod is placed.

The owner is read from and written to the cluster store (``get``/``apply`` of
``InMemoryCluster``; an adapter for a real cluster would PATCH the owner instead).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol, cast

import attrs

from ksched import ConfigError, Pod
from ksched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    Status,
    parse_plugin_args,
)

__all__ = ["DEFAULT_ANNOTATION", "StickyNode", "StickyNodeArgs"]

NAME: Final = "StickyNode"
DEFAULT_ANNOTATION: Final = "ksched.example/sticky-node"
_STATE_KEY: Final = "PreFilter" + NAME


class OwnerStore(Protocol):
    """What StickyNode needs of the cluster store: read and replace an owner object."""

    def get(self, kind: str, key: str) -> Any | None: ...

    def apply(self, obj: Any) -> None: ...


@attrs.frozen(kw_only=True)
class StickyNodeArgs:
    """``annotation``: the owner annotation that holds the recorded node."""

    annotation: str = DEFAULT_ANNOTATION


def owner_of(pod: Pod) -> tuple[str, str] | None:
    """(kind, namespace/name) of the pod's controlling owner, or its first owner."""
    refs = pod.metadata.owner_references
    if not refs:
        return None
    ref = next((r for r in refs if r.controller), refs[0])
    return ref.kind, f"{pod.namespace}/{ref.name}"


class StickyNode:
    """Places a pod only on the node recorded on its owner; records it on first bind."""

    name = NAME

    def __init__(self, args: StickyNodeArgs, store: OwnerStore) -> None:
        self.args = args
        self._store = store

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> StickyNode:
        store = handle.cluster
        if not (callable(getattr(store, "get", None)) and callable(getattr(store, "apply", None))):
            raise ConfigError(f"{NAME}: the cluster store cannot read and update owner objects")
        # Checked just above: the store reads and replaces objects, as OwnerStore says.
        return cls(parse_plugin_args(StickyNodeArgs, args, plugin=NAME), cast(OwnerStore, store))

    def recorded_node(self, pod: Pod) -> str | None:
        """The node recorded on the pod's owner (None: no owner or nothing recorded)."""
        owner = owner_of(pod)
        if owner is None:
            return None
        obj = self._store.get(*owner)
        if obj is None:
            return None
        node: str | None = obj.metadata.annotations.get(self.args.annotation) or None
        return node

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        node = self.recorded_node(pod)
        if node is None:
            return Status(Code.SKIP)
        state.write(_STATE_KEY, node)
        return None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node: str = state.read(_STATE_KEY)
        if node_info.node.name == node:
            return None
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            f"node(s) didn't match the node {node} recorded for the pod's owner",
        )

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        owner = owner_of(pod)
        if owner is None:
            return
        obj = self._store.get(*owner)
        if obj is None or obj.metadata.annotations.get(self.args.annotation):
            return
        annotations = {**obj.metadata.annotations, self.args.annotation: node_name}
        self._store.apply(
            attrs.evolve(obj, metadata=attrs.evolve(obj.metadata, annotations=annotations))
        )

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # A pod waiting for its recorded node needs that node to come (back).
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD))]

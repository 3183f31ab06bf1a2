"""Cluster events and queueing hints: which changes can make a rejected pod schedulable.

# staging/src/k8s.io/kube-scheduler/framework/types.go: ActionType, EventResource,
# ClusterEvent, QueueingHint, ClusterEventWithHint
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import attrs

from ..api import Pod

__all__ = [
    "ActionType",
    "ClusterEvent",
    "ClusterEventWithHint",
    "EventResource",
    "QueueingHint",
    "QueueingHintFn",
]


class ActionType(enum.IntFlag):
    """What happened to an object (flags, so a registration can name several)."""

    ADD = enum.auto()
    DELETE = enum.auto()
    UPDATE_NODE_ALLOCATABLE = enum.auto()
    UPDATE_NODE_LABEL = enum.auto()
    UPDATE_NODE_TAINT = enum.auto()
    UPDATE_NODE_CONDITION = enum.auto()
    UPDATE_NODE_ANNOTATION = enum.auto()
    UPDATE_POD_LABEL = enum.auto()
    UPDATE_POD_SCALE_DOWN = enum.auto()
    UPDATE_POD_TOLERATION = enum.auto()
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = enum.auto()
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = enum.auto()
    UPDATE_OTHER = enum.auto()
    """An update not covered by a finer flag (e.g. of a PodGroup)."""

    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATION
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_GENERATED_RESOURCE_CLAIM
        | UPDATE_OTHER
    )
    ALL = ADD | DELETE | UPDATE


class EventResource(enum.Enum):
    """The kind of object an event is about."""

    POD = "Pod"
    """Any pod; a registration for POD also receives ASSIGNED_POD and UNSCHEDULED_POD."""
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnscheduledPod"
    NODE = "Node"
    NAMESPACE = "Namespace"
    POD_GROUP = "PodGroup"
    """scheduler-plugins' PodGroup (scheduling.x-k8s.io), read by Coscheduling."""
    WORKLOAD = "Workload"
    SCHEDULING_POD_GROUP = "SchedulingPodGroup"
    """scheduling.k8s.io PodGroup, read by GangScheduling."""
    SERVICE = "Service"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    STORAGE_CLASS = "StorageClass"
    CSI_NODE = "CSINode"
    CSI_DRIVER = "CSIDriver"
    CSI_STORAGE_CAPACITY = "CSIStorageCapacity"
    RESOURCE_CLAIM = "ResourceClaim"
    RESOURCE_SLICE = "ResourceSlice"
    DEVICE_CLASS = "DeviceClass"
    WILDCARD = "*"

    @classmethod
    def for_kind(cls, kind: str) -> EventResource | None:
        """The resource of a cluster object kind whose changes become plain events
        (every member named as its kind, except pods and nodes, which have their own)."""
        if kind in ("Pod", "Node"):
            return None
        try:
            return cls(kind)
        except ValueError:
            return None


class QueueingHint(enum.Enum):
    QUEUE = "Queue"
    SKIP = "QueueSkip"


QueueingHintFn = Callable[[Pod, Any, Any], QueueingHint]
"""``hint(pod, old_obj, new_obj)``: may the event make ``pod`` schedulable?"""


@attrs.frozen
class ClusterEvent:
    """An event: a resource and what happened to it. ``label`` is a free-form name."""

    resource: EventResource
    action: ActionType
    label: str = ""

    def matches(self, incoming: ClusterEvent) -> bool:
        """Whether this registration covers ``incoming`` (upstream MatchClusterEvents).

        The wildcard registration covers everything; otherwise the resources match and
        the incoming action is among the registered ones and no broader than them.
        """
        if self.resource is EventResource.WILDCARD and self.action == ActionType.ALL:
            return True
        resource_ok = (
            self.resource is EventResource.WILDCARD
            or self.resource is incoming.resource
            or (
                self.resource is EventResource.POD
                and incoming.resource in (EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD)
            )
        )
        return (
            resource_ok and bool(self.action & incoming.action) and incoming.action <= self.action
        )

    def __str__(self) -> str:
        return self.label or f"{self.resource.value}/{self.action!r}"


@attrs.frozen
class ClusterEventWithHint:
    """A registration: the event, and optionally a hint that filters it per pod."""

    event: ClusterEvent
    hint: QueueingHintFn | None = None


# The events the scheduler itself raises.
UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "ForceActivate")
NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
NODE_DELETE = ClusterEvent(EventResource.NODE, ActionType.DELETE, "NodeDelete")
ASSIGNED_POD_ADD = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD, "AssignedPodAdd")
ASSIGNED_POD_DELETE = ClusterEvent(
    EventResource.ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete"
)
UNSCHEDULED_POD_ADD = ClusterEvent(
    EventResource.UNSCHEDULED_POD, ActionType.ADD, "UnscheduledPodAdd"
)
EVENT_UNSCHEDULED_POD_DELETE = ClusterEvent(
    EventResource.UNSCHEDULED_POD, ActionType.DELETE, "UnscheduledPodDelete"
)

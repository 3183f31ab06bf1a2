"""Event handlers: cluster changes into the cache and the queue (informer handlers).

# pkg/scheduler/eventhandlers.go (addNodeToCache, updatePodInCache, addPodToSchedulingQueue,
# ...), framework/events.go (NodeSchedulingPropertiesChange, PodSchedulingPropertiesChange)
"""

from __future__ import annotations

from typing import Any

from ..api import Node, Pod
from ..framework import ActionType, ClusterEvent, EventResource, PodInfo
from ..framework.runtime import ASSIGNED_POD_ADD, ASSIGNED_POD_DELETE, NODE_ADD, UNSCHEDULED_POD_ADD
from ._observer import Observer
from ._state import SchedulerState

__all__ = ["EventHandlers"]


class EventHandlers:
    """The listener the scheduler subscribes to its cluster: each change into the cache
    and the queue."""

    def __init__(self, state: SchedulerState, observer: Observer) -> None:
        self.state = state
        self.observer = observer
        self.cache = state.cache
        self.queue = state.queue

    def on_change(self, kind: str, old: Any, new: Any) -> None:
        """``listener(kind, old, new)`` of the ClusterStore seam."""
        if kind == "Node":
            self._on_node(old, new)
        elif kind == "Pod":
            self._on_pod(old, new)
        else:
            resource = EventResource.for_kind(kind)
            if resource is None:
                return
            action = (
                ActionType.ADD
                if old is None
                else ActionType.DELETE
                if new is None
                else ActionType.UPDATE_OTHER
            )
            self.queue.move_all_to_active_or_backoff(
                ClusterEvent(resource, action, f"{kind}{action.name}"), old, new
            )

    def _on_node(self, old: Node | None, new: Node | None) -> None:
        if new is None:
            assert old is not None
            self.cache.remove_node(old)
            return
        if old is None:
            self.cache.add_node(new)
            self.queue.move_all_to_active_or_backoff(NODE_ADD, None, new)
            return
        self.cache.update_node(new)
        for action in _node_changes(old, new):
            event = ClusterEvent(EventResource.NODE, action, f"Node{action.name}")
            self.queue.move_all_to_active_or_backoff(event, old, new)

    def _on_pod(self, old: Pod | None, new: Pod | None) -> None:
        if new is None:
            assert old is not None
            if old.spec.node_name:
                self.cache.remove_pod(old)
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, old, None)
                return
            self.queue.delete(old)
            waiting = self.state.waiting_pods.get(old.uid)
            if waiting is not None:
                waiting.reject("", "removed")
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, old, None)
            return
        if new.spec.node_name:
            if old is None or not old.spec.node_name:
                if old is not None:
                    self.queue.delete(old)
                self.cache.add_pod(new)
                # Queueing hints are on, so every pool pod is offered to its rejecting
                # plugins' hints (eventhandlers.go addPodToCache): the queue's
                # cross-topology pre-filter would miss anti-affinity and custom plugins.
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, None, new)
            else:
                self.cache.update_pod(old, new)
                for action in _pod_changes(old, new):
                    event = ClusterEvent(
                        EventResource.ASSIGNED_POD, action, f"AssignedPod{action.name}"
                    )
                    self.queue.move_all_to_active_or_backoff(event, old, new)
            return
        if new.spec.scheduler_name not in self.state.frameworks:
            return
        if old is None:
            record = self.state.record(new.uid)
            if new.status.nominated_node_name:
                self.queue.add_nominated_pod(PodInfo.of(new), new.status.nominated_node_name)
                record.nominated_node = new.status.nominated_node_name
            self.queue.add(new)
            self.observer.emit("Queued", new)
            if self.state.gang_profiles:
                # A new member may complete its gang's minCount (eventhandlers.go
                # addPodToSchedulingQueue, with the GangScheduling gate).
                self.queue.move_all_to_active_or_backoff(UNSCHEDULED_POD_ADD, None, new)
        elif self.cache.is_assumed(new.uid):
            return
        else:
            self.queue.update(old, new)


def _node_changes(old: Node, new: Node) -> list[ActionType]:
    """# eventhandlers.go nodeSchedulingPropertiesChange"""
    out: list[ActionType] = []
    if old.spec.unschedulable != new.spec.unschedulable:
        out.append(ActionType.UPDATE_NODE_TAINT)
    if dict(old.status.allocatable) != dict(new.status.allocatable):
        out.append(ActionType.UPDATE_NODE_ALLOCATABLE)
    if dict(old.labels) != dict(new.labels):
        out.append(ActionType.UPDATE_NODE_LABEL)
    if old.spec.taints != new.spec.taints:
        out.append(ActionType.UPDATE_NODE_TAINT)
    if dict(old.metadata.annotations) != dict(new.metadata.annotations):
        out.append(ActionType.UPDATE_NODE_ANNOTATION)
    return out


def _pod_changes(old: Pod, new: Pod) -> list[ActionType]:
    """# framework/events.go PodSchedulingPropertiesChange (assigned pods)"""
    out: list[ActionType] = []
    if dict(old.labels) != dict(new.labels):
        out.append(ActionType.UPDATE_POD_LABEL)
    if old.spec.containers != new.spec.containers:
        out.append(ActionType.UPDATE_POD_SCALE_DOWN)
    if old.spec.tolerations != new.spec.tolerations:
        out.append(ActionType.UPDATE_POD_TOLERATION)
    return out or [ActionType.UPDATE_OTHER]

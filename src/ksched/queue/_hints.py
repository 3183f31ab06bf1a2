"""Queueing hints: whether a cluster event concerns a pod a plugin turned away.

# pkg/scheduler/backend/queue/scheduling_queue.go (isPodWorthRequeuing,
# queueingStrategy), pkg/scheduler/framework/types.go (ClusterEvent.Match)
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

from ..framework import ActionType, ClusterEvent, EventResource
from ._entry import QueuedPod

__all__ = [
    "ACTIVE",
    "BACKOFF",
    "GATED",
    "IN_FLIGHT",
    "UNSCHEDULABLE",
    "Recorded",
    "Strategy",
    "entry_uid",
    "is_wildcard",
    "matches",
]


class Strategy(enum.IntEnum):
    """queueingStrategy, in rising priority."""

    SKIP = 0
    AFTER_BACKOFF = 1
    IMMEDIATELY = 2


ACTIVE, BACKOFF, UNSCHEDULABLE, GATED, IN_FLIGHT = (
    "active",
    "backoff",
    "unschedulable",
    "gated",
    "in-flight",
)


@attrs.frozen(slots=True)
class Recorded:
    """A cluster event seen while some pod was in flight."""

    event: ClusterEvent
    old: Any
    new: Any


def is_wildcard(event: ClusterEvent) -> bool:
    return event.resource is EventResource.WILDCARD and event.action == ActionType.ALL


def _resource_matches(registered: EventResource, incoming: EventResource) -> bool:
    return (
        registered is EventResource.WILDCARD
        or registered is incoming
        or (
            registered is EventResource.POD
            and incoming in (EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD)
        )
    )


def matches(registered: ClusterEvent, incoming: ClusterEvent) -> bool:
    """Whether a registration covers an incoming event (upstream MatchClusterEvents): the
    wildcard registration covers everything; otherwise the resources match and the
    incoming action is among the registered ones and no broader than them."""
    if is_wildcard(registered):
        return True
    return (
        _resource_matches(registered.resource, incoming.resource)
        and bool(registered.action & incoming.action)
        and incoming.action <= registered.action
    )


def entry_uid(entry: QueuedPod) -> str:
    return entry.pod_info.pod.uid

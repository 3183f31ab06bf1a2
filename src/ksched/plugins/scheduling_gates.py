"""SchedulingGates: hold a pod at PreEnqueue while it carries scheduling gates.

# pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..api import Pod
from ..framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    Handle,
    QueueingHint,
    Status,
)

__all__ = ["SchedulingGates"]


class SchedulingGates:
    name = "SchedulingGates"

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> SchedulingGates:
        return cls()

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.spec.scheduling_gates:
            return None
        gates = "[" + " ".join(pod.spec.scheduling_gates) + "]"
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            (f"waiting for scheduling gates: {gates}",),
        )

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
                ),
                self._gates_removed,
            )
        ]

    def _gates_removed(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if isinstance(new, Pod) and new.uid == pod.uid and not new.spec.scheduling_gates:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

"""GangScheduling: all-or-nothing scheduling of scheduling.k8s.io pod groups.

# pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go (PreEnqueue, Permit,
# PlacementFeasible, EventsToRegister and the queueing hints), across the alphas
PreEnqueue holds a gang's pods until its group object exists and minCount of its pods do.
The scheduler then places the gang in one pod-group cycle (``ksched.scheduler``'s group
cycle), asking :meth:`GangScheduling.placement_feasible` after each member whether
minCount can still be met. Permit keeps upstream's quorum wait (5 minutes): a member
reaching Permit before minCount members are assumed waits for them, and the one that
completes the quorum allows every waiting sibling.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...api import Pod, SchedulingPodGroup
from ...framework import (
    POD_GROUP_CYCLE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    QueueingHint,
    Status,
)
from ._tracker import GroupInfo, GroupTracker, group_key

__all__ = ["NAME", "PERMIT_TIMEOUT_SECONDS", "GangScheduling"]

NAME = "GangScheduling"
PERMIT_TIMEOUT_SECONDS = 300.0
"""permitTimeoutDuration: how long members wait at Permit for the quorum."""

MSG_WAITING_TO_APPEAR = "waiting for minCount pods from a gang to appear in scheduling queue"
MSG_WAITING_AT_PERMIT = "waiting for minCount pods from a gang to be scheduled"
MSG_SIBLING_UNRESERVED = "the gang lost its quorum: Unreserve of pod"


class GangScheduling:
    """PreEnqueue, Reserve, Permit and PlacementFeasible for scheduling.k8s.io pod groups."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self.tracker = GroupTracker(handle.cluster)

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> GangScheduling:
        return cls(handle)

    def close(self) -> None:
        self.tracker.close()

    # ---- the pod-group cycle's questions ------------------------------------------------

    def pod_group(self, pod: Pod) -> GroupInfo | None:
        """The pod's gang, when it has one the group cycle should place (basic groups and
        pods without a group are scheduled one by one)."""
        info = self.tracker.info(pod)
        if isinstance(info, GroupInfo) and info.policy.is_gang:
            return info
        return None

    def unscheduled_members(self, group: GroupInfo) -> list[Pod]:
        return self.tracker.unscheduled(group.key)

    def scheduled_count(self, group: GroupInfo) -> int:
        return self.tracker.scheduled_count(group.key)

    def placement_feasible(self, group: GroupInfo, remaining: int, scheduled: int) -> Status:
        """PlacementFeasible: Unschedulable when minCount can no longer be met, Wait while
        it may still be, Success once it is."""
        min_count = group.min_count
        if remaining + scheduled < min_count:
            return Status(
                Code.UNSCHEDULABLE,
                (
                    f"minCount ({min_count}) cannot be satisfied: "
                    f"{scheduled} scheduled, {remaining} remaining",
                ),
                plugin=NAME,
            )
        if scheduled < min_count:
            return Status(
                Code.WAIT,
                (
                    f"minCount ({min_count}) is not yet satisfied: "
                    f"{scheduled} scheduled, {remaining} remaining",
                ),
                plugin=NAME,
            )
        return Status(Code.SUCCESS)

    # ---- PreEnqueue -------------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> Status | None:
        info = self.tracker.info(pod)
        if info is None:
            return None
        if isinstance(info, str):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (info,))
        if not info.policy.is_gang:
            return None
        if self.tracker.all_count(info.key) < info.min_count:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (MSG_WAITING_TO_APPEAR,))
        return None

    # ---- Reserve ----------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """The member counts as assumed (upstream's manager hears it from AssumePod)."""
        self.tracker.assume(pod)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """A member that will not bind releases its gang: the siblings waiting at Permit
        for the quorum are rejected at once, so their reservations free now rather than
        when their wait times out."""
        self.tracker.forget(pod)
        key = group_key(pod)
        if key is None:
            return
        for uid in self.tracker.assumed(key):
            waiting = self._handle.get_waiting_pod(uid)
            if waiting is not None and waiting.verdict is None:
                waiting.reject(NAME, f"{MSG_SIBLING_UNRESERVED} {pod.name}")

    # ---- Permit -----------------------------------------------------------------------

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        info = self.tracker.info(pod)
        if info is None:
            return None
        if isinstance(info, str):
            return Status(Code.ERROR, (f"failed to get pod group of pod {pod.key}: {info}",))
        if not info.policy.is_gang:
            return None
        key = info.key
        if self.tracker.scheduled_count(key) < info.min_count:
            unscheduled = self.tracker.unscheduled(key)
            if unscheduled and not state.get(POD_GROUP_CYCLE):
                # In a pod-group cycle every pending member is already being tried.
                self._handle.activate(unscheduled)
            return Status.wait(PERMIT_TIMEOUT_SECONDS, MSG_WAITING_AT_PERMIT)
        for uid in self.tracker.assumed(key):
            waiting = self._handle.get_waiting_pod(uid)
            if waiting is not None:
                waiting.allow(NAME)
        return None

    # ---- EnqueueExtensions ------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD), self._after_pod_added
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD), self._after_pod_added
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.SCHEDULING_POD_GROUP, ActionType.ADD),
                self._after_group_added,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.SCHEDULING_POD_GROUP, ActionType.UPDATE),
                self._after_group_updated,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.WORKLOAD, ActionType.ADD), self._after_workload_added
            ),
        ]

    @staticmethod
    def _after_pod_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
        """A new member of the pod's group may complete its minCount."""
        if not isinstance(new, Pod):
            return QueueingHint.QUEUE
        key = group_key(pod)
        same = key is not None and group_key(new) == key
        return QueueingHint.QUEUE if same else QueueingHint.SKIP

    @staticmethod
    def _after_group_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
        ref = pod.spec.scheduling_group
        if (
            ref is None
            or not isinstance(new, SchedulingPodGroup)
            or new.metadata.namespace != pod.namespace
            or new.metadata.name != ref.pod_group_name
        ):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    @staticmethod
    def _after_group_updated(pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Only a lower minCount can let a waiting gang in."""
        if GangScheduling._after_group_added(pod, old, new) is QueueingHint.SKIP:
            return QueueingHint.SKIP
        if not isinstance(old, SchedulingPodGroup) or not isinstance(new, SchedulingPodGroup):
            return QueueingHint.QUEUE
        before, after = old.policy.min_count, new.policy.min_count
        if before is None or after is None:
            return QueueingHint.QUEUE  # "not a gang policy, this is unexpected, enqueuing"
        return QueueingHint.QUEUE if after < before else QueueingHint.SKIP

    @staticmethod
    def _after_workload_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
        ref = pod.spec.scheduling_group
        if ref is None or not ref.workload:
            return QueueingHint.SKIP
        meta = getattr(new, "metadata", None)
        if meta is None or meta.namespace != pod.namespace or meta.name != ref.workload:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    # ---- reporting --------------------------------------------------------------------

    def group_statuses(self) -> dict[str, dict[str, Any]]:
        """Each known gang: its minCount and how many members are live and scheduled."""
        out: dict[str, dict[str, Any]] = {}
        for key in self.tracker.group_keys():
            out[key] = {
                "pods": self.tracker.all_count(key),
                "scheduled": self.tracker.scheduled_count(key),
            }
        return out

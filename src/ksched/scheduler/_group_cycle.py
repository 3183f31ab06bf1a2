"""The pod-group cycle: a gang's members placed in one pass, or none of them.

# pkg/scheduler/schedule_one_podgroup.go (podGroupInfoForPod, podGroupCycle,
# podGroupSchedulingDefaultAlgorithm, applyPodGroupAlgorithmResult) and
# algorithm_podgroup.go (podGroupPotentiallyFeasible), newest upstream; the pod-group
# metrics as podGroupCycle / submitPodGroupAlgorithmResult record them
When the loop pops a member of a gang, the group's other pending members join it. Each
member in turn (priority, then first attempt) runs PreFilter to Score against the cycle's
snapshot and Reserve; a placed member is added to the snapshot only, so the next member
sees it. After each member the group plugin's PlacementFeasible says whether minCount can
still be met; when it cannot, the pass stops. If the gang is feasible, the placed members
are assumed in the cache and go through Permit to their binding cycles; otherwise every
placement is reverted (Unreserve) and, with a PostFilter plugin in the profile, group
preemption looks for victims that make room for the whole gang (``_group_preemption``).
"""

from __future__ import annotations

from typing import Any

import anyio
import attrs

from ..api import Pod
from ..framework import (
    POD_GROUP_CYCLE,
    Code,
    CycleState,
    NodeToStatus,
    PodGroup,
    PodGroupPlugin,
    QueuedPodInfo,
    Status,
)
from ..framework.runtime import Framework
from ._algorithm import NO_NODES, SchedulingAlgorithm
from ._binding_cycle import BindingCycle
from ._diagnosis import FitError
from ._failure import FailureHandler
from ._group_preemption import GroupPlan, GroupPreemption, place_in_snapshot
from ._observer import Attempt, Observer
from ._permit import Placed, permit, single_node_failure
from ._state import Failure, SchedulerState

__all__ = ["GroupCycle"]


@attrs.define(eq=False)
class _Member:
    qpi: QueuedPodInfo
    state: CycleState
    attempt: Attempt
    node: str | None = None
    assumed: Pod | None = None
    failure: Failure | None = None
    tentative: str | None = None
    """The node the member held in a group pass that was reverted."""


class GroupCycle:
    """The pod-group cycle, entered by the scheduling loop for a pod of a gang."""

    def __init__(
        self,
        state: SchedulerState,
        observer: Observer,
        algorithm: SchedulingAlgorithm,
        binding: BindingCycle,
        failures: FailureHandler,
        preemption: GroupPreemption,
    ) -> None:
        self.state = state
        self.observer = observer
        self.algorithm = algorithm
        self.binding = binding
        self.failures = failures
        self.preemption = preemption

    async def schedule_group(
        self, fw: Framework, first: QueuedPodInfo, plugin: PodGroupPlugin, group: PodGroup
    ) -> None:
        """# schedule_one_podgroup.go podGroupCycle"""
        st, observer = self.state, self.observer
        started = st.now()
        members = self._members(fw, first, plugin, group, started)
        try:
            verdict = await self._place_group(fw, plugin, group, members)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._revert(fw, members)
                cancelled = Status(Code.ERROR, ("pod group cycle cancelled",))
                for m in members:
                    await self.failures.handle(fw, m.qpi, Failure(cancelled, clear_nomination=True))
            raise
        observer.group_algorithm_done(started)
        if verdict.is_success:
            result = await self._submit_group(fw, plugin, group, members)
        else:
            result = await self._reject_group(fw, plugin, group, members, verdict)
        observer.group_outcome(result, fw.profile_name, started)

    def _members(
        self,
        fw: Framework,
        first: QueuedPodInfo,
        plugin: PodGroupPlugin,
        group: PodGroup,
        started: float,
    ) -> list[_Member]:
        """The popped pod and the group's other pending members, each with its attempt
        begun, in podGroupInfoForPod's order (priority, then the earliest first attempt)."""
        st = self.state
        others = [
            p
            for p in plugin.unscheduled_members(group)
            if p.uid != first.pod.uid
            and st.framework_for(p) is fw
            and not p.is_terminating
            and not st.cache.is_assumed(p.uid)
        ]
        queued = [first, *st.queue.pop_specific(others)]
        queued.sort(
            key=lambda q: (-q.pod.priority, q.initial_attempt_timestamp or q.timestamp, q.pod.key)
        )
        st.cycle = st.queue.scheduling_cycle
        members: list[_Member] = []
        for qpi in queued:
            pod = qpi.pod
            record = st.record(pod.uid)
            attempt = self.observer.begin(pod, qpi.attempts, fw.profile_name, record, started)
            state = CycleState.for_attempt(self.observer.metrics)
            state.write(POD_GROUP_CYCLE, True)
            members.append(_Member(qpi, state, attempt))
        return members

    async def _place_group(
        self, fw: Framework, plugin: PodGroupPlugin, group: PodGroup, members: list[_Member]
    ) -> Status:
        """Place each member in the snapshot; the group plugin's last verdict."""
        st = self.state
        st.cache.update_snapshot(st.snapshot)
        if len(st.snapshot) == 0:
            return NO_NODES
        scheduled = plugin.scheduled_count(group)
        remaining = len(members)
        verdict = plugin.placement_feasible(group, remaining, scheduled)
        if verdict.code is Code.UNSCHEDULABLE or verdict.code is Code.ERROR:
            return verdict
        batching, st.opportunistic_batching = st.opportunistic_batching, False
        try:
            for m in members:
                await self._place_member(fw, m)
                remaining -= 1
                if m.node is not None:
                    scheduled += 1
                elif m.failure is not None and not m.failure.status.is_rejected:
                    message = "failed to schedule other pod from a pod group: "
                    return Status(Code.ERROR, (message + m.failure.status.message,))
                verdict = plugin.placement_feasible(group, remaining, scheduled)
                if verdict.code is Code.UNSCHEDULABLE or verdict.code is Code.ERROR:
                    return verdict
        finally:
            st.opportunistic_batching = batching
        if verdict.is_success and not any(m.node for m in members):
            return Status(Code.UNSCHEDULABLE, ("no pods were schedulable",))
        return verdict

    async def _place_member(self, fw: Framework, m: _Member) -> None:
        pod = m.qpi.pod
        attempt = m.attempt
        attempt.algorithm_started()
        found = await self.algorithm.schedule_pod(fw, m.state, pod, attempt)
        if attempt.report is not None:
            st = self.state
            self.observer.explained_nodes(st.record(pod.uid), attempt.report, st.snapshot.list())
        if isinstance(found, FitError):
            status = Status(Code.UNSCHEDULABLE, (found.message(),))
            m.failure = Failure(status, fit_error=found, clear_nomination=True)
            return
        if isinstance(found, Status):
            m.failure = Failure(found, clear_nomination=True)
            return
        assumed = place_in_snapshot(self.state, pod, found)
        status = await fw.run_reserve(m.state, assumed, found)
        if not status.is_success:
            await fw.run_unreserve(m.state, assumed, found)
            m.failure = single_node_failure(pod, found, status)
            return
        m.node, m.assumed = found, assumed

    async def _revert(self, fw: Framework, members: list[_Member]) -> None:
        """Unreserve every placed member, last first; the snapshot overlay is dropped at
        the next refresh."""
        for m in reversed(members):
            if m.assumed is not None and m.node is not None:
                with anyio.CancelScope(shield=True):
                    await fw.run_unreserve(m.state, m.assumed, m.node)
                m.tentative, m.node = m.node, None

    async def _submit_group(
        self, fw: Framework, plugin: PodGroupPlugin, group: PodGroup, members: list[_Member]
    ) -> str:
        """The gang fits: assume the placed members and run Permit for each; if Permit
        leaves minCount of them, start their binding cycles, else release them all.
        The attempt's result for the pod-group metrics.

        # schedule_one_podgroup.go submitPodGroupAlgorithmResult
        """
        passed = await self._permit_members(fw, members)
        scheduled = plugin.scheduled_count(group)
        if passed and scheduled < group.min_count:
            await self._release(fw, passed)
            verdict = plugin.placement_feasible(group, 0, scheduled)
            await self._fail_group(fw, group, members, verdict, None)
            return "unschedulable" if verdict.is_rejected or verdict.is_success else "error"
        decision = _decision(group, members, "Scheduled", "")
        for m in members:
            if m.attempt.report is not None:
                m.attempt.report.group = decision
            if m.node is None:
                assert m.failure is not None
                await self._fail_member(fw, m, m.failure)
        for m, placed in passed:
            self.binding.start_task(fw, m.state, m.qpi, placed, m.attempt)
        return "scheduled" if passed else "unschedulable"

    async def _permit_members(
        self, fw: Framework, members: list[_Member]
    ) -> list[tuple[_Member, Placed]]:
        """Assume each placed member and run Permit; the members that passed."""
        st = self.state
        passed: list[tuple[_Member, Placed]] = []
        for m in members:
            pod = m.qpi.pod
            if m.node is None or m.assumed is None:
                continue
            st.cache.assume_pod(m.assumed)
            st.queue.delete_nominated_pod_if_exists(pod)
            m.attempt.decided(fw.plugins.values(), m.state, m.node)
            m.attempt.mark()
            done = await permit(st, self.observer, fw, m.state, pod, m.assumed, m.node, m.attempt)
            if isinstance(done, Failure):
                m.tentative, m.node, m.failure = m.node, None, done
                continue
            passed.append((m, done))
        return passed

    async def _release(self, fw: Framework, passed: list[tuple[_Member, Placed]]) -> None:
        """A member turned down at Permit took the gang below minCount: the others are
        released now (no binding started), not after waiting at Permit."""
        st = self.state
        for m, placed in passed:
            if placed.waiting is not None:
                st.waiting_pods.remove(placed.assumed.uid)
            with anyio.CancelScope(shield=True):
                await fw.run_unreserve(m.state, placed.assumed, placed.node_name)
            st.cache.forget_pod(placed.assumed)
            m.tentative, m.node = placed.node_name, None

    async def _reject_group(
        self,
        fw: Framework,
        plugin: PodGroupPlugin,
        group: PodGroup,
        members: list[_Member],
        verdict: Status,
    ) -> str:
        """The gang does not fit: revert, plan group preemption, requeue every member."""
        await self._revert(fw, members)
        plan = None
        if verdict.is_rejected and fw.has_post_filter_plugins:
            pods = [m.qpi.pod for m in members]
            plan = await self.preemption.preempt_for_group(fw, plugin, group, pods)
        await self._fail_group(fw, group, members, verdict, plan)
        if not verdict.is_rejected:
            return "error"
        return "waiting_on_preemption" if plan is not None and plan.nominations else "unschedulable"

    async def _fail_group(
        self,
        fw: Framework,
        group: PodGroup,
        members: list[_Member],
        verdict: Status,
        plan: GroupPlan | None,
    ) -> None:
        """Every member back to the queue: its own FitError when it found no node, the
        group's reason when it had one (upstream podGroupFitError)."""
        plugins = {verdict.plugin} if verdict.plugin else set()
        for m in members:
            if m.failure is not None and m.failure.fit_error is not None:
                plugins |= m.failure.fit_error.unschedulable_plugins
        plugins.discard("")
        message = verdict.message or "pod group is unschedulable"
        nominations: dict[str, str] = plan.nominations if plan is not None else {}
        decision = _decision(group, members, "Unschedulable", message)
        if plan is not None:
            decision["preemption"] = plan.explain()
        for m in members:
            if m.attempt.report is not None:
                m.attempt.report.group = decision
            failure = self._member_failure(m, verdict, message, plugins)
            uid = m.qpi.pod.uid
            if uid in nominations:
                failure.nominated = nominations[uid]
                failure.clear_nomination = False
            await self._fail_member(fw, m, failure)

    def _member_failure(
        self, m: _Member, verdict: Status, message: str, plugins: set[str]
    ) -> Failure:
        own = m.failure
        if own is not None and own.fit_error is not None:
            own.fit_error.unschedulable_plugins |= plugins
            return own
        if verdict.code is Code.ERROR:
            return Failure(verdict, clear_nomination=True)
        fit = FitError(
            num_all_nodes=len(self.state.snapshot),
            statuses=NodeToStatus(Status(Code.UNSCHEDULABLE, (message,))),
            unschedulable_plugins=set(plugins),
        )
        code = verdict.code if verdict.is_rejected else Code.UNSCHEDULABLE
        return Failure(Status(code, (message,)), fit_error=fit, clear_nomination=True)

    async def _fail_member(self, fw: Framework, m: _Member, failure: Failure) -> None:
        outcome = "unschedulable" if failure.status.is_rejected else "error"
        self.observer.outcome(outcome, fw.profile_name, m.attempt)
        await self.failures.handle(fw, m.qpi, failure)


def _decision(
    group: PodGroup, members: list[_Member], outcome: str, message: str
) -> dict[str, Any]:
    """What ``--explain`` shows of the group decision."""
    placed = {m.qpi.pod.key: m.node or m.tentative for m in members if m.node or m.tentative}
    out: dict[str, Any] = {
        "podGroup": group.name,
        "minCount": group.min_count,
        "members": [m.qpi.pod.key for m in members],
        "placed": placed,
        "outcome": outcome,
    }
    if message:
        out["message"] = message
    return out

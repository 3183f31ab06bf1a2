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
    WaitingPod,
)
from ..framework.runtime import Framework
from ._base import Failure
from ._diagnosis import AttemptReport, FitError, plugin_decisions
from ._group_preemption import GroupPlan, GroupPreemption
from ._scheduling_cycle import SchedulingCycle

__all__ = ["GroupCycle"]


@attrs.define(eq=False)
class _Member:
    qpi: QueuedPodInfo
    state: CycleState
    report: AttemptReport | None
    node: str | None = None
    assumed: Pod | None = None
    failure: Failure | None = None
    tentative: str | None = None
    """The node the member held in a group pass that was reverted."""


class GroupCycle(SchedulingCycle, GroupPreemption):
    """Adds the pod-group cycle to the serial loop."""

    async def _schedule_group(
        self, fw: Framework, first: QueuedPodInfo, plugin: PodGroupPlugin, group: PodGroup
    ) -> None:
        others = [
            p
            for p in plugin.unscheduled_members(group)
            if p.uid != first.pod.uid
            and self._framework_for(p) is fw
            and not p.is_terminating
            and not self.cache.is_assumed(p.uid)
        ]
        queued = [first, *self.queue.pop_specific(others)]
        # podGroupInfoForPod: priority first, then the earliest first attempt.
        queued.sort(
            key=lambda q: (-q.pod.priority, q.initial_attempt_timestamp or q.timestamp, q.pod.key)
        )
        self._cycle = self.queue.scheduling_cycle
        self._profile_name = fw.profile_name
        started = self._now()
        members: list[_Member] = []
        for qpi in queued:
            self._begin_attempt(qpi, started)
            state = CycleState.for_attempt(self.metrics)
            state.write(POD_GROUP_CYCLE, True)
            members.append(_Member(qpi, state, self._report_for(qpi.pod)))
        try:
            verdict = await self._place_group(fw, plugin, group, members)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._revert(fw, members)
                cancelled = Status(Code.ERROR, ("pod group cycle cancelled",))
                for m in members:
                    await self._handle_failure(fw, m.qpi, Failure(cancelled, clear_nomination=True))
            raise
        if self.timings:
            self.attempt_seconds += self._now() - started
        if self.metrics is not None:
            self.metrics.pod_group_algorithm(self._now() - started)
        if verdict.is_success:
            result = await self._submit_group(fw, plugin, group, members, started)
        else:
            await self._revert(fw, members)
            plan = None
            if verdict.is_rejected and fw.has_post_filter_plugins:
                plan = await self.preempt_for_group(fw, plugin, group, members)
            await self._fail_group(fw, group, members, verdict, started, plan)
            result = (
                "error"
                if not verdict.is_rejected
                else "waiting_on_preemption"
                if plan is not None and plan.nominations
                else "unschedulable"
            )
        if self.metrics is not None:
            self.metrics.pod_group_attempt(result, fw.profile_name, self._now() - started)

    async def _place_group(
        self, fw: Framework, plugin: PodGroupPlugin, group: PodGroup, members: list[_Member]
    ) -> Status:
        """Place each member in the snapshot; the group plugin's last verdict."""
        self.cache.update_snapshot(self.snapshot)
        if len(self.snapshot) == 0:
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("no nodes available to schedule pods",)
            )
        scheduled = plugin.scheduled_count(group)
        remaining = len(members)
        verdict = plugin.placement_feasible(group, remaining, scheduled)
        if verdict.code is Code.UNSCHEDULABLE or verdict.code is Code.ERROR:
            return verdict
        batching, self.opportunistic_batching = self.opportunistic_batching, False
        try:
            for m in members:
                await self._place_member(fw, m)
                remaining -= 1
                if m.node is not None:
                    scheduled += 1
                elif m.failure is not None and not m.failure.status.is_rejected:
                    return Status(
                        Code.ERROR,
                        (
                            "failed to schedule other pod from a pod group: "
                            + m.failure.status.message,
                        ),
                    )
                verdict = plugin.placement_feasible(group, remaining, scheduled)
                if verdict.code is Code.UNSCHEDULABLE or verdict.code is Code.ERROR:
                    return verdict
        finally:
            self.opportunistic_batching = batching
        if verdict.is_success and not any(m.node for m in members):
            return Status(Code.UNSCHEDULABLE, ("no pods were schedulable",))
        return verdict

    async def _place_member(self, fw: Framework, m: _Member) -> None:
        pod = m.qpi.pod
        found = await self._schedule_pod(fw, m.state, pod, m.report)
        if m.report is not None:
            self._record_attempt(pod, m.report)
        if isinstance(found, FitError):
            m.failure = Failure(
                Status(Code.UNSCHEDULABLE, (found.message(),)),
                fit_error=found,
                clear_nomination=True,
            )
            return
        if isinstance(found, Status):
            m.failure = Failure(found, clear_nomination=True)
            return
        assumed = self._place_in_snapshot(pod, found)
        status = await fw.run_reserve(m.state, assumed, found)
        if not status.is_success:
            await fw.run_unreserve(m.state, assumed, found)
            m.failure = self._single_node_failure(pod, found, status)
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
        self,
        fw: Framework,
        plugin: PodGroupPlugin,
        group: PodGroup,
        members: list[_Member],
        started: float,
    ) -> str:
        """The gang fits: assume the placed members and run Permit for each; if Permit
        leaves minCount of them, start their binding cycles, else release them all.
        The attempt's result for the pod-group metrics."""
        passed: list[tuple[_Member, Pod, str, WaitingPod | None]] = []
        for m in members:
            pod = m.qpi.pod
            if m.node is None or m.assumed is None:
                continue
            self.cache.assume_pod(m.assumed)
            self.queue.delete_nominated_pod_if_exists(pod)
            if m.report is not None:
                m.report.decisions.update(plugin_decisions(fw.plugins.values(), m.state, m.node))
            t = self._now() if self._measure else 0.0
            done = await self._permit(fw, m.state, pod, m.assumed, m.node, t)
            if isinstance(done, Failure):
                m.tentative, m.node, m.failure = m.node, None, done
                continue
            passed.append((m, *done))
        scheduled = plugin.scheduled_count(group)
        if passed and scheduled < group.min_count:
            # A member turned down at Permit took the gang below minCount: the others are
            # released now (no binding started), not after waiting at Permit.
            for m, assumed, node_name, waiting in passed:
                if waiting is not None:
                    self.waiting_pods.remove(assumed.uid)
                with anyio.CancelScope(shield=True):
                    await fw.run_unreserve(m.state, assumed, node_name)
                self.cache.forget_pod(assumed)
                m.tentative, m.node = node_name, None
            verdict = plugin.placement_feasible(group, 0, scheduled)
            await self._fail_group(fw, group, members, verdict, started, None)
            return "unschedulable" if verdict.is_rejected or verdict.is_success else "error"
        decision = _decision(group, members, "Scheduled", "")
        for m in members:
            if m.report is not None:
                m.report.group = decision
            if m.node is None:
                assert m.failure is not None
                await self._fail_member(fw, m, m.failure, started)
        for m, assumed, node_name, waiting in passed:
            self._binding_tasks += 1
            assert self._binding_tg is not None
            self._binding_tg.start_soon(
                self._binding_cycle, fw, m.state, m.qpi, assumed, node_name, waiting, started
            )
        return "scheduled" if passed else "unschedulable"

    async def _fail_group(
        self,
        fw: Framework,
        group: PodGroup,
        members: list[_Member],
        verdict: Status,
        started: float,
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
            if m.report is not None:
                m.report.group = decision
            uid = m.qpi.pod.uid
            own = m.failure
            if own is not None and own.fit_error is not None:
                failure = own
                own.fit_error.unschedulable_plugins |= plugins
            elif verdict.code is Code.ERROR:
                failure = Failure(verdict, clear_nomination=True)
            else:
                fit = FitError(
                    num_all_nodes=len(self.snapshot),
                    statuses=NodeToStatus(Status(Code.UNSCHEDULABLE, (message,))),
                    unschedulable_plugins=set(plugins),
                )
                failure = Failure(
                    Status(verdict.code if verdict.is_rejected else Code.UNSCHEDULABLE, (message,)),
                    fit_error=fit,
                    clear_nomination=True,
                )
            if uid in nominations:
                failure.nominated = nominations[uid]
                failure.clear_nomination = False
            await self._fail_member(fw, m, failure, started)

    async def _fail_member(
        self, fw: Framework, m: _Member, failure: Failure, started: float
    ) -> None:
        if self.metrics is not None:
            outcome = "unschedulable" if failure.status.is_rejected else "error"
            self.metrics.attempt(outcome, fw.profile_name, self._now() - started)
        await self._handle_failure(fw, m.qpi, failure)


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

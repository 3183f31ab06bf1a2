"""The scheduling cycle: one pod at a time, from PreFilter to Permit.

# pkg/scheduler/schedule_one.go (ScheduleOne, schedulingCycle)
The loop pops a pod, runs the cycle against one snapshot, assumes the pod on the chosen
node, runs Reserve and Permit, and hands the pod to its binding cycle without waiting
for it. A pod of a gang goes to the pod-group cycle instead.
"""

from __future__ import annotations

import anyio

from ..api import Pod
from ..api._assign import assigned
from ..framework import Code, CycleState, QueuedPodInfo, Status
from ..framework.runtime import Framework
from ._algorithm import NO_NODES, SchedulingAlgorithm
from ._binding_cycle import BindingCycle
from ._diagnosis import FitError
from ._failure import FailureHandler
from ._group_cycle import GroupCycle
from ._observer import Attempt, Observer
from ._permit import Placed, permit, single_node_failure
from ._state import Failure, SchedulerState, is_cancel

__all__ = ["SchedulingCycle"]


class SchedulingCycle:
    """The serial scheduling loop and one pod's scheduling cycle."""

    def __init__(
        self,
        state: SchedulerState,
        observer: Observer,
        algorithm: SchedulingAlgorithm,
        binding: BindingCycle,
        failures: FailureHandler,
        groups: GroupCycle,
    ) -> None:
        self.state = state
        self.observer = observer
        self.algorithm = algorithm
        self.binding = binding
        self.failures = failures
        self.groups = groups

    async def run(self) -> None:
        """Schedule pods until cancelled (upstream's ``wait.UntilWithContext(ScheduleOne)``)."""
        queue = self.state.queue
        while True:
            # Other tasks run before each pod while binding cycles are in flight, else at
            # least every few pods (a loop pass per pod costs a tenth of a plain cycle).
            qpi = await queue.pop(eager=not self.state.binding_tasks)
            await self.schedule_one(qpi)

    async def schedule_one(self, qpi: QueuedPodInfo) -> None:
        """One pod: its scheduling cycle, then its binding cycle or its failure handling.

        # schedule_one.go ScheduleOne
        """
        st, pod = self.state, qpi.pod
        fw = st.framework_for(pod)
        if fw is None or pod.is_terminating or st.cache.is_assumed(pod.uid):
            st.queue.done(pod.uid)
            return
        plugin = fw.group_plugin
        group = plugin.pod_group(pod) if plugin is not None else None
        if plugin is not None and group is not None:
            await self.groups.schedule_group(fw, qpi, plugin, group)
            return
        st.cycle = st.queue.scheduling_cycle
        attempt = self.observer.begin(pod, qpi.attempts, fw.profile_name, st.record(pod.uid))
        state = CycleState.for_attempt(self.observer.metrics)
        result = await self._guarded_cycle(fw, state, qpi, attempt)
        self.observer.attempt_ended(attempt)
        if isinstance(result, Failure):
            outcome = "unschedulable" if result.status.is_rejected else "error"
            self.observer.outcome(outcome, fw.profile_name, attempt)
            await self.failures.handle(fw, qpi, result)
            return
        await self.binding.start(fw, state, qpi, result, attempt)

    async def _guarded_cycle(
        self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, attempt: Attempt
    ) -> Failure | Placed:
        """The scheduling cycle, its faults and timeout turned into a Failure; when it is
        cancelled, the pod is requeued (shielded) before the cancellation goes on."""
        timeout = self.state.plugin_timeout
        try:
            if fw.filters_async or fw.scores_async:
                with anyio.fail_after(timeout):
                    return await self.scheduling_cycle(fw, state, qpi, attempt)
            # Plain def plugins cannot hang on the loop: no cancel scope per pod.
            return await self.scheduling_cycle(fw, state, qpi, attempt)
        except TimeoutError:
            message = f"scheduling cycle timed out after {timeout}s"
            return Failure(Status(Code.ERROR, (message,)))
        except Exception as exc:
            # A fault the framework did not turn into a Status: the pod is retried with
            # backoff and the loop goes on.
            message = f"scheduling cycle failed: {type(exc).__name__}: {exc}"
            return Failure(Status(Code.ERROR, (message,)), clear_nomination=True)
        except BaseException as exc:
            if is_cancel(exc):
                with anyio.CancelScope(shield=True):
                    cancelled = Status(Code.ERROR, ("scheduling cycle cancelled",))
                    await self.failures.handle(fw, qpi, Failure(cancelled, clear_nomination=True))
            raise

    async def scheduling_cycle(
        self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, attempt: Attempt
    ) -> Failure | Placed:
        """Find a node (or run PostFilter when none fits), assume the pod there, Reserve
        and Permit. # schedule_one.go schedulingCycle"""
        st, pod = self.state, qpi.pod
        st.cache.update_snapshot(st.snapshot)
        if len(st.snapshot) == 0:
            return Failure(NO_NODES, clear_nomination=True)
        attempt.algorithm_started()
        found = await self.algorithm.schedule_pod(fw, state, pod, attempt)
        attempt.algorithm_done()
        if attempt.report is not None:
            self.observer.explained_nodes(st.record(pod.uid), attempt.report, st.snapshot.list())
        if isinstance(found, FitError):
            return await self._post_filter(fw, state, pod, found, attempt)
        if isinstance(found, Status):
            return Failure(found, clear_nomination=True)
        assumed = assigned(pod, found)
        st.cache.assume_pod(assumed, qpi.pod_info.for_copy(assumed))
        st.queue.delete_nominated_pod_if_exists(pod)
        try:
            placed = await self.reserve_and_permit(fw, state, pod, assumed, found, attempt)
            if not isinstance(placed, Failure):
                attempt.decided(fw.plugins.values(), state, found)
            return placed
        except BaseException:
            with anyio.CancelScope(shield=True):
                if st.cache.is_assumed(assumed.uid) and st.waiting_pods.get(assumed.uid) is None:
                    await fw.run_unreserve(state, assumed, found)
                    st.cache.forget_pod(assumed)
            raise

    async def _post_filter(
        self, fw: Framework, state: CycleState, pod: Pod, fit: FitError, attempt: Attempt
    ) -> Failure:
        """No node fits: PostFilter (preemption) may nominate one; the attempt fails."""
        nominated: str | None = None
        clear = True
        if fw.has_post_filter_plugins:
            result, status = await fw.run_post_filter(state, pod, fit.statuses)
            attempt.point("PostFilter", status)
            fit.post_filter_message = status.message
            # No result keeps the current nomination; an empty one clears it.
            clear = result is not None and not result.nominated_node_name
            if result is not None and result.nominated_node_name:
                nominated = result.nominated_node_name
        return Failure(
            Status(Code.UNSCHEDULABLE, (fit.message(),)),
            fit_error=fit,
            nominated=nominated,
            clear_nomination=clear,
        )

    async def reserve_and_permit(
        self,
        fw: Framework,
        state: CycleState,
        pod: Pod,
        assumed: Pod,
        node_name: str,
        attempt: Attempt,
    ) -> Failure | Placed:
        """Reserve, then Permit, for a pod assumed on ``node_name``; a failure of either
        unreserves and forgets it."""
        attempt.mark()
        status = await fw.run_reserve(state, assumed, node_name)
        attempt.point("Reserve", status)
        if not status.is_success:
            await fw.run_unreserve(state, assumed, node_name)
            self.state.cache.forget_pod(assumed)
            return single_node_failure(pod, node_name, status)
        return await permit(self.state, self.observer, fw, state, pod, assumed, node_name, attempt)

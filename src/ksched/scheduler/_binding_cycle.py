"""The binding cycle: from WaitOnPermit to PostBind, one task per pod where it can wait.

# pkg/scheduler/schedule_one.go bindingCycle, handleBindingCycleError; a Bind error
# reads "binding rejected: running Bind plugin "<name>": <error>" and counts as an
# attempt with result "error" (metrics.PodScheduleError).
Each cycle that could wait (a Permit wait, an ``async`` PreBind, Bind or PostBind plugin,
an extender) runs in the scheduler's binding task group, so the scheduling loop never waits
for it; one whose plugins are all plain ``def`` cannot wait and runs in the scheduling loop
right away, as the task would have. On any failure (Permit rejection or timeout, PreBind
or Bind error, cancellation) Unreserve runs shielded, the assumed pod is forgotten and the
pod is requeued.
"""

from __future__ import annotations

import contextlib
import logging

import anyio
import anyio.lowlevel

from ..api import Pod
from ..framework import Code, CycleState, NodeToStatus, QueuedPodInfo, Status, WaitingPod
from ..framework.runtime import ASSIGNED_POD_DELETE, Framework
from ._diagnosis import FitError
from ._extenders import bind_by_extender
from ._failure import FailureHandler
from ._observer import Attempt, Observer
from ._permit import Placed
from ._state import Failure, SchedulerState, is_cancel

__all__ = ["BindingCycle"]

bind_logger = logging.getLogger("ksched.scheduler.binding")


class BindingCycle:
    """Binding cycles, started by the scheduling cycle (or the pod-group cycle) after Permit."""

    def __init__(self, state: SchedulerState, observer: Observer, failures: FailureHandler) -> None:
        self.state = state
        self.observer = observer
        self.failures = failures

    async def start(
        self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, placed: Placed, attempt: Attempt
    ) -> None:
        """PreBindPreFlight, then the binding cycle: here when nothing in it can wait, else
        as a task of its own (which runs before the next pod is taken)."""
        fw.run_pre_bind_pre_flights(state, placed.assumed, placed.node_name)
        if placed.waiting is None and not self.state.extenders and fw.binds_inline(state):
            self.state.binding_tasks += 1
            await self.run(fw, state, qpi, placed, attempt, inline=True)
            return
        self.start_task(fw, state, qpi, placed, attempt)
        await anyio.lowlevel.checkpoint()  # let the new binding cycle start first

    def start_task(
        self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, placed: Placed, attempt: Attempt
    ) -> None:
        """Start the binding cycle as a task in the scheduler's binding task group."""
        st = self.state
        assert st.binding_tg is not None
        st.binding_tasks += 1
        st.binding_tg.start_soon(self.run, fw, state, qpi, placed, attempt)

    async def run(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        placed: Placed,
        attempt: Attempt,
        inline: bool = False,
    ) -> None:
        """One pod's binding cycle (counted in ``binding_tasks`` by the caller).

        ``inline``: every plugin of this cycle is a plain ``def`` (``Framework.binds_inline``)
        and there is no Permit wait, so nothing can hang: no timeout scope.
        # schedule_one.go bindingCycle
        """
        assumed, node_name = placed.assumed, placed.node_name
        try:
            if placed.waiting is not None and not await self._wait_on_permit(
                fw, state, qpi, placed, placed.waiting
            ):
                return
            with (
                contextlib.nullcontext() if inline else anyio.fail_after(self.state.plugin_timeout)
            ):
                status = await self._pre_bind_and_bind(fw, state, assumed, node_name, attempt)
            if not status.is_success:
                if status.code is Code.SKIP:
                    status = Status(Code.ERROR, ("no bind plugin bound the pod",))
                result = "unschedulable" if status.is_rejected else "error"
                self.observer.outcome(result, fw.profile_name, attempt)
                await self.failed(fw, state, qpi, placed, status, None)
                return
            self._bound(fw, qpi, assumed, node_name, attempt)
            await fw.run_post_bind(state, assumed, node_name)
            attempt.point("PostBind")
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                message = (
                    "binding cycle cancelled" if is_cancel(exc) else f"binding failed: {exc!r}"
                )
                if not is_cancel(exc):
                    self.observer.outcome("error", fw.profile_name, attempt)
                await self.failed(fw, state, qpi, placed, Status(Code.ERROR, (message,)), None)
            if is_cancel(exc) or not isinstance(exc, Exception):
                raise
        finally:
            self.state.waiting_pods.remove(assumed.uid)
            self.state.binding_tasks -= 1

    async def _wait_on_permit(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        placed: Placed,
        waiting: WaitingPod,
    ) -> bool:
        """WaitOnPermit: whether the pod was allowed; a rejection or timeout has been
        handled (unreserved, requeued) when it returns False."""
        observer, assumed, node_name = self.observer, placed.assumed, placed.node_name
        waited = observer.now()
        status = await waiting.wait()
        observer.permit_waited(status, observer.now() - waited)
        self.state.waiting_pods.remove(assumed.uid)
        if status.is_success:
            observer.emit("PermitAllowed", assumed, node=node_name)
            return True
        observer.emit("PermitRejected", assumed, node=node_name, message=status.message)
        fit: FitError | None = None
        if status.is_rejected:
            statuses = NodeToStatus()
            statuses.set(node_name, status)
            plugins = {status.plugin} - {""}
            fit = FitError(num_all_nodes=1, statuses=statuses, unschedulable_plugins=plugins)
            status = Status(status.code, (fit.message(),), plugin=status.plugin)
        await self.failed(fw, state, qpi, placed, status, fit)
        return False

    async def _pre_bind_and_bind(
        self, fw: Framework, state: CycleState, assumed: Pod, node_name: str, attempt: Attempt
    ) -> Status:
        """PreBind, then the binder extender or the Bind plugins; the cache learns the
        binding is done either way."""
        attempt.mark()
        status = await fw.run_pre_bind(state, assumed, node_name)
        attempt.point("PreBind", status)
        if not status.is_success:
            return status
        extenders = self.state.extenders
        by_extender = await bind_by_extender(extenders, assumed, node_name) if extenders else None
        status = (
            by_extender if by_extender is not None else await fw.run_bind(state, assumed, node_name)
        )
        if status.code is Code.ERROR:  # schedule_one.go bind: "binding rejected: %w"
            named = status.plugin and not status.message.startswith("running ")
            where = f'running Bind plugin "{status.plugin}": ' if named else ""
            status = Status(
                Code.ERROR, (f"binding rejected: {where}{status.message}",), plugin=status.plugin
            )
        self.state.cache.finish_binding(assumed)
        attempt.point("Bind", status)
        return status

    def _bound(
        self, fw: Framework, qpi: QueuedPodInfo, assumed: Pod, node_name: str, attempt: Attempt
    ) -> None:
        """The pod is bound: out of the queue, announced, counted, its Scheduled Event."""
        self.state.queue.done(assumed.uid)
        observer = self.observer
        observer.emit("Bound", assumed, node=node_name)
        if bind_logger.isEnabledFor(logging.INFO):
            pairs = {"pod": assumed.key, "node": node_name}
            bind_logger.info("Successfully bound pod to node", extra={"kv": pairs})
        observer.scheduled(qpi, fw.profile_name, attempt)
        if observer.events is not None:
            note = f"Successfully assigned {assumed.namespace}/{assumed.name} to {node_name}"
            observer.events.record_event(assumed, None, "Normal", "Scheduled", "Binding", note)

    async def failed(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        placed: Placed,
        status: Status,
        fit: FitError | None,
    ) -> None:
        """Undo the assumption and requeue the pod. # schedule_one.go handleBindingCycleError"""
        st, assumed, node_name = self.state, placed.assumed, placed.node_name
        with anyio.CancelScope(shield=True):
            current = st.cluster.get_pod(assumed.key)
            if current is not None and current.spec.node_name == node_name:
                return  # the bind went through after all
            # Bound elsewhere (another binder won: 409) is a failure like any other: logged,
            # a FailedScheduling Event, counted; the handler sees it bound and drops it.
            # (The watch may have shown that binding already: the cache then holds the pod
            # where it is, no longer assumed.)
            assumed_now = st.cache.is_assumed(assumed.uid)
            elsewhere = (
                current is not None and current.uid == assumed.uid and bool(current.spec.node_name)
            )
            if not assumed_now and not elsewhere:
                return
            await fw.run_unreserve(state, assumed, node_name)
            if assumed_now:
                st.cache.forget_pod(assumed)
            if status.is_rejected:
                uid = assumed.uid
                failure = Failure(status, fit_error=fit, clear_nomination=True)
                await self.failures.handle(fw, qpi, failure)
                st.queue.move_all_to_active_or_backoff(
                    ASSIGNED_POD_DELETE, assumed, None, lambda p: p.uid != uid
                )
            else:
                st.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, assumed, None)
                await self.failures.handle(fw, qpi, Failure(status, clear_nomination=True))

"""The binding cycle: from WaitOnPermit to PostBind, one task per pod where it can wait.

# pkg/scheduler/schedule_one.go bindingCycle, handleBindingCycleError
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

from ..api import Pod
from ..framework import Code, CycleState, NodeToStatus, QueuedPodInfo, Status, WaitingPod
from ..framework.runtime import ASSIGNED_POD_DELETE, Framework
from ._base import Failure, is_cancel
from ._diagnosis import FitError
from ._extenders import bind_by_extender
from ._failure import FailureHandling

__all__ = ["BindingCycle"]

bind_logger = logging.getLogger("ksched.scheduler.binding")


class BindingCycle(FailureHandling):
    """Binding cycles, started by the scheduling cycle after Permit."""

    async def _binding_cycle(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed: Pod,
        node_name: str,
        waiting: WaitingPod | None,
        started: float = 0.0,
        inline: bool = False,
    ) -> None:
        """One pod's binding cycle; ``started`` is when its scheduling attempt began.

        ``inline``: every plugin of this cycle is a plain ``def`` (``Framework.binds_inline``)
        and there is no Permit wait, so nothing can hang: no timeout scope."""
        status: Status | None = None
        metrics = self.metrics
        profile = fw.profile_name
        try:
            if waiting is not None:
                waited = self._now() if metrics is not None else 0.0
                status = await waiting.wait()
                if metrics is not None:
                    metrics.permit_wait(status.code.label, self._now() - waited)
                self.waiting_pods.remove(assumed.uid)
                if not status.is_success:
                    kind = "PermitRejected"
                    self._emit(kind, assumed, node=node_name, message=status.message)
                    statuses = NodeToStatus()
                    statuses.set(node_name, status)
                    if status.is_rejected:
                        fit = FitError(
                            num_all_nodes=1,
                            statuses=statuses,
                            unschedulable_plugins={status.plugin} - {""},
                        )
                        status = Status(status.code, (fit.message(),), plugin=status.plugin)
                        await self._binding_failed(fw, state, qpi, assumed, node_name, status, fit)
                    else:
                        await self._binding_failed(fw, state, qpi, assumed, node_name, status, None)
                    return
                self._emit("PermitAllowed", assumed, node=node_name)
            t = self._now() if self._measure else 0.0
            with contextlib.nullcontext() if inline else anyio.fail_after(self.plugin_timeout):
                status = await fw.run_pre_bind(state, assumed, node_name)
                if self._measure:
                    t = self._spent("PreBind", t, status, profile)
                if status.is_success:
                    by_extender = (
                        await bind_by_extender(self.extenders, assumed, node_name)
                        if self.extenders
                        else None
                    )
                    if by_extender is not None:
                        status = by_extender
                    else:
                        status = await fw.run_bind(state, assumed, node_name)
                    self.cache.finish_binding(assumed)
                    if self._measure:
                        t = self._spent("Bind", t, status, profile)
            if not status.is_success:
                if status.code is Code.SKIP:
                    status = Status(Code.ERROR, ("no bind plugin bound the pod",))
                await self._binding_failed(fw, state, qpi, assumed, node_name, status, None)
                return
            self.queue.done(assumed.uid)
            self._emit("Bound", assumed, node=node_name)
            if bind_logger.isEnabledFor(logging.INFO):
                pairs = {"pod": assumed.key, "node": node_name}
                bind_logger.info("Successfully bound pod to node", extra={"kv": pairs})
            if metrics is not None:
                # schedule_one.go bindingCycle: PodScheduled, attempts, the SLI duration
                now = self._now()
                metrics.attempt("scheduled", profile, now - started)
                first = qpi.initial_attempt_timestamp
                metrics.scheduled(qpi.attempts, now - (first if first is not None else started))
            if self._record_event is not None:
                self._record_event(
                    assumed,
                    None,
                    "Normal",
                    "Scheduled",
                    "Binding",
                    f"Successfully assigned {assumed.namespace}/{assumed.name} to {node_name}",
                )
            await fw.run_post_bind(state, assumed, node_name)
            if self._measure:
                self._spent("PostBind", t, None, profile)
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                message = (
                    "binding cycle cancelled" if is_cancel(exc) else f"binding failed: {exc!r}"
                )
                await self._binding_failed(
                    fw, state, qpi, assumed, node_name, Status(Code.ERROR, (message,)), None
                )
            if is_cancel(exc) or not isinstance(exc, Exception):
                raise
        finally:
            self.waiting_pods.remove(assumed.uid)
            self._binding_tasks -= 1

    async def _binding_failed(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed: Pod,
        node_name: str,
        status: Status,
        fit: FitError | None,
    ) -> None:
        """# schedule_one.go handleBindingCycleError"""
        with anyio.CancelScope(shield=True):
            if not self.cache.is_assumed(assumed.uid):
                return
            current = self.cluster.get_pod(assumed.key)
            if current is not None and current.spec.node_name:
                return  # the bind went through after all
            await fw.run_unreserve(state, assumed, node_name)
            self.cache.forget_pod(assumed)
            if status.is_rejected:
                uid = assumed.uid
                failure = Failure(status, fit_error=fit, clear_nomination=True)
                await self._handle_failure(fw, qpi, failure)
                self.queue.move_all_to_active_or_backoff(
                    ASSIGNED_POD_DELETE, assumed, None, lambda p: p.uid != uid
                )
            else:
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, assumed, None)
                await self._handle_failure(fw, qpi, Failure(status, clear_nomination=True))

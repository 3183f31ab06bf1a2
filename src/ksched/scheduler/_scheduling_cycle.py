"""The scheduling cycle: one pod at a time, from PreFilter to Permit.

# pkg/scheduler/schedule_one.go (ScheduleOne, schedulingCycle, schedulePod,
# findNodesThatFitPod, prioritizeNodes, selectHost)
The loop pops a pod, runs the cycle against one snapshot, assumes the pod on the chosen
node, and hands it to a binding cycle without waiting for it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import anyio
import attrs
import numpy as np

from ..api import Pod
from ..api._assign import assigned
from ..framework import (
    Code,
    CycleState,
    NodeInfo,
    NodeToStatus,
    PodGroup,
    PodGroupPlugin,
    QueuedPodInfo,
    Status,
    WaitingPod,
)
from ..framework._row_cache import pod_row_key
from ..framework._runtime import Framework
from ..framework._signature import PodSignature
from ..framework._table import IntArray
from ._base import FITS, Failure, PodRecord, is_cancel, num_feasible_nodes_to_find
from ._binding_cycle import BindingCycle
from ._diagnosis import AttemptReport, FitError, plugin_decisions
from ._extenders import filter_by_extenders, prioritize_by_extenders

__all__ = ["Evaluation", "SchedulingCycle"]


@attrs.frozen
class Evaluation:
    """What :meth:`SchedulingCycle.evaluate` found: the feasible nodes, the others'
    statuses, the totals (with ``score``) and the highest total possible."""

    feasible: list[str] = attrs.field(factory=list)
    statuses: NodeToStatus = attrs.field(factory=NodeToStatus)
    totals: dict[str, int] = attrs.field(factory=dict)
    max_total: int = 0
    error: Status | None = None
    scores: dict[str, dict[str, int]] = attrs.field(factory=dict)
    """Plugin -> node -> normalized score (before weight), with ``score``."""


class SchedulingCycle(BindingCycle):
    """The serial scheduling loop."""

    async def _loop(self) -> None:
        while True:
            # Other tasks run before each pod while binding cycles are in flight, else at
            # least every few pods (a loop pass per pod costs a tenth of a plain cycle).
            qpi = await self.queue.pop(eager=not self._binding_tasks)
            await self._schedule_one(qpi)

    async def _schedule_one(self, qpi: QueuedPodInfo) -> None:
        pod = qpi.pod
        fw = self._framework_for(pod)
        if fw is None or pod.is_terminating or self.cache.is_assumed(pod.uid):
            self.queue.done(pod.uid)
            return
        plugin = fw.group_plugin
        if plugin is not None:
            group = plugin.pod_group(pod)
            if group is not None:
                await self._schedule_group(fw, qpi, plugin, group)
                return
        self._cycle = self.queue.scheduling_cycle
        self._profile_name = fw.profile_name
        started = self._now() if self._measure else 0.0
        self._begin_attempt(qpi, started)
        state = CycleState.for_attempt(self.metrics)
        try:
            if fw.filters_async or fw.scores_async:
                with anyio.fail_after(self.plugin_timeout):
                    result = await self._scheduling_cycle(fw, state, qpi)
            else:  # plain def plugins cannot hang on the loop: no cancel scope per pod
                result = await self._scheduling_cycle(fw, state, qpi)
        except TimeoutError:
            result = Failure(
                Status(Code.ERROR, (f"scheduling cycle timed out after {self.plugin_timeout}s",))
            )
        except Exception as exc:
            # A fault the framework did not turn into a Status: the pod is retried with
            # backoff and the loop goes on.
            message = f"scheduling cycle failed: {type(exc).__name__}: {exc}"
            result = Failure(Status(Code.ERROR, (message,)), clear_nomination=True)
        except BaseException as exc:
            if is_cancel(exc):
                with anyio.CancelScope(shield=True):
                    cancelled = Status(Code.ERROR, ("scheduling cycle cancelled",))
                    await self._handle_failure(fw, qpi, Failure(cancelled, clear_nomination=True))
            raise
        if self.timings:
            self.attempt_seconds += self._now() - started
        if isinstance(result, Failure):
            if self.metrics is not None:
                outcome = "unschedulable" if result.status.is_rejected else "error"
                self.metrics.attempt(outcome, fw.profile_name, self._now() - started)
            await self._handle_failure(fw, qpi, result)
            return
        assumed, node_name, waiting = result
        fw.run_pre_bind_pre_flights(state, assumed, node_name)
        self._binding_tasks += 1
        if waiting is None and not self.extenders and fw.binds_inline(state):
            # Nothing in this binding cycle can wait: run it here rather than as a task.
            await self._binding_cycle(fw, state, qpi, assumed, node_name, None, started, True)
            return
        assert self._binding_tg is not None
        self._binding_tg.start_soon(
            self._binding_cycle, fw, state, qpi, assumed, node_name, waiting, started
        )
        await anyio.lowlevel.checkpoint()  # let the new binding cycle start first

    def _begin_attempt(self, qpi: QueuedPodInfo, started: float) -> None:
        """Count and announce a pod's attempt (its record, the Attempted event, timings)."""
        pod = qpi.pod
        uid = pod.uid
        record = self.records.get(uid)
        if record is None:
            record = self.records[uid] = PodRecord()
        record.attempts = qpi.attempts
        self._emit("Attempted", pod, attempts=qpi.attempts)
        if self.timings:
            self._attempt_started[uid] = started

    def _report_for(self, pod: Pod) -> AttemptReport | None:
        """A report to fill when this pod's attempts are explained, else None."""
        explain = self.explain and (self._explain_only is None or pod.key in self._explain_only)
        return AttemptReport() if explain else None

    async def _schedule_group(
        self, fw: Framework, first: QueuedPodInfo, plugin: PodGroupPlugin, group: PodGroup
    ) -> None:
        """The pod-group cycle (``GroupCycle``)."""
        raise NotImplementedError

    async def _scheduling_cycle(
        self, fw: Framework, state: CycleState, qpi: QueuedPodInfo
    ) -> Failure | tuple[Pod, str, WaitingPod | None]:
        pod = qpi.pod
        self.cache.update_snapshot(self.snapshot)
        report = self._report_for(pod)
        if len(self.snapshot) == 0:
            return Failure(
                Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("no nodes available to schedule pods",)
                ),
                clear_nomination=True,
            )
        t = self._now() if self._measure else 0.0
        found = await self._schedule_pod(fw, state, pod, report)
        if self._measure:
            t = self._spent_algorithm(t)  # PostFilter's time is counted from here
        if report is not None:
            self._record_attempt(pod, report)
        if isinstance(found, FitError):
            nominated: str | None = None
            clear = True
            if fw.has_post_filter_plugins:
                result, status = await fw.run_post_filter(state, pod, found.statuses)
                if self._measure:
                    self._spent("PostFilter", t, status)
                found.post_filter_message = status.message
                # No result keeps the current nomination; an empty one clears it.
                clear = result is not None and not result.nominated_node_name
                if result is not None and result.nominated_node_name:
                    nominated = result.nominated_node_name
            return Failure(
                Status(Code.UNSCHEDULABLE, (found.message(),)),
                fit_error=found,
                nominated=nominated,
                clear_nomination=clear,
            )
        if isinstance(found, Status):
            return Failure(found, clear_nomination=True)
        node_name = found
        assumed = assigned(pod, node_name)
        self.cache.assume_pod(assumed, qpi.pod_info.for_copy(assumed))
        self.queue.delete_nominated_pod_if_exists(pod)
        try:
            done = await self._reserve_and_permit(fw, state, pod, assumed, node_name)
            if report is not None and not isinstance(done, Failure):
                report.decisions.update(plugin_decisions(fw.plugins.values(), state, node_name))
            return done
        except BaseException:
            with anyio.CancelScope(shield=True):
                if (
                    self.cache.is_assumed(assumed.uid)
                    and self.waiting_pods.get(assumed.uid) is None
                ):
                    await fw.run_unreserve(state, assumed, node_name)
                    self.cache.forget_pod(assumed)
            raise

    async def _reserve_and_permit(
        self, fw: Framework, state: CycleState, pod: Pod, assumed: Pod, node_name: str
    ) -> Failure | tuple[Pod, str, WaitingPod | None]:
        t = self._now() if self._measure else 0.0
        status = await fw.run_reserve(state, assumed, node_name)
        if self._measure:
            t = self._spent("Reserve", t, status)
        if not status.is_success:
            await fw.run_unreserve(state, assumed, node_name)
            self.cache.forget_pod(assumed)
            return self._single_node_failure(pod, node_name, status)
        return await self._permit(fw, state, pod, assumed, node_name, t)

    async def _permit(
        self, fw: Framework, state: CycleState, pod: Pod, assumed: Pod, node_name: str, t: float
    ) -> Failure | tuple[Pod, str, WaitingPod | None]:
        """Permit for a reserved, assumed pod: a rejection undoes both; a wait registers
        the waiting pod (``t``: when the extension points' timing last stopped)."""
        status, waiting = await fw.run_permit(state, assumed, node_name, self._now())
        if self._measure:
            self._spent("Permit", t, status)
        if status.code is not Code.WAIT and not status.is_success:
            await fw.run_unreserve(state, assumed, node_name)
            self.cache.forget_pod(assumed)
            return self._single_node_failure(pod, node_name, status)
        if waiting is not None:
            self.waiting_pods.add(waiting)
            self._emit("WaitingOnPermit", pod, node=node_name, plugins=waiting.pending_plugins)
        return assumed, node_name, waiting

    def _single_node_failure(self, pod: Pod, node_name: str, status: Status) -> Failure:
        if not status.is_rejected:
            return Failure(status, clear_nomination=True)
        statuses = NodeToStatus()
        statuses.set(node_name, status)
        fit = FitError(num_all_nodes=1, statuses=statuses, unschedulable_plugins={status.plugin})
        return Failure(Status(status.code, (fit.message(),)), fit_error=fit, clear_nomination=True)

    async def _schedule_pod(
        self, fw: Framework, state: CycleState, pod: Pod, report: AttemptReport | None
    ) -> str | FitError | Status:
        """Find a node: PreFilter, Filter, PreScore, Score, select. # schedule_one.go schedulePod"""
        all_nodes = self.snapshot.list()
        timings = self._measure
        t = self._now() if timings else 0.0
        pre_result, status, rejectors = await fw.run_pre_filter(state, pod, all_nodes)
        if timings:
            t = self._spent("PreFilter", t, status)
        if report is not None:
            report.pre_filter = status
        if not status.is_success:
            if not status.is_rejected:
                return status
            statuses = NodeToStatus(status)
            return FitError(
                num_all_nodes=len(all_nodes),
                statuses=statuses,
                unschedulable_plugins=rejectors,
                pre_filter_message=status.message,
            )
        statuses = NodeToStatus()
        extenders = self.extenders
        # Extenders judge nodes the pod signature cannot see: no batching hints with them.
        batch = fw.batch if self.opportunistic_batching and not extenders else None
        hint: str | None = None
        signature: PodSignature | None = None
        if batch is not None:
            signature = batch.sign(pod)
            hint = await batch.node_hint(
                signature,
                self._cycle,
                self._now(),
                self.snapshot.get,
                functools.partial(fw.run_filter, state, pod),
            )
        nominated = pod.status.nominated_node_name
        has_nominated = self.queue.has_nominated_pods()
        nominated_for = self.queue.nominated_pods_for_node if has_nominated else None
        # A nominated node (set by preemption) is likely the only one that fits; a hinted
        # node is the previous equal pod's runner-up. Either is tried alone first.
        first = nominated or hint
        if first:
            info = self.snapshot.get(first)
            if info is not None:
                outcome = await fw.find_feasible(
                    state, pod, [info], start=0, limit=1, nominated_for=nominated_for
                )
                if outcome.error is not None:
                    return outcome.error
                passed: Sequence[NodeInfo] | Status = outcome.feasible
                if extenders and outcome.feasible:
                    passed = await filter_by_extenders(extenders, pod, outcome.feasible, statuses)
                    if isinstance(passed, Status):
                        return passed
                if passed:
                    if report is not None:
                        report.filter[first] = FITS
                        report.selected = first
                        report.hinted = not nominated
                    if batch is not None:
                        batch.store(signature, hint, first, None, self._cycle, self._now())
                    return first
        row_key = pod_row_key(pod) if fw.use_row_cache else None
        nodes: Sequence[NodeInfo] = all_nodes
        if pre_result is not None and pre_result.node_names is not None:
            nodes = [i for i in all_nodes if i.name in pre_result.node_names]
            statuses.set_absent(
                Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(rejectors))}]",),
                )
            )
        limit = len(nodes)
        if nodes:
            percentage = fw.percentage_of_nodes_to_score
            if percentage is None:
                percentage = self.config.percentage_of_nodes_to_score
            limit = num_feasible_nodes_to_find(percentage, len(nodes))
            if not fw.has_score_plugins:
                limit = 1
        start = self._next_start_node_index % len(nodes) if nodes else 0
        outcome = await fw.find_feasible(
            state,
            pod,
            nodes,
            start=start,
            limit=limit,
            nominated_for=nominated_for,
            nominated_nodes=self.queue.nominated_node_names() if has_nominated else (),
            table=self.snapshot.table,
            need_statuses=report is not None,
            row_key=row_key,
        )
        if timings:
            t = self._spent("Filter", t)
        if all_nodes:
            self._next_start_node_index = (self._next_start_node_index + outcome.processed) % len(
                all_nodes
            )
        statuses.update(outcome.statuses)
        if report is not None:
            report.evaluated = [i.name for i in outcome.feasible] + [
                n for n, _ in outcome.statuses.items()
            ]
            for name, st in outcome.statuses.items():
                report.filter[name] = st
            report.filter.update(dict.fromkeys((i.name for i in outcome.feasible), FITS))
        if outcome.error is not None:
            return outcome.error
        feasible: Sequence[NodeInfo] = outcome.feasible
        rows = outcome.rows
        if extenders and feasible:
            kept = await filter_by_extenders(extenders, pod, feasible, statuses)
            if isinstance(kept, Status):
                return kept
            if len(kept) != len(feasible):
                feasible, rows = kept, None
            if report is not None:
                for name, st in statuses.items():
                    if st.plugin and st.plugin.startswith(("http://", "https://")):
                        report.filter[name] = st
        if not feasible:
            return FitError(
                num_all_nodes=len(all_nodes),
                statuses=statuses,
                unschedulable_plugins=outcome.unschedulable_plugins | rejectors,
            )
        if len(feasible) == 1 or not fw.has_score_plugins:
            # Without Score plugins Filter stopped at the first feasible node.
            choice = feasible[0].name
            if report is not None:
                report.selected = choice
            if batch is not None:
                batch.store(signature, hint, choice, None, self._cycle, self._now())
            return choice
        status = await fw.run_pre_score(state, pod, feasible)
        if timings:
            t = self._spent("PreScore", t, status)
        if not status.is_success:
            return status
        scores = await fw.run_score(
            state,
            pod,
            feasible,
            table=self.snapshot.table,
            rows=rows,
            row_key=row_key,
            plugin_scores=report is not None,
        )
        if scores.error is not None:
            return scores.error
        if extenders:
            added = await prioritize_by_extenders(extenders, pod, feasible)
            if added:
                extra = np.fromiter(
                    (added.get(i.name, 0) for i in feasible), np.int64, len(feasible)
                )
                scores.total = scores.total + extra
        best = self._select_host(feasible, scores.total)
        if batch is not None:
            # Only a ranking the batch keeps draws tie-breaking keys (see _rank_others).
            keeps = signature is not None and hint != best
            ranked = self._rank_others(feasible, scores.total, best) if keeps else None
            batch.store(signature, hint, best, ranked, self._cycle, self._now())
        if timings:
            self._spent("Score", t)
        if report is not None:
            report.scores = scores.plugin_scores
            report.totals = scores.totals
            report.skipped_score_plugins = set(state.skip_score_plugins)
            report.selected = best
        return best

    async def evaluate(
        self, pod: Pod, node_names: Sequence[str] | None = None, *, score: bool = False
    ) -> Evaluation:
        """What the pod's profile says of these nodes (all when None), without assuming or
        binding anything: PreFilter and Filter on every node, and with ``score`` PreScore
        and Score on the feasible ones. For ``ksched extender serve`` and what-if tools."""
        fw = self._framework_for(pod)
        if fw is None:
            return Evaluation(
                error=Status(Code.ERROR, (f"no profile {pod.spec.scheduler_name!r}",))
            )
        self.cache.update_snapshot(self.snapshot)
        infos = [
            info
            for info in (
                self.snapshot.list()
                if node_names is None
                else [self.snapshot.get(name) for name in node_names]
            )
            if info is not None
        ]
        state = CycleState()
        _, status, _ = await fw.run_pre_filter(state, pod, infos)
        statuses = NodeToStatus(status)
        if not status.is_success:
            if not status.is_rejected:
                return Evaluation(error=status)
            return Evaluation(statuses=statuses)
        outcome = await fw.find_feasible(
            state, pod, infos, start=0, limit=len(infos), need_statuses=True
        )
        if outcome.error is not None:
            return Evaluation(error=outcome.error)
        statuses = NodeToStatus()
        statuses.update(outcome.statuses)
        feasible = [info.name for info in outcome.feasible]
        if not score or not feasible or not fw.has_score_plugins:
            return Evaluation(feasible=feasible, statuses=statuses)
        status = await fw.run_pre_score(state, pod, outcome.feasible)
        if not status.is_success:
            return Evaluation(feasible=feasible, statuses=statuses, error=status)
        scores = await fw.run_score(state, pod, outcome.feasible)
        if scores.error is not None:
            return Evaluation(feasible=feasible, statuses=statuses, error=scores.error)
        weights = sum(w for name, w in fw.weights.items() if name in scores.plugin_scores)
        return Evaluation(
            feasible=feasible,
            statuses=statuses,
            totals=scores.totals,
            max_total=100 * weights,
            scores=scores.plugin_scores,
        )

    def _select_host(self, feasible: Sequence[NodeInfo], totals: IntArray) -> str:
        """The highest total; ties broken uniformly at random (seedable), as upstream's
        reservoir sampling over the top-scored nodes does."""
        ties = (totals == np.maximum.reduce(totals)).nonzero()[0]  # max() minus its wrapper
        pick = 0 if len(ties) == 1 else self.rng.randrange(len(ties))
        return feasible[int(ties[pick])].name

    def _rank_others(
        self, feasible: Sequence[NodeInfo], totals: IntArray, best: str
    ) -> Callable[[], list[str]]:
        """What builds the feasible nodes but ``best``, highest total first, ties in random
        order. The tie-breaking keys are drawn now, so the random stream is the same
        whether or not the ranking is ever built."""
        if self._tie_rng is None:
            self._tie_rng = np.random.default_rng(self.rng.getrandbits(64))
        keys = self._tie_rng.random(len(totals))

        def ranked() -> list[str]:
            order = np.lexsort((keys, -totals))
            names = [feasible[i].name for i in order.tolist()]
            names.remove(best)
            return names

        return ranked

    def _record_attempt(self, pod: Pod, report: AttemptReport) -> None:
        record = self.records.setdefault(pod.uid, PodRecord())
        if record.first_attempt is None:
            record.first_attempt = report
            report.all_nodes = [i.name for i in self.snapshot.list()]

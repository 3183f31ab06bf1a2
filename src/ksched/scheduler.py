"""The Scheduler: the serial scheduling loop, binding cycles as tasks, event handlers.

# pkg/scheduler/schedule_one.go (ScheduleOne, schedulingCycle, bindingCycle,
# handleSchedulingFailure), eventhandlers.go, scheduler.go
It only drives ``queue/``, ``cache/`` and ``framework/``.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import attrs
import numpy as np

from ._diagnosis import AttemptReport, FitError, SchedulingEvent
from ._errors import SchedulerClosedError
from ._profiles import Registry, build_framework
from .api import Node, Pod
from .cache import Cache, Snapshot
from .cluster import ClusterStore, InMemoryCluster
from .config import SchedulerConfig
from .framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    NodeToStatus,
    PodInfo,
    QueuedPodInfo,
    SharedLister,
    Status,
    WaitingPod,
)
from .framework._events import ASSIGNED_POD_DELETE, NODE_ADD
from .framework._runtime import Framework
from .framework._signature import PodSignature
from .framework._table import IntArray
from .framework._waiting import WaitingPods
from .queue import SchedulingQueue

__all__ = ["Scheduler"]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes to find before Filter stops.

    # schedule_one.go numFeasibleNodesToFind
    """
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


@attrs.define(eq=False)
class PodRecord:
    """What the scheduler knows of a pod it was given (for reports)."""

    attempts: int = 0
    message: str | None = None
    nominated_node: str | None = None
    first_attempt: AttemptReport | None = None


class _Handle:
    """The Handle given to one profile's plugins."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler
        self.framework: Framework | None = None

    @property
    def snapshot(self) -> SharedLister:
        return self._scheduler.snapshot

    @property
    def rng(self) -> random.Random:
        return self._scheduler.rng

    @property
    def parallelism(self) -> int:
        return self._scheduler.config.parallelism

    @property
    def cluster(self) -> Any:
        return self._scheduler.cluster

    def now(self) -> float:
        return anyio.current_time()

    def namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        labels: Mapping[str, str] | None = self._scheduler.cluster.namespace_labels(namespace)
        return labels

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self._scheduler.waiting_pods.get(uid)

    def iterate_waiting_pods(self) -> Iterable[WaitingPod]:
        return iter(self._scheduler.waiting_pods)

    def reject_waiting_pod(self, uid: str, plugin: str, message: str) -> bool:
        waiting = self._scheduler.waiting_pods.get(uid)
        if waiting is None:
            return False
        waiting.reject(plugin, message)
        return True

    def activate(self, pods: Iterable[Pod]) -> None:
        self._scheduler.queue.activate(list(pods))

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        return self._scheduler.queue.nominated_pods_for_node(node_name)

    def record_event(self, pod: Pod, reason: str, message: str) -> None:
        self._scheduler._emit(reason, pod, message=message)
        if reason == "Preempted" and self._scheduler._record_event is not None:
            preemptor = self._scheduler._cycle_pod  # preemption runs in its cycle
            self._scheduler._record_event(pod, preemptor, "Normal", reason, "Preempting", message)

    def bind(self, framework: Framework | None) -> _Handle:
        """Attach the profile's framework once it is built (plugins get the handle first)."""
        if framework is not None:
            self.framework = framework
        return self

    def _fw(self) -> Framework:
        assert self.framework is not None, "the framework is not built yet"
        return self.framework

    async def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status:
        nominated = self._scheduler.queue.nominated_pods_for_node(node_info.name)
        return await self._fw().run_filter_with_nominated_pods(state, pod, node_info, nominated)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self._fw().run_pre_filter_extension_add_pod(state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self._fw().run_pre_filter_extension_remove_pod(state, pod, pod_to_remove, node_info)


class Scheduler:
    """A kube-scheduler: profiles, queue, cache, the scheduling loop and binding cycles.

    Use :meth:`open` (an async context manager that owns the task group) or run
    :meth:`serve` in your own task group.
    """

    def __init__(
        self,
        config: SchedulerConfig | None = None,
        cluster: ClusterStore | None = None,
        *,
        registry: Registry | None = None,
        seed: int | None = None,
        observer: Callable[[SchedulingEvent], None] | None = None,
        explain: bool | Collection[str] = False,
        plugin_timeout: float = 30.0,
        timings: bool = False,
        opportunistic_batching: bool = True,
    ) -> None:
        self.config = config or SchedulerConfig()
        self.cluster: Any = cluster if cluster is not None else InMemoryCluster()
        self.rng = random.Random(seed)
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.waiting_pods = WaitingPods()
        self.records: dict[str, PodRecord] = {}
        self.observer = observer
        self.explain = explain
        """Record what each attempt evaluated (True), or only for these pod keys."""
        self._explain_only = None if isinstance(explain, bool) else frozenset(explain)
        self.plugin_timeout = plugin_timeout
        self.timings = timings
        """Measure attempts: ``attempt_start`` on outcome events, seconds per extension point."""
        self.extension_point_seconds: dict[str, float] = {}
        self.attempt_seconds = 0.0
        self._attempt_started: dict[str, float] = {}
        self._next_start_node_index = 0
        self.opportunistic_batching = opportunistic_batching
        """Reuse an equal pod's ranking when it filled its node (upstream's
        OpportunisticBatching gate); a profile takes part only if all its Filter- and
        Score-side plugins sign pods."""
        self._cycle = 0
        self._tie_rng: np.random.Generator | None = None
        self._binding_tasks = 0
        self._closed = False
        self._loop_scope: anyio.CancelScope | None = None
        self._binding_tg: anyio.abc.TaskGroup | None = None
        self.frameworks: dict[str, Framework] = {}
        for profile in self.config.profiles:
            handle = _Handle(self)
            self.frameworks[profile.scheduler_name] = build_framework(
                self.config,
                profile,
                registry=registry,
                handle_for=handle.bind,
                waiting_pods=self.waiting_pods,
            )
        first = next(iter(self.frameworks.values()))
        self.queue = SchedulingQueue(
            less=first.less,
            sort_key=first.sort_key,
            pre_enqueue=self._pre_enqueue,
            registrations=self._registrations,
            initial_backoff=self.config.pod_initial_backoff_seconds,
            max_backoff=self.config.pod_max_backoff_seconds,
        )
        self._registrations_by_profile = {
            name: fw.event_registrations() for name, fw in self.frameworks.items()
        }
        self._cycle_pod: Pod | None = None
        self._record_event = getattr(self.cluster, "record_event", None)
        """The cluster's Event recorder (kube: events.k8s.io/v1), if it has one."""
        self.cluster.subscribe(self._on_change)
        for node in self.cluster.nodes():
            self._on_change("Node", None, node)
        for pod in self.cluster.pods():
            self._on_change("Pod", None, pod)

    # ---- lifecycle ------------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        config: SchedulerConfig | None = None,
        cluster: ClusterStore | None = None,
        **options: Any,
    ) -> AsyncIterator[Scheduler]:
        """Run a scheduler for the duration of the ``async with`` block.

        Leaving the block stops the loop, rejects pods waiting at Permit and drains the
        binding cycles (each failed one unreserved and requeued).
        """
        scheduler = cls(config, cluster, **options)
        async with anyio.create_task_group() as tg:
            await tg.start(scheduler.serve)
            try:
                yield scheduler
            finally:
                with anyio.CancelScope(shield=True):
                    await scheduler.aclose()
                tg.cancel_scope.cancel()

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Run the queue's flushes, the scheduling loop and the binding cycles."""
        if self._closed:
            raise SchedulerClosedError("the scheduler was shut down")
        async with anyio.create_task_group() as outer:
            await outer.start(self.queue.serve)
            async with anyio.create_task_group() as binding:
                self._binding_tg = binding
                with anyio.CancelScope() as loop_scope:
                    self._loop_scope = loop_scope
                    task_status.started()
                    await self._loop()
                # The loop stopped (aclose): let binding cycles finish or be cancelled.
            outer.cancel_scope.cancel()

    async def aclose(self, grace: float = 5.0) -> None:
        """Stop scheduling; reject waiting pods; give binding cycles ``grace`` seconds."""
        if self._closed:
            return
        self._closed = True
        if self._loop_scope is not None:
            self._loop_scope.cancel()
        for waiting in list(self.waiting_pods):
            waiting.reject("", "scheduler shut down")
        with anyio.move_on_after(grace):
            while self._binding_tasks:
                await anyio.sleep(0.01)
        if self._binding_tg is not None and self._binding_tasks:
            self._binding_tg.cancel_scope.cancel()
        self.cluster.unsubscribe(self._on_change)

    @property
    def idle(self) -> bool:
        """Nothing to do now: queue idle, no binding cycle, no pod waiting at Permit."""
        return self._binding_tasks == 0 and len(self.waiting_pods) == 0 and self.queue.is_idle()

    @property
    def binding_cycles_in_flight(self) -> int:
        return self._binding_tasks

    # ---- profile routing --------------------------------------------------------------

    def _framework_for(self, pod: Pod) -> Framework | None:
        return self.frameworks.get(pod.spec.scheduler_name)

    def _pre_enqueue(self, pod: Pod) -> Status | None:
        fw = self._framework_for(pod)
        return fw.run_pre_enqueue(pod) if fw is not None else None

    def _registrations(self, pod: Pod) -> Mapping[str, Any]:
        return self._registrations_by_profile.get(pod.spec.scheduler_name, {})

    def _spent(self, point: str, since: float) -> float:
        """Add the time since ``since`` to ``point`` (with ``timings``); returns now."""
        now = anyio.current_time()
        seconds = self.extension_point_seconds
        seconds[point] = seconds.get(point, 0.0) + now - since
        return now

    def _emit(self, kind: str, pod: Pod, **details: Any) -> None:
        if self.timings and kind in _ATTEMPT_OUTCOMES:
            started = self._attempt_started
            start = (
                started.get(pod.uid) if kind == "WaitingOnPermit" else started.pop(pod.uid, None)
            )
            if start is not None:
                details["attempt_start"] = start
        if self.observer is not None:
            self.observer(SchedulingEvent(kind, pod.key, anyio.current_time(), details))

    # ---- cluster events (informer handlers) -------------------------------------------

    def _on_change(self, kind: str, old: Any, new: Any) -> None:
        if kind == "Node":
            self._on_node(old, new)
        elif kind == "Pod":
            self._on_pod(old, new)
        else:
            resource = {
                "PodGroup": EventResource.POD_GROUP,
                "Namespace": EventResource.NAMESPACE,
                "Service": EventResource.SERVICE,
            }.get(kind)
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
            waiting = self.waiting_pods.get(old.uid)
            if waiting is not None:
                waiting.reject("", "removed")
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, old, None)
            return
        if new.spec.node_name:
            if old is None or not old.spec.node_name:
                if old is not None:
                    self.queue.delete(old)
                self.cache.add_pod(new)
                self.queue.assigned_pod_added(new)
            else:
                self.cache.update_pod(old, new)
                for action in _pod_changes(old, new):
                    event = ClusterEvent(
                        EventResource.ASSIGNED_POD, action, f"AssignedPod{action.name}"
                    )
                    self.queue.assigned_pod_updated(old, new, event)
            return
        if new.spec.scheduler_name not in self.frameworks:
            return
        if old is None:
            self.records.setdefault(new.uid, PodRecord())
            if new.status.nominated_node_name:
                self.queue.add_nominated_pod(PodInfo.of(new), new.status.nominated_node_name)
                self.records[new.uid].nominated_node = new.status.nominated_node_name
            self.queue.add(new)
            self._emit("Queued", new)
        elif self.cache.is_assumed(new.uid):
            return
        else:
            self.queue.update(old, new)

    # ---- the scheduling loop ----------------------------------------------------------

    async def _loop(self) -> None:
        while True:
            qpi = await self.queue.pop()
            await self._schedule_one(qpi)
            await anyio.lowlevel.checkpoint()

    async def _schedule_one(self, qpi: QueuedPodInfo) -> None:
        pod = qpi.pod
        fw = self._framework_for(pod)
        if fw is None or pod.is_terminating or self.cache.is_assumed(pod.uid):
            self.queue.done(pod.uid)
            return
        self._cycle = self.queue.scheduling_cycle
        self._cycle_pod = pod
        record = self.records.setdefault(pod.uid, PodRecord())
        record.attempts = qpi.attempts
        self._emit("Attempted", pod, attempts=qpi.attempts)
        state = CycleState()
        if self.timings:
            started = self._attempt_started[pod.uid] = anyio.current_time()
        try:
            with anyio.fail_after(
                self.plugin_timeout if fw.filters_async or fw.scores_async else math.inf
            ):
                result = await self._scheduling_cycle(fw, state, qpi)
        except TimeoutError:
            result = _Failure(
                Status(Code.ERROR, (f"scheduling cycle timed out after {self.plugin_timeout}s",))
            )
        except Exception as exc:
            # A fault the framework did not turn into a Status: the pod is retried with
            # backoff and the loop goes on.
            message = f"scheduling cycle failed: {type(exc).__name__}: {exc}"
            result = _Failure(Status(Code.ERROR, (message,)), clear_nomination=True)
        except BaseException as exc:
            if _is_cancel(exc):
                with anyio.CancelScope(shield=True):
                    cancelled = Status(Code.ERROR, ("scheduling cycle cancelled",))
                    await self._handle_failure(fw, qpi, _Failure(cancelled, clear_nomination=True))
            raise
        if self.timings:
            self.attempt_seconds += anyio.current_time() - started
        if isinstance(result, _Failure):
            await self._handle_failure(fw, qpi, result)
            return
        assumed, node_name, waiting = result
        self._binding_tasks += 1
        assert self._binding_tg is not None
        self._binding_tg.start_soon(
            self._binding_cycle, fw, state, qpi, assumed, node_name, waiting
        )

    async def _scheduling_cycle(
        self, fw: Framework, state: CycleState, qpi: QueuedPodInfo
    ) -> _Failure | tuple[Pod, str, WaitingPod | None]:
        pod = qpi.pod
        self.cache.update_snapshot(self.snapshot)
        explain = self.explain and (self._explain_only is None or pod.key in self._explain_only)
        report = AttemptReport() if explain else None
        if len(self.snapshot) == 0:
            return _Failure(
                Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("no nodes available to schedule pods",)
                ),
                clear_nomination=True,
            )
        found = await self._schedule_pod(fw, state, pod, report)
        if report is not None:
            self._record_attempt(pod, report)
        if isinstance(found, FitError):
            nominated: str | None = None
            clear = True
            if fw.has_post_filter_plugins:
                result, status = await fw.run_post_filter(state, pod, found.statuses)
                found.post_filter_message = status.message
                # No result keeps the current nomination; an empty one clears it.
                clear = result is not None and not result.nominated_node_name
                if result is not None and result.nominated_node_name:
                    nominated = result.nominated_node_name
            return _Failure(
                Status(Code.UNSCHEDULABLE, (found.message(),)),
                fit_error=found,
                nominated=nominated,
                clear_nomination=clear,
            )
        if isinstance(found, Status):
            return _Failure(found, clear_nomination=True)
        node_name = found
        assumed = attrs.evolve(pod, spec=attrs.evolve(pod.spec, node_name=node_name))
        self.cache.assume_pod(assumed)
        self.queue.delete_nominated_pod_if_exists(pod)
        try:
            return await self._reserve_and_permit(fw, state, pod, assumed, node_name)
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
    ) -> _Failure | tuple[Pod, str, WaitingPod | None]:
        t = anyio.current_time() if self.timings else 0.0
        status = await fw.run_reserve(state, assumed, node_name)
        if self.timings:
            t = self._spent("Reserve", t)
        if not status.is_success:
            await fw.run_unreserve(state, assumed, node_name)
            self.cache.forget_pod(assumed)
            return self._single_node_failure(pod, node_name, status)
        status, waiting = await fw.run_permit(state, assumed, node_name, anyio.current_time())
        if self.timings:
            self._spent("Permit", t)
        if status.code is not Code.WAIT and not status.is_success:
            await fw.run_unreserve(state, assumed, node_name)
            self.cache.forget_pod(assumed)
            return self._single_node_failure(pod, node_name, status)
        if waiting is not None:
            self.waiting_pods.add(waiting)
            self._emit("WaitingOnPermit", pod, node=node_name, plugins=waiting.pending_plugins)
        return assumed, node_name, waiting

    def _single_node_failure(self, pod: Pod, node_name: str, status: Status) -> _Failure:
        if not status.is_rejected:
            return _Failure(status, clear_nomination=True)
        statuses = NodeToStatus()
        statuses.set(node_name, status)
        fit = FitError(num_all_nodes=1, statuses=statuses, unschedulable_plugins={status.plugin})
        return _Failure(Status(status.code, (fit.message(),)), fit_error=fit, clear_nomination=True)

    async def _schedule_pod(
        self, fw: Framework, state: CycleState, pod: Pod, report: AttemptReport | None
    ) -> str | FitError | Status:
        """Find a node: PreFilter, Filter, PreScore, Score, select. # schedule_one.go schedulePod"""
        all_nodes = self.snapshot.list()
        timings = self.timings
        t = anyio.current_time() if timings else 0.0
        pre_result, status, rejectors = await fw.run_pre_filter(state, pod, all_nodes)
        if timings:
            t = self._spent("PreFilter", t)
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
        batch = fw.batch if self.opportunistic_batching else None
        hint: str | None = None
        signature: PodSignature | None = None
        if batch is not None:
            signature = batch.sign(pod)
            hint = await batch.node_hint(
                signature,
                self._cycle,
                anyio.current_time(),
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
                if outcome.feasible:
                    if report is not None:
                        report.filter[first] = _FITS
                        report.selected = first
                        report.hinted = not nominated
                    if batch is not None:
                        batch.store(signature, hint, first, None, self._cycle, anyio.current_time())
                    return first
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
        )
        if timings:
            t = self._spent("Filter", t)
        if all_nodes:
            self._next_start_node_index = (self._next_start_node_index + outcome.processed) % len(
                all_nodes
            )
        for name, st in outcome.statuses.items():
            statuses.set(name, st)
        if report is not None:
            report.evaluated = [i.name for i in outcome.feasible] + [
                n for n, _ in outcome.statuses.items()
            ]
            for name, st in outcome.statuses.items():
                report.filter[name] = st
            report.filter.update(dict.fromkeys((i.name for i in outcome.feasible), _FITS))
        if outcome.error is not None:
            return outcome.error
        feasible = outcome.feasible
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
                batch.store(signature, hint, choice, None, self._cycle, anyio.current_time())
            return choice
        status = await fw.run_pre_score(state, pod, feasible)
        if timings:
            t = self._spent("PreScore", t)
        if not status.is_success:
            return status
        scores = await fw.run_score(
            state, pod, feasible, table=self.snapshot.table, rows=outcome.rows
        )
        if scores.error is not None:
            return scores.error
        best = self._select_host(feasible, scores.total)
        if batch is not None:
            ranked = functools.partial(self._rank_others, feasible, scores.total, best)
            batch.store(signature, hint, best, ranked, self._cycle, anyio.current_time())
        if timings:
            self._spent("Score", t)
        if report is not None:
            report.scores = scores.plugin_scores
            report.totals = scores.totals
            report.skipped_score_plugins = set(state.skip_score_plugins)
            report.selected = best
        return best

    def _select_host(self, feasible: Sequence[NodeInfo], totals: IntArray) -> str:
        """The highest total; ties broken uniformly at random (seedable), as upstream's
        reservoir sampling over the top-scored nodes does."""
        ties = np.flatnonzero(totals == totals.max())
        pick = 0 if len(ties) == 1 else self.rng.randrange(len(ties))
        return feasible[int(ties[pick])].name

    def _rank_others(self, feasible: Sequence[NodeInfo], totals: IntArray, best: str) -> list[str]:
        """The feasible nodes but ``best``, highest total first, ties in random order."""
        if self._tie_rng is None:
            self._tie_rng = np.random.default_rng(self.rng.getrandbits(64))
        order = np.lexsort((self._tie_rng.random(len(totals)), -totals))
        names = [feasible[i].name for i in order.tolist()]
        names.remove(best)
        return names

    def _record_attempt(self, pod: Pod, report: AttemptReport) -> None:
        record = self.records.setdefault(pod.uid, PodRecord())
        if record.first_attempt is None:
            record.first_attempt = report
            report.all_nodes = [i.name for i in self.snapshot.list()]

    # ---- failures ---------------------------------------------------------------------

    async def _handle_failure(self, fw: Framework, qpi: QueuedPodInfo, failure: _Failure) -> None:
        """# schedule_one.go handleSchedulingFailure"""
        pod = qpi.pod
        status = failure.status
        if failure.fit_error is not None:
            qpi.unschedulable_plugins = set(failure.fit_error.unschedulable_plugins) - {""}
            qpi.pending_plugins = set()
        else:
            qpi.unschedulable_plugins = set()
            qpi.pending_plugins = set()
        record = self.records.setdefault(pod.uid, PodRecord())
        record.message = status.message
        current = self.cluster.get_pod(pod.key)
        if current is None or current.uid != pod.uid or current.spec.node_name:
            self.queue.done(pod.uid)
        else:
            qpi.pod_info = PodInfo.of(current)
            self.queue.add_unschedulable_if_not_present(qpi, self.queue.scheduling_cycle)
        nominated_node = current.status.nominated_node_name if current is not None else None
        if failure.nominated:
            nominated_node = failure.nominated
            record.nominated_node = failure.nominated
            self.queue.add_nominated_pod(PodInfo.of(current or pod), failure.nominated)
        elif failure.clear_nomination:
            nominated_node = None
            self.queue.delete_nominated_pod_if_exists(pod)
        reason = "Unschedulable" if status.is_rejected else "SchedulerError"
        self._emit(reason, pod, message=status.message, attempts=qpi.attempts)
        if self._record_event is not None:
            self._record_event(
                pod, None, "Warning", "FailedScheduling", "Scheduling", status.message
            )
        if current is not None and not current.spec.node_name:
            await self.cluster.update_pod_status(
                current,
                nominated_node_name=nominated_node,
                condition={
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": reason,
                    "message": status.message,
                },
            )

    # ---- binding cycle ----------------------------------------------------------------

    async def _binding_cycle(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed: Pod,
        node_name: str,
        waiting: WaitingPod | None,
    ) -> None:
        status: Status | None = None
        try:
            if waiting is not None:
                status = await waiting.wait()
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
            t = anyio.current_time() if self.timings else 0.0
            with anyio.fail_after(self.plugin_timeout):
                status = await fw.run_pre_bind(state, assumed, node_name)
                if self.timings:
                    t = self._spent("PreBind", t)
                if status.is_success:
                    status = await fw.run_bind(state, assumed, node_name)
                    self.cache.finish_binding(assumed)
                    if self.timings:
                        t = self._spent("Bind", t)
            if not status.is_success:
                if status.code is Code.SKIP:
                    status = Status(Code.ERROR, ("no bind plugin bound the pod",))
                await self._binding_failed(fw, state, qpi, assumed, node_name, status, None)
                return
            self.queue.done(assumed.uid)
            self._emit("Bound", assumed, node=node_name)
            if self._record_event is not None:
                note = f"Successfully assigned {assumed.namespace}/{assumed.name} to {node_name}"
                self._record_event(assumed, None, "Normal", "Scheduled", "Binding", note)
            await fw.run_post_bind(state, assumed, node_name)
            if self.timings:
                self._spent("PostBind", t)
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                message = (
                    "binding cycle cancelled" if _is_cancel(exc) else f"binding failed: {exc!r}"
                )
                await self._binding_failed(
                    fw, state, qpi, assumed, node_name, Status(Code.ERROR, (message,)), None
                )
            if _is_cancel(exc) or not isinstance(exc, Exception):
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
                failure = _Failure(status, fit_error=fit, clear_nomination=True)
                await self._handle_failure(fw, qpi, failure)
                self.queue.move_all_to_active_or_backoff(
                    ASSIGNED_POD_DELETE, assumed, None, lambda p: p.uid != uid
                )
            else:
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, assumed, None)
                await self._handle_failure(fw, qpi, _Failure(status, clear_nomination=True))


_FITS = Status(Code.SUCCESS)
"""A feasible node's entry in an AttemptReport."""

_ATTEMPT_OUTCOMES = frozenset({"Bound", "Unschedulable", "SchedulerError", "WaitingOnPermit"})


def _is_cancel(exc: BaseException) -> bool:
    return isinstance(exc, anyio.get_cancelled_exc_class())


@attrs.define(eq=False)
class _Failure:
    status: Status
    fit_error: FitError | None = None
    nominated: str | None = None
    clear_nomination: bool = False


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

"""The Scheduler: builds the state and the collaborators, runs the loop, shuts down.

# pkg/scheduler/scheduler.go (New, Run)
It only drives ``queue/``, ``cache/`` and ``framework/``: the scheduling cycle, the
binding cycle, failure handling, the event handlers and the pod-group cycle are
collaborators (see ``_state``), each handed the state record and what it calls.
"""

from __future__ import annotations

import inspect
import logging
import random
from collections import Counter
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc

from .._errors import SchedulerClosedError
from .._event_loop import loop_clock
from ..api import Pod
from ..cache import Cache, Snapshot
from ..cluster import ClusterStore, InMemoryCluster
from ..config import SchedulerConfig
from ..framework.runtime import Framework, MetricsRecorder, WaitingPods
from ..queue import SchedulingQueue
from ._algorithm import Evaluation, SchedulingAlgorithm
from ._binding_cycle import BindingCycle
from ._diagnosis import SchedulingEvent
from ._event_handlers import EventHandlers
from ._failure import FailureHandler
from ._group_cycle import GroupCycle
from ._group_preemption import GroupPreemption
from ._handle import FrameworkHandle
from ._observer import Observer
from ._profiles import Registry, build_framework
from ._scheduling_cycle import SchedulingCycle
from ._state import PodRecord, SchedulerState

__all__ = ["Scheduler"]

logger = logging.getLogger("ksched.scheduler")


class Scheduler:
    """A kube-scheduler: profiles, queue, cache, the scheduling loop and binding cycles.

    Use :meth:`open` (an async context manager that owns the task group) or run
    :meth:`serve` in your own task group.

    Args:
        config: the KubeSchedulerConfiguration (default: the default profile).
        cluster: where pods and nodes come from and binds go (default: a new
            InMemoryCluster).
        registry: out-of-tree plugins by name.
        seed: seeds the tie-breaks between equally scored nodes (and preemption's offsets).
        observer: called with every timeline event (Queued, Attempted, Bound...).
        explain: record what each attempt evaluated (True), or only for these pod keys.
        plugin_timeout: seconds a scheduling cycle with async plugins (or a binding
            cycle that can wait) may take.
        timings: keep seconds per extension point (``extension_point_seconds``).
        opportunistic_batching: upstream's OpportunisticBatching gate.
        metrics: the Prometheus metrics to record into (``SchedulerMetrics()``).
        rng: the random source of the tie-breaks and of the plugins' ``Handle.rng``
            (default: ``random.Random(seed)``); a simulator that breaks ties another way
            (the first tied node, say) passes its own.
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
        metrics: MetricsRecorder | None = None,
        rng: random.Random | None = None,
    ) -> None:
        config = config or SchedulerConfig()
        store: ClusterStore = cluster if cluster is not None else InMemoryCluster()
        now = loop_clock()
        self.state = st = SchedulerState(
            config=config,
            cluster=store,
            now=now,
            rng=rng if rng is not None else random.Random(seed),
            extenders=_extenders(config, metrics),
            plugin_timeout=plugin_timeout,
            opportunistic_batching=opportunistic_batching,
        )
        self.observer = Observer(
            now,
            on_event=observer,
            events=store.event_recorder,
            timings=timings,
            metrics=metrics,
            explain=explain,
        )
        self._build_profiles(registry)
        self.algorithm = SchedulingAlgorithm(st)
        self.failures = FailureHandler(st, self.observer)
        self.binding = BindingCycle(st, self.observer, self.failures)
        preemption = GroupPreemption(st, self.observer, self.algorithm)
        groups = GroupCycle(
            st, self.observer, self.algorithm, self.binding, self.failures, preemption
        )
        self.cycle = SchedulingCycle(
            st, self.observer, self.algorithm, self.binding, self.failures, groups
        )
        self.handlers = EventHandlers(st, self.observer)
        self._loop_scope: anyio.CancelScope | None = None
        if metrics is not None:
            metrics.watch(self._metrics_state)
            st.queue.on_incoming = metrics.incoming
        store.subscribe(self.handlers.on_change)
        for node in store.nodes():
            self.handlers.on_change("Node", None, node)
        for pod in store.pods():
            self.handlers.on_change("Pod", None, pod)

    def _build_profiles(self, registry: Registry | None) -> None:
        """Each profile's framework (its plugins built once), then the queue they share."""
        st = self.state
        for profile in st.config.profiles:
            handle = FrameworkHandle(st, self.observer, profile.scheduler_name)
            st.frameworks[profile.scheduler_name] = build_framework(
                st.config,
                profile,
                registry=registry,
                handle_for=handle.attach,
                waiting_pods=st.waiting_pods,
            )
        st.gang_profiles = any(fw.group_plugin is not None for fw in st.frameworks.values())
        first = next(iter(st.frameworks.values()))
        st.queue = SchedulingQueue(
            less=first.less,
            sort_key=first.sort_key,
            pre_enqueue=st.pre_enqueue,
            registrations=st.registrations_for,
            initial_backoff=st.config.pod_initial_backoff_seconds,
            max_backoff=st.config.pod_max_backoff_seconds,
            clock=st.now,
        )
        st.registrations = {name: fw.event_registrations() for name, fw in st.frameworks.items()}

    # ---- running --------------------------------------------------------------------

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
        st = self.state
        if st.closed:
            raise SchedulerClosedError("the scheduler was shut down")
        if st.now is anyio.current_time:  # built outside the event loop
            st.now = self.observer.now = loop_clock()
            st.queue.use_clock(st.now)
        async with anyio.create_task_group() as outer:
            await outer.start(st.queue.serve)
            async with anyio.create_task_group() as binding:
                st.binding_tg = binding
                with anyio.CancelScope() as loop_scope:
                    self._loop_scope = loop_scope
                    task_status.started()
                    await self.cycle.run()
                # The loop stopped (aclose): let binding cycles finish or be cancelled.
            outer.cancel_scope.cancel()

    async def aclose(self, grace: float = 5.0) -> None:
        """Stop scheduling; reject waiting pods; give binding cycles ``grace`` seconds;
        then close the plugins within what is left of it."""
        st = self.state
        if st.closed:
            return
        st.closed = True
        deadline = anyio.current_time() + grace
        if self._loop_scope is not None:
            self._loop_scope.cancel()
        for waiting in list(st.waiting_pods):
            waiting.reject("", "scheduler shut down")
        with anyio.move_on_after(grace):
            while st.binding_tasks:
                await anyio.sleep(0.01)
        if st.binding_tg is not None and st.binding_tasks:
            st.binding_tg.cancel_scope.cancel()
        st.cluster.unsubscribe(self.handlers.on_change)
        with anyio.move_on_after(max(deadline - anyio.current_time(), 0.0)):
            await self._close_plugins()

    async def _close_plugins(self) -> None:
        """Call every plugin's ``close()`` once, last started first; a fault is logged."""
        seen: set[int] = set()
        for framework in reversed(list(self.state.frameworks.values())):
            for name, plugin in reversed(list(framework.plugins.items())):
                close = getattr(plugin, "close", None)
                if close is None or id(plugin) in seen:
                    continue
                seen.add(id(plugin))
                try:
                    result = close()
                    if inspect.isawaitable(result):
                        await result
                except Exception:
                    logger.exception("plugin %s: close() failed", name)

    # ---- what callers read ----------------------------------------------------------

    async def evaluate(
        self, pod: Pod, node_names: Sequence[str] | None = None, *, score: bool = False
    ) -> Evaluation:
        """What the pod's profile says of these nodes, without assuming or binding
        anything (see :meth:`SchedulingAlgorithm.evaluate`)."""
        return await self.algorithm.evaluate(pod, node_names, score=score)

    def record_event(
        self,
        regarding: Pod,
        reason: str,
        note: str,
        *,
        related: Pod | None = None,
        event_type: str = "Normal",
        action: str = "",
    ) -> None:
        """An Event for the cluster (kube-scheduler's recorder) and the timeline."""
        self.observer.record_event(
            regarding, reason, note, related=related, event_type=event_type, action=action
        )

    @property
    def idle(self) -> bool:
        """Nothing to do now: queue idle, no binding cycle, no pod waiting at Permit."""
        st = self.state
        return st.binding_tasks == 0 and len(st.waiting_pods) == 0 and st.queue.is_idle()

    @property
    def binding_cycles_in_flight(self) -> int:
        return self.state.binding_tasks

    @property
    def config(self) -> SchedulerConfig:
        return self.state.config

    @property
    def cluster(self) -> ClusterStore:
        return self.state.cluster

    @property
    def cache(self) -> Cache:
        return self.state.cache

    @property
    def snapshot(self) -> Snapshot:
        return self.state.snapshot

    @property
    def queue(self) -> SchedulingQueue:
        return self.state.queue

    @property
    def frameworks(self) -> dict[str, Framework]:
        return self.state.frameworks

    @property
    def waiting_pods(self) -> WaitingPods:
        return self.state.waiting_pods

    @property
    def records(self) -> dict[str, PodRecord]:
        """Pod uid -> what the scheduler knows of it (for reports)."""
        return self.state.records

    @property
    def rng(self) -> random.Random:
        return self.state.rng

    @property
    def extenders(self) -> Sequence[Any]:
        return self.state.extenders

    @property
    def opportunistic_batching(self) -> bool:
        """Whether equal pods may reuse a ranking (upstream's OpportunisticBatching)."""
        return self.state.opportunistic_batching

    @property
    def metrics(self) -> MetricsRecorder | None:
        return self.observer.metrics

    @property
    def explain(self) -> bool | Collection[str]:
        return self.observer.explain

    @property
    def extension_point_seconds(self) -> dict[str, float]:
        """Seconds spent per extension point (with ``timings``)."""
        return self.observer.extension_point_seconds

    @property
    def attempt_seconds(self) -> float:
        """Seconds spent in scheduling attempts (with ``timings``)."""
        return self.observer.attempt_seconds

    @attempt_seconds.setter
    def attempt_seconds(self, value: float) -> None:
        self.observer.attempt_seconds = value

    def _metrics_state(self) -> dict[str, Any]:
        """What the state gauges read when the metrics are collected."""
        st = self.state
        unschedulable: Counter[tuple[str, str]] = Counter()
        for qpi in st.queue.unschedulable_pods():
            profile = qpi.pod.spec.scheduler_name
            for plugin in qpi.unschedulable_plugins | qpi.pending_plugins:
                unschedulable[plugin, profile] += 1
        return {
            "pending": st.queue.pending_counts(),
            "unschedulable": unschedulable,
            "cache": st.cache.sizes(),
            "tasks": {"binding": st.binding_tasks},
        }


def _extenders(config: SchedulerConfig, metrics: MetricsRecorder | None) -> list[Any]:
    """The configured extenders' clients, recording into ``metrics``."""
    if not config.extenders:
        return []
    from ..extender import ExtenderClient

    extenders = [ExtenderClient.new(c) for c in config.extenders]
    for extender in extenders:
        extender.metrics = metrics
    return extenders

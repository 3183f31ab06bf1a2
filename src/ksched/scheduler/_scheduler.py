"""The Scheduler: profiles, queue, cache, the scheduling loop and binding cycles.

# pkg/scheduler/scheduler.go (New, Run)
It only drives ``queue/``, ``cache/`` and ``framework/``; each part of the loop lives in a
module of its own (see ``_base``).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Callable, Collection
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc

from .._errors import SchedulerClosedError
from .._event_loop import loop_clock
from ..cluster import ClusterStore
from ..config import SchedulerConfig
from ..framework.runtime import MetricsRecorder
from ._diagnosis import SchedulingEvent
from ._event_handlers import EventHandlers
from ._group_cycle import GroupCycle
from ._profiles import Registry

__all__ = ["Scheduler"]

logger = logging.getLogger("ksched.scheduler")


class Scheduler(GroupCycle, EventHandlers):
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
        metrics: MetricsRecorder | None = None,
    ) -> None:
        super().__init__(
            config,
            cluster,
            registry=registry,
            seed=seed,
            observer=observer,
            explain=explain,
            plugin_timeout=plugin_timeout,
            timings=timings,
            opportunistic_batching=opportunistic_batching,
            metrics=metrics,
        )
        self.cluster.subscribe(self._on_change)
        for node in self.cluster.nodes():
            self._on_change("Node", None, node)
        for pod in self.cluster.pods():
            self._on_change("Pod", None, pod)

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
        if self._now is anyio.current_time:  # built outside the event loop
            self._now = loop_clock()
            self.queue.use_clock(self._now)
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
        """Stop scheduling; reject waiting pods; give binding cycles ``grace`` seconds;
        then close the plugins within what is left of it."""
        if self._closed:
            return
        self._closed = True
        deadline = anyio.current_time() + grace
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
        with anyio.move_on_after(max(deadline - anyio.current_time(), 0.0)):
            await self._close_plugins()

    @property
    def idle(self) -> bool:
        """Nothing to do now: queue idle, no binding cycle, no pod waiting at Permit."""
        return self._binding_tasks == 0 and len(self.waiting_pods) == 0 and self.queue.is_idle()

    @property
    def binding_cycles_in_flight(self) -> int:
        return self._binding_tasks

    async def _close_plugins(self) -> None:
        """Call every plugin's ``close()`` once, last started first; a fault is logged."""
        seen: set[int] = set()
        for framework in reversed(list(self.frameworks.values())):
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

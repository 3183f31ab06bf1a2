"""The scheduler's state: what every part of the engine reads and changes.

# pkg/scheduler/scheduler.go (Scheduler), schedule_one.go numFeasibleNodesToFind
The parts of the engine are collaborators, one module each, as upstream's files split
them: ``_event_handlers`` (eventhandlers.go), ``_scheduling_cycle``, ``_algorithm``,
``_binding_cycle`` and ``_failure`` (schedule_one.go), ``_group_cycle`` and
``_group_preemption`` (schedule_one_podgroup.go). Each is handed this record and the
collaborators it calls; none inherits from another. ``_scheduler`` builds them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import attrs
import numpy as np

from ..api import Pod
from ..cache import Cache, Snapshot
from ..cluster import ClusterStore
from ..config import SchedulerConfig
from ..framework import ClusterEventWithHint, Status
from ..framework.runtime import Framework, WaitingPods
from ..queue import SchedulingQueue
from ._diagnosis import FitError

if TYPE_CHECKING:
    from ..extender import ExtenderClient

__all__ = ["Failure", "PodRecord", "SchedulerState", "is_cancel", "num_feasible_nodes_to_find"]

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
    first_attempt: Any = None
    """The AttemptReport of its first explained attempt."""


@attrs.define(eq=False)
class Failure:
    """Why an attempt failed, and what it does to the pod's nomination."""

    status: Status
    fit_error: FitError | None = None
    nominated: str | None = None
    clear_nomination: bool = False


def is_cancel(exc: BaseException) -> bool:
    return isinstance(exc, anyio.get_cancelled_exc_class())


@attrs.define(eq=False, kw_only=True)
class SchedulerState:
    """The scheduler's state record (upstream's Scheduler struct, less its methods)."""

    config: SchedulerConfig
    cluster: ClusterStore
    now: Callable[[], float]
    """The event loop's clock (``anyio.current_time`` without its per-call dispatch)."""
    rng: random.Random
    cache: Cache = attrs.field(factory=Cache)
    snapshot: Snapshot = attrs.field(factory=Snapshot)
    waiting_pods: WaitingPods = attrs.field(factory=WaitingPods)
    records: dict[str, PodRecord] = attrs.field(factory=dict)
    frameworks: dict[str, Framework] = attrs.field(factory=dict)
    queue: SchedulingQueue = attrs.field(init=False)
    extenders: Sequence[ExtenderClient] = ()
    """The configured extenders (``extenders:``), called after Filter and Score."""
    plugin_timeout: float = 30.0
    opportunistic_batching: bool = True
    """Reuse an equal pod's ranking when it filled its node (upstream's
    OpportunisticBatching gate); a profile takes part only if all its Filter- and
    Score-side plugins sign pods."""
    registrations: dict[str, Mapping[str, Sequence[ClusterEventWithHint]]] = attrs.field(
        factory=dict
    )
    """Profile -> plugin -> the cluster events it registered."""
    gang_profiles: bool = False
    """A profile places pod groups: unscheduled pod adds are broadcast as events."""
    next_start_node_index: int = 0
    cycle: int = 0
    """The scheduling cycle of the attempt in progress."""
    binding_tasks: int = 0
    """Binding cycles started and not finished (in a task or inline)."""
    binding_tg: anyio.abc.TaskGroup | None = None
    closed: bool = False
    tie_rng: np.random.Generator | None = None

    def framework_for(self, pod: Pod) -> Framework | None:
        """The framework of the pod's profile (``spec.schedulerName``), if it has one."""
        return self.frameworks.get(pod.spec.scheduler_name)

    def record(self, uid: str) -> PodRecord:
        """The pod's record, made on first use."""
        record = self.records.get(uid)
        if record is None:
            record = self.records[uid] = PodRecord()
        return record

    def pre_enqueue(self, pod: Pod) -> Status | None:
        fw = self.framework_for(pod)
        return fw.run_pre_enqueue(pod) if fw is not None else None

    def registrations_for(self, pod: Pod) -> Mapping[str, Sequence[ClusterEventWithHint]]:
        return self.registrations.get(pod.spec.scheduler_name, {})

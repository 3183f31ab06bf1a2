"""The scheduling queue: activeQ, backoffQ, the unschedulable pool, PreEnqueue gating,
queueing hints, in-flight events and nominated pods.

# pkg/scheduler/backend/queue/scheduling_queue.go (PriorityQueue), active_queue.go,
# backoff_queue.go, nominator.go; pkg/scheduler/framework/types.go (QueuedPodInfo)
SchedulerQueueingHints is GA and SchedulerPopFromBackoffQ on (its default) unless
``pop_from_backoff_q=False``.

One class of ~650 lines, on purpose: a pod is in exactly one place at every moment
(activeQ, backoffQ, the unschedulable pool, gated, in flight), and every method keeps
that invariant across all of them, as upstream's PriorityQueue does. The parts that
need no queue state live beside it: ``_backoff``, ``_heap``, ``_hints``, ``_nominator``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel

from .._errors import SchedulerClosedError
from .._event_loop import Checkpoint, loop_checkpoints
from ..api import Pod
from ..framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    PodInfo,
    QueuedPodInfo,
    QueueingHint,
    Status,
)
from ..framework.runtime import ASSIGNED_POD_ADD, FORCE_ACTIVATE, UNSCHEDULABLE_TIMEOUT
from ._backoff import NS, WINDOW_NS, BackoffQueue, align_ns, to_ns
from ._entry import QueuedPod, adopt
from ._heap import KeyedHeap, SortKeyHeap
from ._hints import (
    ACTIVE,
    BACKOFF,
    GATED,
    IN_FLIGHT,
    UNSCHEDULABLE,
    Recorded,
    Strategy,
    entry_uid,
    is_wildcard,
    matches,
)
from ._nominator import Nominator, bare_pod_info
from ._pod_events import pod_scheduling_properties_change
from ._pool import UnschedulablePool

__all__ = [
    "BACKOFF_FLUSH_PERIOD",
    "DEFAULT_POD_INITIAL_BACKOFF",
    "DEFAULT_POD_MAX_BACKOFF",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE",
    "UNSCHEDULABLE_FLUSH_PERIOD",
    "SchedulingQueue",
]

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE = 300.0
"""DefaultPodMaxInUnschedulablePodsDuration: 5 minutes."""
BACKOFF_FLUSH_PERIOD = 1.0
"""flushBackoffQCompleted runs on every whole second (the backoffQ ordering window)."""
UNSCHEDULABLE_FLUSH_PERIOD = 30.0
"""flushUnschedulableEntitiesLeftover runs at start, then every 30 s."""
POPS_PER_YIELD = 16
"""An eager ``pop`` lets the event loop's other tasks run (event handlers, I/O) after at
most this many pods in a row; waiting for a pod lets them run too. One loop pass per pod
costs about a tenth of a plain pod's cycle."""

_POD_SCALE_DOWN = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN)
_POD_TOPOLOGY_SPREAD = "PodTopologySpread"

Registrations = Mapping[str, Sequence[ClusterEventWithHint]]


class SchedulingQueue:
    """Pending pods, from arrival to their scheduling attempts (upstream PriorityQueue).

    A pod is in exactly one of: activeQ (ready, ordered by the profile's QueueSort
    ``less``; ties in the order the pods' timestamps were set), backoffQ (waiting out its
    backoff, by expiry), the unschedulable pool (rejected, waiting for a cluster event or
    the 5-minute flush; gated pods wait there too) or in flight (popped, not yet done).

    Args:
        less: the profile's QueueSort ``less``.
        pre_enqueue: runs the pod's PreEnqueue plugins; a non-success Status gates the
            pod, its ``plugin`` naming the gating plugin.
        registrations: plugin name -> the plugin's EnqueueExtensions registrations, for
            the pod's profile. A registration without hint always queues.
        initial_backoff, max_backoff: podInitialBackoffSeconds / podMaxBackoffSeconds.
        max_in_unschedulable: podMaxInUnschedulablePodsDuration, seconds.
        clock: the time source (seconds); never the wall clock.
        namespace_labels: a namespace's labels, for affinity terms with a namespace
            selector when an assigned pod arrives (None: namespaces have no labels).
        pop_from_backoff_q: the SchedulerPopFromBackoffQ feature (on upstream by default).
    """

    def __init__(
        self,
        *,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        pre_enqueue: Callable[[Pod], Status | None],
        registrations: Callable[[Pod], Registrations],
        initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
        max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
        max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE,
        clock: Callable[[], float] = anyio.current_time,
        namespace_labels: Callable[[str], Mapping[str, str] | None] | None = None,
        pop_from_backoff_q: bool = True,
        sort_key: Callable[[QueuedPod], Any] | None = None,
    ) -> None:
        self._less = less
        self._pre_enqueue = pre_enqueue
        self._registrations = registrations
        self._clock = clock
        self._namespace_labels = namespace_labels
        self._pop_from_backoff_q = pop_from_backoff_q
        self._max_in_unschedulable_ns = to_ns(max_in_unschedulable)

        # With the QueueSort plugin's sort key, activeQ compares precomputed keys.
        self._active: KeyedHeap[QueuedPod] | SortKeyHeap[QueuedPod] = (
            KeyedHeap(entry_uid, self._active_less)
            if sort_key is None
            else SortKeyHeap(entry_uid, lambda qp: (sort_key(qp), qp.sequence))
        )
        self._backoff = BackoffQueue(
            initial=initial_backoff,
            maximum=max_backoff,
            active_less=self._active_less,
            pop_from_backoff_q=pop_from_backoff_q,
        )
        self._unschedulable = UnschedulablePool(registrations)
        self._nominator = Nominator()

        # In flight: popped and not done. ``_log`` holds, in arrival order, a marker (the
        # uid) for each in-flight pod and the events received since the oldest of them;
        # a pod's events are those after its marker (upstream inFlightEvents).
        self._in_flight: dict[str, QueuedPod] = {}
        self.on_incoming: Callable[[str, str], None] | None = None
        """Told ``(queue, event)`` when a pod enters a sub-queue (queue_incoming_pods)."""
        self._incoming_event = "PodAdd"
        self._marker: dict[str, int] = {}
        self._log: list[str | Recorded | None] = []
        self._log_base = 0
        self._latest: dict[str, Pod] = {}
        self._deleted_in_flight: set[str] = set()

        self._cycle = 0
        self._sequence = 0
        self._closed = False
        self._wakeup: anyio.Event | None = None
        self._pops_unyielded = 0
        """Pods popped since ``pop`` last let other tasks run."""
        self._checkpoints: tuple[Checkpoint, Checkpoint] = (
            anyio.lowlevel.checkpoint_if_cancelled,
            anyio.lowlevel.cancel_shielded_checkpoint,
        )
        """Those of the loop ``serve`` runs in (anyio's until then)."""
        self._stop: anyio.Event | None = None

    # ---- ordering and time ------------------------------------------------------------

    def _active_less(self, a: QueuedPod, b: QueuedPod) -> bool:
        if self._less(a, b):
            return True
        return not self._less(b, a) and a.sequence < b.sequence

    def use_clock(self, clock: Callable[[], float]) -> None:
        """Read time from ``clock`` from now on (the same clock, looked up for the loop)."""
        self._clock = clock

    def _now_ns(self) -> int:
        return to_ns(self._clock())

    def _stamp(self, entry: QueuedPod) -> None:
        """Set the timestamp now; the sequence orders pods whose timestamps are equal."""
        entry.timestamp = self._clock()
        self._sequence += 1
        entry.sequence = self._sequence

    def _broadcast(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()
            self._wakeup = None

    # ---- PreEnqueue and the moves between queues ----------------------------------------

    def _run_pre_enqueue(self, entry: QueuedPod) -> None:
        status = self._pre_enqueue(entry.pod)
        if status is None or status.code is Code.SUCCESS:
            entry.gated = False
            entry.gating_plugin = ""
            return
        entry.unschedulable_plugins.add(status.plugin)
        entry.gated = True
        entry.gating_plugin = status.plugin

    def _hold_gated(self, entry: QueuedPod) -> None:
        entry.was_flushed_from_unschedulable = False
        self._unschedulable.put(entry_uid(entry), entry)

    def _move_to_active(
        self, entry: QueuedPod, *, from_backoff: bool = False, now: float | None = None
    ) -> bool:
        """Into activeQ unless PreEnqueue gates it (then into the pool, gated)."""
        if not (self._pop_from_backoff_q and from_backoff):
            self._run_pre_enqueue(entry)
        if entry.gated:
            self._hold_gated(entry)
            if self.on_incoming is not None:
                self.on_incoming(GATED, self._incoming_event)
            return False
        if entry.initial_attempt_timestamp is None:
            # A pod just added was stamped at this instant: no second clock read.
            entry.initial_attempt_timestamp = now if now is not None else self._clock()
        self._unschedulable.pop(entry_uid(entry))
        self._active.add_or_update(entry)
        if self.on_incoming is not None:
            self.on_incoming(ACTIVE, self._incoming_event)
        return True

    def _move_to_backoff(self, entry: QueuedPod) -> bool:
        """Into backoffQ; with PopFromBackoffQ PreEnqueue runs here, not when leaving."""
        if self._pop_from_backoff_q:
            self._run_pre_enqueue(entry)
            if entry.gated:
                self._hold_gated(entry)
                if self.on_incoming is not None:
                    self.on_incoming(GATED, self._incoming_event)
                return False
        self._unschedulable.pop(entry_uid(entry))
        self._backoff.add(entry)
        if self.on_incoming is not None:
            self.on_incoming(BACKOFF, self._incoming_event)
        return True

    def _requeue(self, entry: QueuedPod, strategy: Strategy) -> str:
        """requeueEntityWithQueueingStrategy: where ``entry`` went."""
        if strategy is Strategy.SKIP:
            self._unschedulable.put(entry_uid(entry), entry)
            if self.on_incoming is not None:
                self.on_incoming(UNSCHEDULABLE, self._incoming_event)
            return GATED if entry.gated else UNSCHEDULABLE
        if strategy is Strategy.AFTER_BACKOFF and self._backoff.is_backing_off(
            entry, self._now_ns()
        ):
            return BACKOFF if self._move_to_backoff(entry) else GATED
        return ACTIVE if self._move_to_active(entry) else GATED

    def _wakes_pop(self, where: str) -> bool:
        return where == ACTIVE or (self._pop_from_backoff_q and where == BACKOFF)

    # ---- queueing hints ---------------------------------------------------------------

    def _worth_requeuing(
        self, entry: QueuedPod, event: ClusterEvent, old: Any, new: Any
    ) -> Strategy:
        """isPodWorthRequeuing: ask the hints of the plugins that rejected the pod."""
        pending = entry.pending_plugins
        rejectors = entry.unschedulable_plugins | pending
        if not rejectors:
            return Strategy.AFTER_BACKOFF
        if is_wildcard(event):
            # A wildcard event naming a pod in ``new`` is meant for that pod only.
            if new is not None and (not isinstance(new, Pod) or new.uid != entry_uid(entry)):
                return Strategy.SKIP
            return Strategy.AFTER_BACKOFF
        strategy = Strategy.SKIP
        # In the profile's plugin order, as upstream walks its hint lists.
        for plugin, registrations in self._registrations(entry.pod).items():
            if plugin not in rejectors:
                continue
            for registration in registrations:
                if not matches(registration.event, event):
                    continue
                if registration.hint is not None:
                    try:
                        hint = registration.hint(entry.pod, old, new)
                    except Exception:
                        # A failing hint must not strand the pod: read it as Queue.
                        hint = QueueingHint.QUEUE
                    if hint is QueueingHint.SKIP:
                        continue
                if plugin in pending:
                    return Strategy.IMMEDIATELY
                if not pending:
                    return Strategy.AFTER_BACKOFF
                strategy = Strategy.AFTER_BACKOFF
        return strategy

    def _gating_plugin_registered(self, entry: QueuedPod, event: ClusterEvent) -> bool:
        registrations = self._registrations(entry.pod).get(entry.gating_plugin, ())
        return any(matches(r.event, event) for r in registrations)

    def _move_entries(
        self, entries: Iterable[QueuedPod], event: ClusterEvent, old: Any, new: Any
    ) -> None:
        """moveEntitiesToActiveOrBackoffQueue over a snapshot of pool entries."""
        wildcard = is_wildcard(event)
        self._incoming_event = event.label or str(event)
        activated = False
        # Registrations are per profile: decide once per (profile, gating plugin) and event,
        # so a pool full of gated pods costs a dict look-up each, not a registration scan.
        gate_open: dict[tuple[str, str | None], bool] = {}
        for entry in list(entries):
            if entry.gated and not wildcard:
                key = (entry.pod.spec.scheduler_name, entry.gating_plugin)
                registered = gate_open.get(key)
                if registered is None:
                    registered = gate_open[key] = self._gating_plugin_registered(entry, event)
                if not registered:
                    continue
            strategy = self._worth_requeuing(entry, event, old, new)
            if strategy is Strategy.SKIP:
                continue
            self._unschedulable.pop(entry_uid(entry))
            if self._wakes_pop(self._requeue(entry, strategy)):
                activated = True
        if self._in_flight:
            self._log.append(Recorded(event, old, new))
        if activated:
            self._broadcast()

    # ---- in-flight bookkeeping ----------------------------------------------------------

    def _events_since_pop(self, uid: str) -> list[Recorded] | None:
        mark = self._marker.get(uid)
        if mark is None:
            return None
        tail = self._log[mark - self._log_base + 1 :]
        return [item for item in tail if isinstance(item, Recorded)]

    def _strategy_for_failed(self, entry: QueuedPod) -> Strategy:
        """determineSchedulingHintForInFlightPod: replay the events seen in flight."""
        if not entry.unschedulable_plugins and not entry.pending_plugins:
            return Strategy.AFTER_BACKOFF
        events = self._events_since_pop(entry_uid(entry))
        if events is None:
            return Strategy.AFTER_BACKOFF
        strategy = Strategy.SKIP
        for recorded in events:
            found = self._worth_requeuing(entry, recorded.event, recorded.old, recorded.new)
            if found is Strategy.IMMEDIATELY:
                return found
            if found is Strategy.AFTER_BACKOFF:
                strategy = found
                if not entry.pending_plugins:
                    return strategy
        return strategy

    def _record_for(self, uid: str, events: Iterable[ClusterEvent], old: Any, new: Any) -> bool:
        """addEventsIfPodInFlight: whether ``uid`` is in flight."""
        if uid not in self._in_flight:
            return False
        self._log.extend(Recorded(event, old, new) for event in events)
        return True

    # ---- pending pods -------------------------------------------------------------------

    def add(self, pod: Pod) -> None:
        """A new pending pod: nominated as its status says, then PreEnqueue, then activeQ
        (or the pool, gated). A pod the queue already holds is treated as an update."""
        known = self._find(pod.uid)
        if known is not None:
            self.update(known.pod, pod)
            return
        entry = QueuedPod(pod_info=PodInfo.of(pod))
        self._stamp(entry)
        self._nominator.add(pod, None)
        self._incoming_event = "PodAdd"
        if self._move_to_active(entry, now=entry.timestamp):
            self._broadcast()

    def update(self, old: Pod, new: Pod) -> None:
        """Upstream Update: an in-flight pod records the update's events; a queued pod is
        updated in place; a pod in the pool moves if the hints of its rejecting (or
        gating) plugins say the update may make it schedulable; an unknown pod is added."""
        self._incoming_event = "PodUpdate"
        uid = old.uid
        events = pod_scheduling_properties_change(new, old)
        if self._record_for(uid, events, old, new):
            self._latest[uid] = new
            return
        queued = self._active.get(uid) or self._backoff.get(uid)
        if queued is not None:
            queued.pod_info = PodInfo.of(new)
            if uid in self._active:
                self._active.add_or_update(queued)
            else:
                self._backoff.update(queued)
            self._nominator.update(old, new)
            return
        entry = self._unschedulable.get(uid)
        if entry is None:
            self.add(new)
            return
        entry.pod_info = PodInfo.of(new)
        self._nominator.update(old, new)
        for event in events:
            where = self._requeue(entry, self._worth_requeuing(entry, event, old, new))
            if where not in (UNSCHEDULABLE, GATED):
                if self._wakes_pop(where):
                    self._broadcast()
                break

    def delete(self, pod: Pod) -> None:
        """Remove the pod wherever it is and drop its nomination. An in-flight pod is
        remembered as deleted: its failed attempt will not requeue it."""
        uid = pod.uid
        self._nominator.delete(pod)
        if self._active.delete(uid) is not None or self._backoff.delete(uid) is not None:
            return
        if self._unschedulable.pop(uid) is not None:
            return
        if uid in self._in_flight:
            self._deleted_in_flight.add(uid)

    def activate(self, pods: Iterable[Pod]) -> None:
        """Move these pods from the pool or backoffQ to activeQ now. An in-flight pod gets
        a ForceActivate event of its own: if its attempt fails it skips the pool."""
        activated = False
        self._incoming_event = "ForceActivate"
        for pod in pods:
            uid = pod.uid
            queued = self._active.get(uid)
            if queued is not None:
                # QueueSort may order it differently now (a waiting gang's siblings go first).
                self._active.add_or_update(queued)
                continue
            entry = self._unschedulable.get(uid)
            from_backoff = False
            if entry is None:
                entry = self._backoff.delete(uid)
                from_backoff = entry is not None
            if entry is not None:
                if self._move_to_active(entry, from_backoff=from_backoff):
                    activated = True
                continue
            self._record_for(uid, (FORCE_ACTIVATE,), None, pod)
        if activated:
            self._broadcast()

    # ---- the scheduling loop's side ---------------------------------------------------------

    async def pop(self, *, eager: bool = False) -> QueuedPodInfo:
        """The head of activeQ, or (PopFromBackoffQ) of backoffQ when activeQ is empty.

        Blocks until a pod is available; cancellable. Counts the attempt, starts a new
        scheduling cycle and marks the pod in flight until ``done``. Other tasks run
        before a pod at hand is returned; with ``eager``, only every
        ``POPS_PER_YIELD`` pods in a row.

        Raises:
            SchedulerClosedError: the queue was closed (also while waiting).
        """
        checkpoint_if_cancelled, cancel_shielded_checkpoint = self._checkpoints
        await checkpoint_if_cancelled()
        while True:
            if self._closed:
                raise SchedulerClosedError("the scheduling queue is closed")
            entry = self._active.pop()
            if entry is None and self._pop_from_backoff_q:
                entry = self._backoff.pop_poppable()
            if entry is not None:
                if entry_uid(entry) in self._in_flight:
                    continue  # tracked twice: upstream discards the duplicate
                self._start_attempt(entry)
                self._pops_unyielded += 1
                if not eager or self._pops_unyielded >= POPS_PER_YIELD:
                    self._pops_unyielded = 0
                    await cancel_shielded_checkpoint()
                return entry
            if self._wakeup is None:
                self._wakeup = anyio.Event()
            self._pops_unyielded = 0
            await self._wakeup.wait()

    def pop_specific(self, pods: Iterable[Pod]) -> list[QueuedPodInfo]:
        """Take these pods out of activeQ, backoffQ or the pool (not the gated) for the
        current attempt, as ``pop`` does for the head: the other members of a pod group
        join the popped one's cycle (upstream PopSpecificPod). Pods the queue does not
        hold as such are left out."""
        taken: list[QueuedPodInfo] = []
        for pod in pods:
            uid = pod.uid
            if uid in self._in_flight:
                continue
            entry = self._active.delete(uid) or self._backoff.delete(uid)
            if entry is None:
                pooled = self._unschedulable.get(uid)
                if pooled is None or pooled.gated:
                    continue
                self._unschedulable.pop(uid)
                entry = pooled
            self._start_attempt(entry, new_cycle=False)
            taken.append(entry)
        return taken

    def _start_attempt(self, entry: QueuedPod, *, new_cycle: bool = True) -> None:
        uid = entry_uid(entry)
        entry.attempts += 1
        if entry.initial_attempt_timestamp is None:
            entry.initial_attempt_timestamp = self._clock()
        if new_cycle:
            self._cycle += 1
        self._in_flight[uid] = entry
        self._nominator.touch(uid)  # handed out bare while in flight
        self._marker[uid] = self._log_base + len(self._log)
        self._log.append(uid)

    def done(self, uid: str) -> None:
        """The pod's attempt (scheduling and binding) is over. Idempotent."""
        if self._in_flight.pop(uid, None) is None:
            return
        self._nominator.touch(uid)  # handed out as queued again (or gone)
        self._latest.pop(uid, None)
        self._deleted_in_flight.discard(uid)
        mark = self._marker.pop(uid)
        log = self._log
        log[mark - self._log_base] = None
        # Events before the oldest in-flight pod concern nobody any more.
        drop = 0
        while drop < len(log) and not isinstance(log[drop], str):
            drop += 1
        if drop:
            del log[:drop]
            self._log_base += drop

    @property
    def scheduling_cycle(self) -> int:
        """The number of pods popped so far."""
        return self._cycle

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, scheduling_cycle: int) -> None:
        """Requeue a pod whose attempt failed, then mark it done.

        ``qpi.unschedulable_plugins`` / ``pending_plugins`` name the plugins that rejected
        it; both empty means an error (backoff by consecutive errors). The events received
        while it was in flight decide: one its rejecting plugins' hints queue for sends it
        to backoffQ (or activeQ when its backoff is over, or at once for a Pending plugin);
        otherwise it rests in the unschedulable pool. Call it before ``done``. A pod the
        queue already holds, or one deleted while in flight, is left alone.
        """
        entry = self._adopt_failed(qpi)
        uid = entry_uid(entry)
        try:
            if uid in self._deleted_in_flight or self._queued(uid) is not None:
                return
            latest = self._latest.get(uid)
            if latest is not None:
                entry.pod_info = PodInfo.of(latest)
            if not entry.unschedulable_plugins and not entry.pending_plugins:
                entry.consecutive_errors += 1
            else:
                entry.unschedulable_count += 1
                entry.consecutive_errors = 0
            self._stamp(entry)
            entry.expiry_ns = None
            entry.backoff_expiry = 0.0
            entry.was_flushed_from_unschedulable = False
            self._incoming_event = "ScheduleAttemptFailure"
            where = self._requeue(entry, self._strategy_for_failed(entry))
            if self._wakes_pop(where):
                self._broadcast()
        finally:
            self.done(uid)

    def _adopt_failed(self, qpi: QueuedPodInfo) -> QueuedPod:
        if isinstance(qpi, QueuedPod):
            return qpi
        entry = self._in_flight.get(qpi.pod.uid)
        if entry is None:
            return adopt(qpi)
        entry.pod_info = qpi.pod_info
        entry.unschedulable_plugins = qpi.unschedulable_plugins
        entry.pending_plugins = qpi.pending_plugins
        return entry

    # ---- cluster events -----------------------------------------------------------------

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old: object,
        new: object,
        precheck: Callable[[Pod], bool] | None = None,
    ) -> None:
        """A cluster event: move the pool's pods (those passing ``precheck``) that the
        hints of their rejecting plugins queue; record it for in-flight pods. Only the
        pods of plugins registered for the event are looked at (the pool's index)."""
        if not len(self._unschedulable):  # the usual bind: nothing to move, only to record
            self._move_entries((), event, old, new)
            return
        entries: Iterable[QueuedPod] = self._unschedulable.candidates(event)
        if precheck is not None:
            entries = [entry for entry in entries if precheck(entry.pod)]
        self._move_entries(entries, event, old, new)

    def _with_cross_topology_term(self, pod: Pod) -> list[QueuedPod]:
        """Pool pods an assigned ``pod`` may unblock: rejected by PodTopologySpread in its
        namespace, or with a required affinity term that ``pod`` matches."""
        labels = self._namespace_labels(pod.namespace) if self._namespace_labels else None
        found = []
        for entry in self._unschedulable.values():
            if (
                _POD_TOPOLOGY_SPREAD in entry.unschedulable_plugins
                and entry.pod.namespace == pod.namespace
            ) or any(term.matches(pod, labels) for term in entry.pod_info.required_affinity_terms):
                found.append(entry)
        return found

    def assigned_pod_added(self, pod: Pod) -> None:
        """A pod was bound (or found running): AssignedPodAdd, for cross-topology pods.

        Upstream's pre-filtered path for schedulers without queueing hints; the Scheduler
        offers bound-pod events to every pool pod through ``move_all_to_active_or_backoff``.
        """
        self._move_entries(self._with_cross_topology_term(pod), ASSIGNED_POD_ADD, None, pod)

    def assigned_pod_updated(self, old: Pod, new: Pod, event: ClusterEvent) -> None:
        """An assigned pod changed: a scale-down may free room for any pool pod; other
        updates concern the cross-topology pods only (the pre-filtered path, as above)."""
        if matches(_POD_SCALE_DOWN, event):
            self.move_all_to_active_or_backoff(event, old, new)
        else:
            self._move_entries(self._with_cross_topology_term(new), event, old, new)

    # ---- periodic flushes ---------------------------------------------------------------------

    def flush_backoff_completed(self) -> None:
        """Move the pods whose backoff is over from backoffQ to activeQ."""
        activated = False
        self._incoming_event = "BackoffComplete"
        for entry in self._backoff.pop_all_completed(self._now_ns()):
            if self._move_to_active(entry, from_backoff=True):
                activated = True
        if activated:
            self._broadcast()

    def flush_unschedulable_leftover(self) -> None:
        """Move pods that failed more than ``max_in_unschedulable`` ago (strictly) with
        the UnschedulableTimeout event."""
        now = self._now_ns()
        stale = []
        for entry in self._unschedulable.values():
            if now - to_ns(entry.timestamp) > self._max_in_unschedulable_ns:
                entry.was_flushed_from_unschedulable = True
                stale.append(entry)
        if stale:
            self._move_entries(stale, UNSCHEDULABLE_TIMEOUT, None, None)

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Run the periodic flushes until cancelled or closed (upstream Run): backoffQ on
        every whole second of the clock, the unschedulable leftovers at start and then
        every 30 s. Sleeps with anyio; the clock must advance with it."""
        if self._stop is None:
            self._stop = anyio.Event()
        self._checkpoints = loop_checkpoints()
        if self._closed:
            task_status.started()
            return
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._serve_backoff)
            tg.start_soon(self._serve_leftover)
            task_status.started()
            await self._stop.wait()
            tg.cancel_scope.cancel()

    async def _serve_backoff(self) -> None:
        while True:
            now = self._now_ns()
            await anyio.sleep((align_ns(now) + WINDOW_NS - now) / NS)
            self.flush_backoff_completed()

    async def _serve_leftover(self) -> None:
        while True:
            self.flush_unschedulable_leftover()
            await anyio.sleep(UNSCHEDULABLE_FLUSH_PERIOD)

    def close(self) -> None:
        """Stop ``serve``; ``pop`` raises SchedulerClosedError from now on."""
        self._closed = True
        for uid in list(self._in_flight):
            self.done(uid)
        if self._stop is not None:
            self._stop.set()
        self._broadcast()

    # ---- nominator ----------------------------------------------------------------------------

    def add_nominated_pod(self, pod_info: PodInfo, node_name: str) -> None:
        """Nominate the pod to ``node_name`` (empty: clear its nomination)."""
        self._nominator.add(pod_info.pod, node_name)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        self._nominator.delete(pod)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """The pods nominated to the node, as the queue holds them now; a pod the queue
        does not hold (in flight) comes back as its bare name, as upstream."""
        result = []
        for ref in self._nominator.for_node(node_name):
            entry = self._queued(ref.uid)
            result.append(entry.pod_info if entry is not None else bare_pod_info(ref))
        return result

    def nominated_node_names(self) -> Collection[str]:
        """The nodes that have pods nominated to them."""
        return self._nominator.nodes()

    def has_nominated_pods(self) -> bool:
        """Whether any pod is nominated (lets the scheduler skip the nominated-pods pass)."""
        return self._nominator.has_any()

    def nominated_node(self, uid: str) -> str | None:
        """The node the pod is nominated to, if any."""
        return self._nominator.node_of(uid)

    # ---- introspection --------------------------------------------------------------------------

    def _queued(self, uid: str) -> QueuedPod | None:
        return self._active.get(uid) or self._backoff.get(uid) or self._unschedulable.get(uid)

    def _find(self, uid: str) -> QueuedPod | None:
        return self._queued(uid) or self._in_flight.get(uid)

    def where(self, uid: str) -> str | None:
        """``"active"``, ``"backoff"``, ``"unschedulable"``, ``"gated"``, ``"in-flight"``,
        or None for a pod the queue does not hold."""
        if uid in self._active:
            return ACTIVE
        if uid in self._backoff:
            return BACKOFF
        entry = self._unschedulable.get(uid)
        if entry is not None:
            return GATED if entry.gated else UNSCHEDULABLE
        if uid in self._in_flight:
            return IN_FLIGHT
        return None

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self._find(uid)

    def pending_pods(self) -> list[QueuedPodInfo]:
        """activeQ in pop order, then backoffQ, then the pool (in-flight pods excluded)."""
        less = self._active_less

        def compare(a: QueuedPod, b: QueuedPod) -> int:
            return -1 if less(a, b) else int(less(b, a))

        active = sorted(self._active.values(), key=functools.cmp_to_key(compare))
        return [*active, *self._backoff.values(), *self._unschedulable.values()]

    def in_flight_pods(self) -> list[QueuedPodInfo]:
        return list(self._in_flight.values())

    def pending_counts(self) -> dict[str, int]:
        """Pending pods by sub-queue, as scheduler_pending_pods counts them."""
        gated = self._unschedulable.gated
        return {
            ACTIVE: len(self._active),
            BACKOFF: len(self._backoff),
            UNSCHEDULABLE: len(self._unschedulable) - gated,
            GATED: gated,
        }

    def unschedulable_pods(self) -> list[QueuedPodInfo]:
        """The pods in the unschedulable pool that were attempted (not the gated)."""
        return [e for e in self._unschedulable.values() if not e.gated]

    def is_idle(self) -> bool:
        """Nothing in activeQ or backoffQ and nothing in flight."""
        return not self._active and not len(self._backoff) and not self._in_flight

    def next_wakeup(self) -> float | None:
        """When ``flush_backoff_completed`` first moves a pod out of backoffQ: a backoff
        expiring at E (aligned to its 1 s window) completes at E + 1 s; a completed one
        gives the current time. None when backoffQ is empty."""
        now = self._now_ns()
        found = self._backoff.next_completion_ns(now)
        if found is None:
            return None
        return found / NS if found != now else self._clock()

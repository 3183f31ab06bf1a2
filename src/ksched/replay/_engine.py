"""Running a trace on the simulated clock under a configuration.

Arrivals, updates and deletions happen at their recorded times (trio's MockClock jumps
through the waits). Pods whose ``schedulerName`` names a profile of the configuration
are ksched's: it schedules them (or, with ``follow_recorded``, judges the recorded
decision and places them where they were recorded). Every other pod is kept where the
recording bound it, at the time it was bound. Deletions are replayed as recorded, those
that were preemptions in the recording included.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import anyio
import attrs

from ..api import KubeObject, ObjectMeta, Pod
from ..cluster import KINDS, InMemoryCluster, object_key
from ..config import SchedulerConfig
from ..scheduler import AttemptReport, Registry, Scheduler, SchedulingEvent
from ..trace import Op, Trace, TraceEvent
from ._explain import summarize_attempt, summarize_evaluation
from ._follow import judge_decision
from ._metrics import UsageTracker

__all__ = ["PodFate", "ReplayRun"]

_OUTCOMES = frozenset({"Bound", "Unschedulable", "SchedulerError", "WaitingOnPermit"})
BURST_SECONDS = 1.0
"""``--follow-recorded``: bindings at most this far apart, with only arrivals and other
bindings between them, are one burst, judged in the recorded scheduler's queue order."""
_DONE = AttemptReport()
"""Put in place of a first attempt once it was summarized, so that it is not kept."""


@attrs.define(eq=False)
class PodFate:
    """What happened to one pod, in the recording and in the replay."""

    key: str
    uid: str
    scheduler: str
    ours: bool
    created: float
    recorded_node: str | None = None
    recorded_bound: float | None = None
    controller: str | None = None
    node: str | None = None
    bound: float | None = None
    deleted: float | None = None
    evicted: float | None = None
    preset: bool = False
    """Bound when it appeared (initial state, or created with ``nodeName``)."""
    decision: dict[str, Any] | None = None
    explanation: dict[str, Any] | None = None


class ReplayRun:
    """One replay: the cluster, the scheduler and the fate of every pod."""

    def __init__(
        self,
        config: SchedulerConfig,
        *,
        follow_recorded: bool = False,
        seed: int = 0,
        registry: Registry | None = None,
        explain: bool = True,
    ) -> None:
        self.config = config
        self.follow = follow_recorded
        self.cluster = InMemoryCluster(keep_events=False)
        self.usage = UsageTracker()
        self.cluster.subscribe(self.usage.on_change)
        self.cluster.subscribe(self._on_change)
        self.profiles: Collection[str] = {p.scheduler_name for p in config.profiles}
        self.fates: list[PodFate] = []
        self.live: dict[str, PodFate] = {}
        """Pods in the cluster now, by key."""
        self.named: dict[str, PodFate] = {}
        """The last pod of each key, deleted or not."""
        self.preemptions: list[dict[str, Any]] = []
        self.end: float | None = None
        self.last_t = 0.0
        self.t0 = 0.0
        self.serial = 0
        self._removing = False
        self._held: list[tuple[PodFate, str, float]] = []
        """``--follow-recorded``: bindings of a burst not judged yet."""
        self.explain = explain and not follow_recorded
        self.scheduler = Scheduler(
            config,
            self.cluster,
            registry=registry,
            seed=seed,
            explain=self.explain,
            observer=self._observe if self.explain else None,
        )

    def now(self) -> float:
        return anyio.current_time() - self.t0

    # ---- the cluster's changes ----------------------------------------------------------

    def _on_change(self, kind: str, old: Any, new: Any) -> None:
        if kind != "Pod":
            return
        if new is not None and new.spec.node_name and (old is None or not old.spec.node_name):
            fate = self.live.get(new.key)
            if fate is not None and fate.uid == new.uid and fate.node is None:
                fate.node, fate.bound = new.spec.node_name, self.now()
        elif new is None and not self._removing:  # the scheduler evicted it (preemption)
            fate = self.live.get(old.key)
            if fate is not None and fate.uid == old.uid:
                fate.evicted = self.now()
                self.preemptions.append(
                    {"victim": old.key, "node": old.spec.node_name, "t": round(fate.evicted, 3)}
                )
                del self.live[old.key]

    def _observe(self, event: SchedulingEvent) -> None:
        if event.kind not in _OUTCOMES:
            return
        fate = self.live.get(event.pod)
        record = self.scheduler.records.get(fate.uid) if fate is not None else None
        if fate is None or record is None or record.first_attempt in (None, _DONE):
            return
        assert record.first_attempt is not None
        fw = self.scheduler.frameworks.get(fate.scheduler)
        weights = fw.weights if fw is not None else {}
        fate.explanation = summarize_attempt(record.first_attempt, weights)
        record.first_attempt = _DONE

    # ---- applying the trace -------------------------------------------------------------

    def _stamp(self, obj: KubeObject, t: float) -> KubeObject:
        """The object created at trace time ``t`` (creation times read as the trace's)."""
        meta = getattr(obj, "metadata", None)
        if not isinstance(meta, ObjectMeta):
            return obj
        uid = meta.uid
        if isinstance(obj, Pod) and not uid:
            self.serial += 1
            uid = f"{meta.namespace}/{meta.name}#{self.serial}"
        stamped = attrs.evolve(meta, uid=uid, creation_timestamp=self.t0 + t)
        out: KubeObject = attrs.evolve(obj, metadata=stamped)  # type: ignore[arg-type]
        return out

    def apply_initial(self, obj: KubeObject) -> None:
        self._create(obj, 0.0)

    async def handle(self, event: TraceEvent) -> None:
        """Apply one trace record (the clock already stands at its time)."""
        op, t = event.op, event.t
        self.last_t = t
        if self.follow:
            ours = op is Op.BIND and self._ours(event.key)
            if self._held and (
                not (ours or _leaves_nodes(event)) or t - self._held[0][2] > BURST_SECONDS
            ):
                await self._judge_held()
            if ours:
                assert event.node is not None
                self._held.append((self.live[event.key], event.node, t))
                return
        if op in (Op.CREATE, Op.INIT):
            assert event.object is not None
            self._create(event.object, t)
        elif op is Op.UPDATE:
            assert event.object is not None
            self._update(event.object, t)
        elif op is Op.DELETE:
            self._delete(event.kind, event.key, t)
        elif op is Op.BIND:
            assert event.node is not None
            await self._bind(event.key, event.node, t)
        elif op is Op.SCHEDULED:
            fate = self.named.get(event.key)  # the Event may come after a quick deletion
            if fate is not None:
                fate.controller = event.controller
        elif op is Op.END:
            self.end = t

    def _create(self, obj: KubeObject, t: float) -> None:
        key = object_key(obj)
        if isinstance(obj, Pod):
            if self.cluster.get_pod(key) is not None:  # created twice: read as an update
                self._update(obj, t)
                return
            pod = self._stamp(obj, t)
            assert isinstance(pod, Pod)
            node = pod.spec.node_name
            if node and pod.status.start_time is None:
                pod = attrs.evolve(pod, status=attrs.evolve(pod.status, start_time=self.t0 + t))
            name = pod.spec.scheduler_name
            fate = PodFate(key, pod.uid, name, ours=name in self.profiles and not node, created=t)
            if node:
                fate.preset = True
                fate.recorded_node, fate.recorded_bound = node, t
            self.fates.append(fate)
            self.live[key] = self.named[key] = fate
            self.cluster.apply(pod)
            return
        self._apply_other(obj, key, t)

    def _apply_other(self, obj: KubeObject, key: str, t: float) -> None:
        """A node or other object: created now, or changed (keeping uid and creation)."""
        existing = self.cluster.get(KINDS[type(obj)], key)
        self.cluster.apply(self._stamp(obj, t) if existing is None else _same_meta(obj, existing))

    def _update(self, obj: KubeObject, t: float) -> None:
        key = object_key(obj)
        if not isinstance(obj, Pod):
            self._apply_other(obj, key, t)
            return
        current = self.cluster.get_pod(key)
        fate = self.live.get(key)
        if current is None or fate is None:
            return  # evicted in this replay, or never seen: nothing to update
        if fate.ours or not obj.spec.node_name or obj.spec.node_name == current.spec.node_name:
            # ksched's placement and nomination stand; the rest is the recording's
            spec = attrs.evolve(obj.spec, node_name=current.spec.node_name)
            status = attrs.evolve(
                obj.status,
                nominated_node_name=current.status.nominated_node_name,
                start_time=current.status.start_time,
            )
            meta = attrs.evolve(
                obj.metadata,
                uid=current.metadata.uid,
                creation_timestamp=current.metadata.creation_timestamp,
            )
            updated = Pod(metadata=meta, spec=spec, status=status)
            if updated != current:
                self.cluster.apply(updated)

    def _delete(self, kind: str, key: str, t: float) -> None:
        if self.cluster.get(kind, key) is None:
            return
        if kind == "Pod":
            fate = self.live.pop(key, None)
            if fate is not None:
                fate.deleted = t
        self._removing = True
        try:
            self.cluster.remove(kind, key)
        finally:
            self._removing = False

    def _ours(self, key: str) -> bool:
        fate = self.live.get(key)
        return fate is not None and fate.ours

    async def _judge_held(self) -> None:
        """Judge a burst of bindings in the order the recorded scheduler's queue decided
        them (PrioritySort: higher priority first, then the earlier arrival): its
        binding cycles run in parallel and reach the watch in another order, while each
        decision saw the ones made before it (assumed) and none after."""
        held, self._held = self._held, []
        for fate, node, t in sorted(held, key=self._queue_order):
            await self._bind(fate.key, node, t)

    def _queue_order(self, item: tuple[PodFate, str, float]) -> tuple[int, float]:
        fate, _, t = item
        pod = self.cluster.get_pod(fate.key)
        priority = (pod.spec.priority or 0) if pod is not None else 0
        # a pod that waited (retried after backoff) was queued again near its binding
        return -priority, max(fate.created, t - BURST_SECONDS)

    async def _bind(self, key: str, node: str, t: float) -> None:
        fate = self.live.get(key)
        pod = self.cluster.get_pod(key)
        if fate is None or pod is None:
            return
        fate.recorded_node, fate.recorded_bound = node, t
        if pod.spec.node_name:
            return  # placed already (by ksched, or bound at creation)
        if fate.ours and not self.follow:
            return  # ksched places it itself
        if fate.ours:
            fate.decision = await judge_decision(self.scheduler, pod, node)
        if self.cluster.get_node(node) is None:
            return  # bound to a node the trace never showed: left pending
        self.cluster.bind_now(pod, node)

    # ---- running ----------------------------------------------------------------------

    async def run(self, trace: Trace) -> None:
        """Apply the whole trace, waiting for each record's time."""
        self.t0 = anyio.current_time()
        async with anyio.create_task_group() as tg:
            if not self.follow:
                await tg.start(self.scheduler.serve)
            for obj in trace.initial:
                self.apply_initial(obj)
            self.usage.sample(0.0, force=True)
            for event in trace.events:
                wait = event.t - self.now()
                if wait > 0:
                    await anyio.sleep(wait)  # the scheduler acts on what came before
                    self.usage.sample(self.last_t)
                await self.handle(event)
            if self._held:
                await self._judge_held()
            end = self.end if self.end is not None else self.last_t
            if end > self.now():
                await anyio.sleep(end - self.now())
            await anyio.wait_all_tasks_blocked()
            self.end = end
            self.usage.sample(self.now(), force=True)
            self._final_explanations()
            if self.follow:
                await self._judge_pending()
            tg.cancel_scope.cancel()

    async def _judge_pending(self) -> None:
        """``--follow-recorded``: where ksched would put each pod the recording left
        pending at the end (not a decision of the recording: not counted in agreement)."""
        for fate in self.live.values():
            pod = self.cluster.get_pod(fate.key)
            if not fate.ours or pod is None or pod.spec.node_name:
                continue
            evaluation = await self.scheduler.evaluate(pod, score=True)
            fate.explanation = summarize_evaluation(evaluation)

    def _final_explanations(self) -> None:
        """Summaries of first attempts still open at the end (pods that never got an
        outcome: waiting, or attempted while the trace stopped)."""
        if not self.explain:
            return
        for fate in self.live.values():
            record = self.scheduler.records.get(fate.uid)
            if record is None or record.first_attempt in (None, _DONE):
                continue
            assert record.first_attempt is not None
            fw = self.scheduler.frameworks.get(fate.scheduler)
            fate.explanation = summarize_attempt(
                record.first_attempt, fw.weights if fw is not None else {}
            )
            record.first_attempt = _DONE


def _same_meta(obj: KubeObject, existing: Any) -> KubeObject:
    """An update keeps the uid and creation time the object was created with."""
    meta = getattr(obj, "metadata", None)
    old = getattr(existing, "metadata", None)
    if not isinstance(meta, ObjectMeta) or not isinstance(old, ObjectMeta):
        return obj
    kept = attrs.evolve(meta, uid=old.uid, creation_timestamp=old.creation_timestamp)
    out: KubeObject = attrs.evolve(obj, metadata=kept)  # type: ignore[arg-type]
    return out


def _leaves_nodes(event: TraceEvent) -> bool:
    """Whether a record leaves every node's pods as they are: a Scheduled Event, or a
    pending pod's arrival (which changes no score)."""
    if event.op is Op.SCHEDULED:
        return True
    obj = event.object
    return event.op is Op.CREATE and isinstance(obj, Pod) and not obj.spec.node_name

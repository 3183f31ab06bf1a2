"""Running a scenario on a simulated clock; ``run_scenario`` gives the JSON report."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import anyio
import attrs

from ..api import KubeObject, Node, ObjectMeta, Pod, pod_requests
from ..cluster import InMemoryCluster, object_key
from ..framework import Code, Status
from ..framework.runtime import MetricsRecorder
from ..scheduler import AttemptReport, PodRecord, Registry, Scheduler, SchedulingEvent
from ._claims import stateful_set_claims
from ._controllers import Controllers, owner_of
from ._scenario import Scenario, ScenarioError
from ._task_order import task_order_seeded

ExplainSink = Callable[[str, dict[str, Any]], None]
"""Takes a pod's explanation (``namespace/name``, the ``explain`` entry) as it is made."""

_OUTCOMES = frozenset({"Bound", "Unschedulable", "SchedulerError", "WaitingOnPermit"})
_NOT_SCHEDULED = ("unschedulable", "backoff")
"""Where a pod whose attempt failed waits (its phase is then Unschedulable)."""
_STREAMED = AttemptReport()
"""Put in place of a first attempt once it went to the sink, so that it is not kept."""


class _Usage:
    """Requested vs allocatable cpu / memory / pods per node.

    The report is read from the cluster at the end (the requests of the pods bound to
    each node), so a run keeps nothing per change. With ``history``, every change of a
    bound pod is also recorded as a sample ``[time, node, cpu cores, memory bytes, pods]``
    (the node's totals after it), from totals kept as the cluster changes.
    """

    def __init__(
        self, cluster: InMemoryCluster, now: Callable[[], float], *, history: bool
    ) -> None:
        self.cluster = cluster
        self.now = now
        self.requested: dict[str, list[int]] = {}
        self.samples: list[list[Any]] | None = None
        if history:
            self.samples = []
            cluster.subscribe(self.on_change)

    def on_change(self, kind: str, old: Any, new: Any) -> None:
        """A ClusterListener (with ``history``): a sample per change of a bound pod."""
        if kind != "Pod":
            return
        if old is not None and old.spec.node_name:
            if new is not None and new.spec is old.spec:
                return  # a status change of a running pod
            self._account(old, -1)
        if new is not None and new.spec.node_name:
            self._account(new, 1)

    def _account(self, pod: Pod, sign: int) -> None:
        node = pod.spec.node_name
        assert node is not None
        requests = pod_requests(pod)
        totals = self.requested.setdefault(node, [0, 0, 0])
        totals[0] += sign * requests.get("cpu", 0)
        totals[1] += sign * requests.get("memory", 0)
        totals[2] += sign
        assert self.samples is not None
        self.samples.append([round(self.now(), 6), node, totals[0] / 1000, totals[1], totals[2]])

    def report(self) -> dict[str, Any]:
        """Each node's requested and allocatable cpu (cores), memory (bytes) and pods."""
        requested: dict[str, list[int]] = {}
        for pod in self.cluster.objects_by_key("Pod").values():
            bound_to = pod.spec.node_name
            if not bound_to:
                continue
            requests = pod_requests(pod)
            totals = requested.get(bound_to)
            if totals is None:
                totals = requested[bound_to] = [0, 0, 0]
            totals[0] += requests.get("cpu", 0)
            totals[1] += requests.get("memory", 0)
            totals[2] += 1
        out: dict[str, Any] = {}
        none = (0, 0, 0)
        for name, node in self.cluster.objects_by_key("Node").items():
            alloc = node.status.allocatable  # amounts as Resource.from_list reads them
            cpu, memory, pods = requested.get(name, none)
            out[name] = {
                "requested": {"cpu": cpu / 1000, "memory": memory, "pods": pods},
                "allocatable": {
                    "cpu": alloc.get("cpu", 0) / 1000,
                    "memory": alloc.get("memory", 0),
                    "pods": alloc.get("pods", 0),
                },
            }
        return out


class _Run:
    """One scenario run: the cluster, the scheduler, and what is reported."""

    def __init__(
        self,
        scenario: Scenario,
        seed: int,
        on_event: Callable[[SchedulingEvent], None] | None,
        *,
        registry: Registry | None = None,
        explain: bool | Collection[str] = False,
        explain_sink: ExplainSink | None = None,
        events: bool = True,
        history: bool = False,
        opportunistic_batching: bool = True,
        metrics: MetricsRecorder | None = None,
    ) -> None:
        self.scenario = scenario
        self.explain_sink = explain_sink
        self.sink_error: BaseException | None = None
        """What the sink raised (a closed pipe): the run is cancelled and this re-raised."""
        self.scope: anyio.CancelScope | None = None
        self.cluster = InMemoryCluster(keep_events=False)  # never reported
        self.t0 = 0.0
        self.created: dict[str, str] = {}
        self.profile_of: dict[str, str] = {}
        self.pending_at_creation: dict[str, None] = {}
        self.serial = 0
        self.settled = True
        self.timeline: list[dict[str, Any]] = []
        self.events: list[SchedulingEvent] = []
        self.bound_series: list[list[Any]] = []
        self._on_event = on_event
        self._keep_events = events
        self._keep_bound = history
        self.usage = _Usage(self.cluster, self.now, history=history)
        if self._reads_events():
            self.cluster.subscribe(self._watch_nominations)
        self.controllers = Controllers(
            self.cluster,
            create_pods=self.create,
            delete_pod=lambda key: self.delete([("Pod", key)]),
            volume_claims=stateful_set_claims,
        )
        self.cluster.subscribe(self.controllers.on_change)
        self.scheduler = Scheduler(
            scenario.config,
            self.cluster,
            registry=registry,
            seed=seed,
            explain=explain,
            observer=self._observe if self._reads_events() else None,
            opportunistic_batching=opportunistic_batching,
            metrics=metrics,
        )

    def _reads_events(self) -> bool:
        """Whether anything takes the engine's events (without a reader, it makes none)."""
        return (
            self._keep_events
            or self._keep_bound
            or self.explain_sink is not None
            or self._on_event is not None
        )

    def _observe(self, event: SchedulingEvent) -> None:
        # A large run makes several events per pod: kept only when they are reported.
        if self._keep_events:
            self.events.append(event)
        if self._keep_bound and event.kind == "Bound":
            self.bound_series.append([round(event.time - self.t0, 6), len(self.bound_series) + 1])
        if self.explain_sink is not None and event.kind in _OUTCOMES:
            self._stream_explain(event.pod)
        if self._on_event is not None:
            self._on_event(event)

    def _note(self, kind: str, pod: Pod, **details: Any) -> None:
        self._observe(SchedulingEvent(kind, pod.key, anyio.current_time(), details))

    def _watch_nominations(self, kind: str, old: Any, new: Any) -> None:
        if kind != "Pod" or old is None or new is None or new.spec.node_name:
            return
        nominated = new.status.nominated_node_name
        if nominated and nominated != old.status.nominated_node_name:
            self._note("Nominated", new, node=nominated)

    def now(self) -> float:
        return anyio.current_time() - self.t0

    def _stamp(self, obj: KubeObject, now: float) -> KubeObject:
        """The object as the API server stores it: a creation time and a pod's uid."""
        meta = getattr(obj, "metadata", None)
        if meta is None:
            return obj
        created, uid = meta.creation_timestamp, meta.uid
        is_pod = isinstance(obj, Pod)
        if created is not None and (uid or not is_pod):
            return obj
        if is_pod and not uid:
            self.serial += 1
            uid = f"{meta.namespace}/{meta.name}#{self.serial}"
        stamped = _stamped_meta(meta, uid, now if created is None else created)
        # The two kinds a large scenario is made of are rebuilt directly (evolve is slow).
        if type(obj) is Pod:
            return Pod(metadata=stamped, spec=obj.spec, status=obj.status)
        if type(obj) is Node:
            return Node(metadata=stamped, spec=obj.spec, status=obj.status)
        other: Any = obj  # every kind with metadata takes it
        stamped_obj: KubeObject = attrs.evolve(other, metadata=stamped)
        return stamped_obj

    def create(self, objects: Sequence[KubeObject]) -> None:
        now = self.now()  # the clock stands still while this runs
        for obj in objects:
            obj = self._stamp(obj, now)
            if isinstance(obj, Pod):
                self.created[obj.key] = obj.uid
                self.profile_of[obj.key] = obj.spec.scheduler_name
                if not obj.spec.node_name:
                    self.pending_at_creation[obj.key] = None
                if obj.spec.node_name and obj.status.start_time is None:
                    obj = attrs.evolve(obj, status=attrs.evolve(obj.status, start_time=now))
            self.cluster.apply(obj)

    def update(self, objects: Sequence[KubeObject]) -> None:
        for obj in objects:
            kind = type(obj).__name__
            existing = self.cluster.get(kind, object_key(obj))
            if existing is None:
                raise ScenarioError(f"update: {kind} {object_key(obj)} does not exist")
            meta = getattr(obj, "metadata", None)
            if meta is not None:
                old_meta = existing.metadata
                obj = attrs.evolve(
                    obj,
                    metadata=attrs.evolve(
                        meta,
                        uid=meta.uid or old_meta.uid,
                        creation_timestamp=meta.creation_timestamp
                        if meta.creation_timestamp is not None
                        else old_meta.creation_timestamp,
                    ),
                )
            self.cluster.apply(obj)

    def delete(self, deletes: Sequence[tuple[str, str]]) -> None:
        for kind, key in deletes:
            existing = self.cluster.get(kind, key)
            if existing is None:
                raise ScenarioError(f"delete: {kind} {key} does not exist")
            if isinstance(existing, Pod):
                self._note("Deleted", existing, node=existing.spec.node_name)
            self.cluster.remove(kind, key)

    async def settle(self, max_time: float) -> None:
        deadline = anyio.current_time() + max_time
        while True:
            await anyio.wait_all_tasks_blocked()
            if self.scheduler.idle:
                return
            now = anyio.current_time()
            if now >= deadline:
                self.settled = False
                return
            await anyio.sleep(min(self._next_wake(now) - now, deadline - now))

    def _next_wake(self, now: float) -> float:
        candidates = [w.deadline for w in self.scheduler.waiting_pods]
        wake = self.scheduler.queue.next_wakeup()
        if wake is not None:
            candidates.append(wake)
        future = [c for c in candidates if c > now]
        return min(future) if future else now + 0.5

    # ---- reports ----------------------------------------------------------------------

    def pod_reports(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        sched = self.scheduler
        records = sched.records
        pods: Mapping[str, Pod] = self.cluster.objects_by_key("Pod")
        pending_at_creation = self.pending_at_creation
        for key in self.created:
            pod = pods.get(key)
            if pod is None:
                continue
            record = records.get(pod.uid)
            node = pod.spec.node_name
            # A bound pod's phase needs nothing from the queue (the usual pod of a report).
            phase = "Bound" if node else self._unbound_phase(pod.uid, record)
            entry: dict[str, Any] = {
                "node": node,
                "phase": phase,
                "attempts": record.attempts if record else 0,
            }
            if pod.metadata.owner_references:
                owner = owner_of(pod)
                if owner is not None:
                    entry["owner"] = f"{owner[0]} {owner[1]}"
            if key in pending_at_creation:
                entry["nominatedNode"] = record.nominated_node if record else None
                entry["message"] = None if node else (record.message if record else None)
            out[key] = entry
        return out

    def _unbound_phase(self, uid: str, record: PodRecord | None) -> str:
        sched = self.scheduler
        where = sched.queue.where(uid)
        if sched.waiting_pods.get(uid) is not None:
            return "Waiting"
        if where == "gated":
            return "Gated"
        if record is not None and record.message is not None and where in _NOT_SCHEDULED:
            return "Unschedulable"
        return "Pending"

    def _explanation(self, key: str) -> dict[str, Any] | None:
        uid = self.created.get(key)
        record = self.scheduler.records.get(uid) if uid is not None else None
        if record is None or record.first_attempt is None or record.first_attempt is _STREAMED:
            return None
        fw = self.scheduler.frameworks.get(self.profile_of.get(key, ""))
        entry = _explain(record.first_attempt, fw.weights if fw is not None else {})
        pod = self.cluster.get_pod(key)
        owner = owner_of(pod) if pod is not None else None
        if owner is not None:
            entry["owner"] = f"{owner[0]} {owner[1]}"
        return entry

    def _stream_explain(self, key: str) -> None:
        """Hand the pod's first attempt to the sink once it is over, and let it go."""
        assert self.explain_sink is not None
        entry = self._explanation(key)
        if entry is None:
            return
        self.scheduler.records[self.created[key]].first_attempt = _STREAMED
        if self.sink_error is not None:
            return
        try:
            self.explain_sink(key, entry)
        except Exception as exc:
            # Raised inside the engine's cycle, it would be taken for a fault of the cycle
            # and the pod retried: stop the whole run instead.
            self.sink_error = exc
            if self.scope is not None:
                self.scope.cancel()

    def explain(self, only: Collection[str] | None = None) -> dict[str, Any]:
        """The explanations not yet handed to a sink (with one: those go there, too)."""
        out: dict[str, Any] = {}
        if not self.scheduler.explain:
            return out
        for key in self.pending_at_creation if only is None else only:
            if self.explain_sink is not None:
                self._stream_explain(key)
                continue
            entry = self._explanation(key)
            if entry is not None:
                out[key] = entry
        return out

    def event_dicts(self) -> list[dict[str, Any]]:
        """The events, ``time`` in simulated seconds since the start."""
        return [
            {
                "kind": e.kind,
                "pod": e.pod,
                "time": round(e.time - self.t0, 6),
                "details": dict(e.details),
            }
            for e in self.events
        ]

    def history(self) -> dict[str, Any]:
        """What ``--plot`` draws: node allocatable, usage samples, bound pods over time."""
        nodes = self.usage.report()
        return {
            "allocatable": {name: entry["allocatable"] for name, entry in nodes.items()},
            "usage": self.usage.samples or [],
            "bound": self.bound_series,
        }

    def groups(self) -> dict[str, Any]:
        """Gang status from every plugin that reports group statuses (Coscheduling)."""
        out: dict[str, Any] = {}
        for fw in self.scheduler.frameworks.values():
            for plugin in fw.plugins.values():
                report = getattr(plugin, "group_statuses", None)
                if callable(report):
                    out.update(report())
        return out

    def snapshot(self, step: int | None = None) -> dict[str, Any]:
        state: dict[str, Any] = {}
        if step is not None:
            state["step"] = step
        state["time"] = round(self.now(), 6)
        state["pods"] = self.pod_reports()
        state["evicted"] = sorted(self.cluster.evicted)
        return state


def _stamped_meta(meta: ObjectMeta, uid: str, created: float) -> ObjectMeta:
    """``attrs.evolve(meta, uid=uid, creation_timestamp=created)``, at a third of its cost
    (every object of a large scenario is stamped)."""
    return ObjectMeta(
        name=meta.name,
        namespace=meta.namespace,
        uid=uid,
        labels=meta.labels,
        annotations=meta.annotations,
        creation_timestamp=created,
        deletion_timestamp=meta.deletion_timestamp,
        owner_references=meta.owner_references,
    )


def _status_json(status: Status) -> dict[str, Any]:
    out: dict[str, Any] = {"code": status.code.label}
    if status.code is not Code.SUCCESS:
        if status.plugin:
            out["plugin"] = status.plugin
        out["reasons"] = list(status.reasons)
    return out


def _explain(report: AttemptReport, weights: Mapping[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if report.pre_filter is not None:
        out["preFilter"] = _status_json(report.pre_filter)
    out["filter"] = {node: _status_json(st) for node, st in report.filter.items()}
    evaluated = set(report.filter)
    out["notEvaluated"] = [n for n in report.all_nodes if n not in evaluated]
    scores: dict[str, dict[str, Any]] = {}
    for node, total in report.totals.items():
        entry: dict[str, Any] = {}
        for plugin, per_node in report.scores.items():
            entry[plugin] = per_node[node]
        for plugin in sorted(report.skipped_score_plugins):
            entry[plugin] = "skipped"
        entry["total"] = total
        scores[node] = entry
    out["scores"] = scores
    if report.scores:
        out["weights"] = {plugin: weights.get(plugin, 1) for plugin in report.scores}
    out["selected"] = report.selected
    if report.decisions:
        out["decisions"] = report.decisions
    if report.group is not None:
        out["podGroup"] = report.group
    if report.hinted:
        out["hinted"] = True
    return out


def run_scenario(
    scenario: Scenario,
    *,
    seed: int = 0,
    on_event: Callable[[SchedulingEvent], None] | None = None,
    step_checker: Callable[[int, Mapping[str, Any], dict[str, Any]], None] | None = None,
    registry: Registry | None = None,
    explain: bool | Collection[str] = False,
    explain_sink: ExplainSink | None = None,
    events: bool = True,
    history: bool = False,
    opportunistic_batching: bool = True,
    metrics: MetricsRecorder | None = None,
) -> dict[str, Any]:
    """Run a scenario on trio's simulated clock; returns the JSON report.

    Args:
        scenario: what to run.
        seed: seeds the tie-breaks between equally scored nodes.
        on_event: called with every scheduling event as it happens.
        step_checker: called with each step's ``expect`` and the state it is checked on.
        registry: plugins by name beyond (or replacing) the in-tree ones.
        explain: ``explain`` for every pod that had an attempt (True), for the named
            pods only (a collection of ``namespace/name``), or for none (False, the
            default). Attempts are recorded only for the pods asked for.
        explain_sink: takes each explanation as soon as the pod's first attempt is over
            (and at the end, those of attempts still in flight); the report's ``explain``
            is then empty and the engine keeps none, so memory stays flat on large runs.
        events: include ``events`` (the timeline of scheduling events).
        history: include ``history`` (usage samples and bound pods over time, for plots).
        opportunistic_batching: the OpportunisticBatching feature gate (on by default).
        metrics: where the scheduler records its metrics (durations in simulated time).
    """
    import trio.testing

    if isinstance(explain, str):
        raise TypeError("explain: a bool or a collection of pod keys, not a str")
    result: dict[str, Any] = {}
    runs: list[_Run] = []
    only = None if isinstance(explain, bool) else list(dict.fromkeys(explain))

    async def main() -> None:
        run = _Run(
            scenario,
            seed,
            on_event,
            registry=registry,
            explain=explain,
            explain_sink=explain_sink,
            events=events,
            history=history,
            opportunistic_batching=opportunistic_batching,
            metrics=metrics,
        )
        run.t0 = anyio.current_time()
        async with anyio.create_task_group() as tg:
            run.scope = tg.cancel_scope
            runs.append(run)
            await tg.start(run.scheduler.serve)
            await tg.start(run.controllers.serve)
            run.create(scenario.objects)
            for index, step in enumerate(scenario.steps):
                if step.expect is not None and step_checker is not None:
                    await anyio.wait_all_tasks_blocked()
                    step_checker(index, step.expect, run_state(run))
                if step.kind == "settle":
                    await run.settle(step.seconds)
                elif step.kind == "advance":
                    await anyio.sleep(step.seconds)
                elif step.kind == "create":
                    run.create(step.objects)
                elif step.kind == "update":
                    run.update(step.objects)
                elif step.kind == "delete":
                    run.delete(step.deletes)
                elif step.kind == "scale" and step.scale is not None:
                    run.controllers.scale(*step.scale)
                await anyio.wait_all_tasks_blocked()
                if len(scenario.steps) > 1:
                    run.timeline.append(run.snapshot(index))
            result.update(run_state(run))
            result["nodes"] = run.usage.report()
            workloads = run.controllers.report()
            if workloads:
                result["workloads"] = workloads
            if len(scenario.steps) > 1:
                result["timeline"] = run.timeline
            if events:
                result["events"] = run.event_dicts()
            if history:
                result["history"] = run.history()
            tg.cancel_scope.cancel()

    def run_state(run: _Run) -> dict[str, Any]:
        pods = run.pod_reports()
        return {
            "scenario": scenario.name,
            "settled": run.settled,
            "time": round(run.now(), 6),
            "pods": pods,
            "evicted": sorted(run.cluster.evicted),
            "nominated": {
                key: entry["nominatedNode"]
                for key, entry in pods.items()
                if "nominatedNode" in entry
            },
            "explain": run.explain(only),
            "groups": run.groups(),
        }

    with task_order_seeded(seed):
        anyio.run(
            main,
            backend="trio",
            backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)},
        )
    if runs and runs[0].sink_error is not None:
        raise runs[0].sink_error
    return result

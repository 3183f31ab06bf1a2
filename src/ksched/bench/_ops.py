"""Running a planned workload against a Scheduler on an InMemoryCluster.

# test/integration/scheduler_perf/scheduler_perf.go runWorkload / WorkloadExecutor.runOp,
# test/integration/framework/perf_utils.go IntegrationTestNodePreparer.PrepareNodes
Objects are built before their op runs (templates parsed once, then copied with a new
name), so the measured phase pays only for the cluster writes and the scheduling. Binds are
counted by the scheduler's observer; waits are events, never polling.
"""

from __future__ import annotations

import importlib.util
import uuid
from collections.abc import Mapping
from typing import Any, TypeVar

import anyio
import anyio.abc
import anyio.lowlevel
import attrs

from ..api import KubeObject, Namespace, Node, Pod, read_object
from ..cluster import InMemoryCluster, object_key
from ..config import SchedulerConfig, load_config, parse_config
from ..observability import SchedulerMetrics
from ..scheduler import Scheduler
from ._barrier import wait_barrier
from ._delete import DeletePods, delete_pods
from ._dra import CreateResourceDriver, resource_slices
from ._errors import WorkloadError
from ._metrics import (
    Collector,
    Throughput,
    histogram_data,
    peak_rss_bytes,
    percentile,
    poll_end,
    unsampled,
)
from ._steady import SIGNATURE_LABEL, create_steadily, signature_value
from ._template import ObjectTemplate
from ._testcase import MetricThreshold
from ._update import UpdateAny, update_any
from ._workload import (
    COLLECTED_METRICS,
    DEFAULT_NODE,
    DEFAULT_POD,
    Barrier,
    Churn,
    CreateAny,
    CreateNamespaces,
    CreateNodes,
    CreatePods,
    Plan,
    Sleep,
    StartCollectingMetrics,
    StopCollectingMetrics,
    WaitForPodGroups,
    gang_scheduling,
    opportunistic_batching,
)

__all__ = ["BACKENDS", "RunResult", "run", "run_plan"]

BACKENDS = ("asyncio", "trio", "uvloop")
T = TypeVar("T")
HOSTNAME_LABEL = "kubernetes.io/hostname"
POD_GROUP_API = "scheduling.x-k8s.io/v1alpha1"
SCHEDULING_GROUP = "scheduling.k8s.io"
GANG_PROFILE = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": [{"name": "GangScheduling"}]}},
        }
    ]
}
"""The native PodGroup's API group (GangScheduling)."""
CREATE_CHUNK = 512
"""Pods written per batch before the creator yields to the scheduler."""
OP_TIMEOUT = 600.0
"""Upstream's waitUntilPodsScheduledInNamespace gives up after 10 minutes."""


@attrs.frozen(kw_only=True)
class _Window:
    """What the measured window saw, kept when it closes."""

    start: float
    end: float
    """When the last measured pod was bound."""
    sampled_to: float
    """Where the throughput samples end: upstream's wait poll after ``end``."""
    binds: list[float]
    latencies: list[float]
    attempts: int
    latency_estimated: bool


@attrs.frozen(kw_only=True)
class RunResult:
    """The measurements of one run of one workload."""

    test_case: str
    workload: str
    nodes: int
    measured_pods: int
    throughput: Throughput
    latency_p50: float
    latency_p90: float
    latency_p99: float
    latency_estimated: bool
    attempts: int
    measured_seconds: float
    peak_rss_bytes: int
    threshold: float | None
    backend: str
    notes: tuple[str, ...] = ()
    extension_points: Mapping[str, float] | None = None
    """Seconds per extension point in the measured phase (None: the engine does not say)."""
    batched_pods: int | None = None
    """Measured pods placed on an opportunistic-batching hint (None: batching off)."""
    metric_threshold: MetricThreshold | None = None
    """The workload's threshold on another metric than throughput, when ksched records it."""
    metric_data: Mapping[str, float] | None = None
    """That metric's data items over the measured window, in ms (None: not observed)."""
    unsampled_pods: int = 0
    """Measured pods bound after the last 1 s tick, which no throughput sample counts."""


def _kind(obj: KubeObject) -> str:
    return type(obj).__name__


class _Runner:
    def __init__(self, plan: Plan, cluster: InMemoryCluster, collector: Collector) -> None:
        self.plan = plan
        self.cluster = cluster
        self.collector = collector
        self.params = dict(plan.workload.params)
        self.namespaces: set[str] = set()
        self.expected: dict[str, int] = {}
        self.node_serial = 0
        self.pod_serial = 0
        self.measured: _Window | None = None
        self.scheduler: Scheduler | None = None
        self.metrics: SchedulerMetrics | None = None
        self.histogram_at_start: list[float] | None = None
        self.metric_data: dict[str, float] | None = None
        self.extension_points: dict[str, float] | None = None
        self.batched_at_start = 0
        self.where = f"{plan.test_case.name}/{plan.workload.name}"

    def env(self, index: int, count: int) -> dict[str, Any]:
        return {**self.params, "Index": index, "Count": count}

    def ensure_namespace(self, name: str) -> None:
        if name and name not in self.namespaces:
            self.namespaces.add(name)
            if self.cluster.get("Namespace", name) is None:
                self.cluster.apply(Namespace(name=name))

    def register(self, name: str) -> None:
        """Create ``name`` if needed and let barriers know it (createNamespaceIfNotPresent)."""
        self.ensure_namespace(name)
        if name:
            self.expected.setdefault(name, 0)

    # ---- object building ----------------------------------------------------------

    def build_nodes(self, op: CreateNodes) -> list[Node]:
        template = op.template
        prefix = f"node-{op.index}-"
        base: Node | None = None
        if template is None:
            base = _as(read_object({**DEFAULT_NODE, "metadata": {"name": "base"}}), Node)
        elif template.static:
            prefix = template.generate_name or prefix
            base = _as(template.build({}, name="base", namespace=None), Node)
        nodes: list[Node] = []
        for i in range(op.count):
            n = self.node_serial
            self.node_serial += 1
            if base is None:
                assert template is not None
                node = _as(template.build(self.env(i, op.count), f"{prefix}{n}", None), Node)
            else:
                node = base
            name = f"{prefix}{n}" if base is not None and base.name == "base" else node.name
            labels = dict(node.labels)
            labels[HOSTNAME_LABEL] = name
            if op.label_key:
                labels[op.label_key] = op.label_values[i % len(op.label_values)]
            if op.unique_label_key:
                labels[op.unique_label_key] = str(uuid.UUID(int=n + 1))
            meta = attrs.evolve(node.metadata, name=name, labels=labels)
            node = attrs.evolve(node, metadata=meta)
            nodes.append(op.allocatable.prepare(node) if op.allocatable else node)
        return nodes

    def build_pods(self, op: CreatePods) -> list[Pod]:
        template = op.template
        ns = op.namespace
        if template is None:
            base: Pod | None = _as(read_object(_named(DEFAULT_POD, "base", ns)), Pod)
            prefix = "pod-"
        elif template.static:
            prefix = template.generate_name or "pod-"
            base = _as(template.build({}, name="base", namespace=ns), Pod)
            if base.name != "base":
                raise WorkloadError(
                    f"{self.where}: op {op.index}: {template.path}: a pod template for "
                    f"{op.count} pods needs generateName, not a fixed name"
                )
        else:
            base = None
            prefix = "pod-"
        pods: list[Pod] = []
        for i in range(op.count):
            serial = self.pod_serial
            self.pod_serial += 1
            if base is None:
                assert template is not None
                env = {**self.env(i, op.count), **op.template_params}
                raw_meta = template.data(env).get("metadata") or {}
                name = f"{raw_meta.get('generateName') or prefix}{serial}"
                pods.append(_as(template.build(env, name, ns), Pod))
            else:
                meta = attrs.evolve(base.metadata, name=f"{prefix}{serial}", namespace=ns)
                pods.append(attrs.evolve(base, metadata=meta))
            if op.signature_batch is not None and template is not None:
                pod = pods[-1]
                labels = {**pod.labels, SIGNATURE_LABEL: signature_value(i, op.signature_batch)}
                pods[-1] = attrs.evolve(pod, metadata=attrs.evolve(pod.metadata, labels=labels))
        return pods

    def build_any(self, template: ObjectTemplate, env: dict[str, Any], ns: str) -> KubeObject:
        data = template.data(env)
        meta = data.get("metadata") or {}
        name = meta.get("name") or f"{meta.get('generateName') or 'object-'}{self.pod_serial}"
        self.pod_serial += 1
        if data.get("kind") == "PodGroup" and str(data.get("apiVersion")).split("/")[0] not in (
            POD_GROUP_API.split("/")[0],
            SCHEDULING_GROUP,
        ):
            raise WorkloadError(
                f"{template.path}: PodGroup {data.get('apiVersion')} is not supported: "
                f"ksched reads {POD_GROUP_API} (Coscheduling) and {SCHEDULING_GROUP} PodGroups"
            )
        obj = template.build(env, str(name), ns or None)
        if isinstance(obj, Node):
            labels = {**obj.labels, HOSTNAME_LABEL: obj.name}
            obj = attrs.evolve(obj, metadata=attrs.evolve(obj.metadata, labels=labels))
        return obj

    # ---- ops ----------------------------------------------------------------------

    async def run(self, tg: anyio.abc.TaskGroup) -> None:
        for op in self.plan.ops:
            if isinstance(op, CreateNodes):
                for node in self.build_nodes(op):
                    self.cluster.apply(node)
                    if op.allocatable is not None:
                        self.cluster.apply(op.allocatable.csi_node(node))
            elif isinstance(op, CreateNamespaces):
                self.create_namespaces(op)
            elif isinstance(op, CreatePods):
                await self.create_pods(op)
            elif isinstance(op, CreateAny):
                self.register(op.namespace)
                for i in range(op.count):
                    self.cluster.apply(
                        self.build_any(op.template, self.env(i, op.count), op.namespace)
                    )
            elif isinstance(op, CreateResourceDriver):
                for resource_slice in resource_slices(op, self.cluster.nodes()):
                    self.cluster.apply(resource_slice)
            elif isinstance(op, Barrier):
                await self.barrier(op)
            elif isinstance(op, WaitForPodGroups):
                self.wait_for_pod_groups(op)
            elif isinstance(op, Sleep):
                await anyio.sleep(op.seconds)
            elif isinstance(op, Churn):
                self.ensure_namespace(op.namespace)
                tg.start_soon(self.churn, op)
            elif isinstance(op, DeletePods):
                if op.skip_wait:
                    tg.start_soon(delete_pods, self.cluster, op)
                else:
                    await delete_pods(self.cluster, op)
            elif isinstance(op, UpdateAny):
                self.register(op.namespace)
                await update_any(self.cluster, op, self.env, f"{self.where}: op {op.index}")
            elif isinstance(op, StartCollectingMetrics):
                for ns in op.namespaces:
                    self.register(ns)
                self.start_window(op.namespaces, op.label_selector)
            elif isinstance(op, StopCollectingMetrics):
                self.stop_window()
            await anyio.lowlevel.checkpoint()

    def wait_for_pod_groups(self, op: WaitForPodGroups) -> None:
        """The in-memory store is the scheduler's informer cache: the PodGroups are there
        once created, or the op fails at once rather than waiting out a timeout."""
        have = sum(
            1
            for kind in ("SchedulingPodGroup", "PodGroup")
            for obj in self.cluster.objects(kind)
            if obj.metadata.namespace == op.namespace
        )
        if have < op.count:
            raise WorkloadError(
                f"{self.where}: op {op.index}: {have}/{op.count} PodGroups in namespace "
                f"{op.namespace}"
            )

    def create_namespaces(self, op: CreateNamespaces) -> None:
        for i in range(op.count):
            name = f"{op.prefix}-{i}"
            labels: dict[str, str] = {}
            if op.template is not None:
                ns = op.template.build(self.env(i, op.count), name, None)
                if not isinstance(ns, Namespace):
                    raise WorkloadError(f"{op.template.path}: expected a Namespace")
                labels = dict(ns.labels)
            self.namespaces.add(name)
            self.expected.setdefault(name, 0)
            self.cluster.apply(Namespace(name=name, labels=labels))

    async def create_pods(self, op: CreatePods) -> None:
        ns = op.namespace
        self.register(ns)
        if op.collect_metrics:
            self.start_window((ns,), {})
        if op.steady_state:
            await create_steadily(
                self.cluster,
                self.collector,
                ns,
                lambda n: self.build_pods(attrs.evolve(op, count=n)),
                op.count,
                op.duration,
                f"{self.where}: op {op.index}",
            )
            if op.collect_metrics:
                self.stop_window()
            return
        pods = self.build_pods(op)
        claims: list[tuple[KubeObject, KubeObject]] = []
        if op.volumes is not None:
            built = [op.volumes.objects(pod, i) for i, pod in enumerate(pods)]
            claims = [(pvc, pv) for pvc, pv, _ in built]
            pods = [pod for _, _, pod in built]
        before = self.collector.bound.get(ns, 0)
        apply = self.cluster.apply
        for start in range(0, len(pods), CREATE_CHUNK):
            for k, pod in enumerate(pods[start : start + CREATE_CHUNK], start):
                if claims:  # the claim first: the volume names it, the pod uses it
                    apply(claims[k][0])
                    apply(claims[k][1])
                apply(pod)
            await anyio.lowlevel.checkpoint()
        created = anyio.current_time()
        if op.skip_wait:
            self.expected[ns] = self.expected.get(ns, 0) + op.count
            return
        target = before + op.count
        with anyio.move_on_after(OP_TIMEOUT) as scope:
            await self.collector.wait_for(ns, target)
        if scope.cancelled_caught:
            got = self.collector.bound.get(ns, 0) - before
            raise WorkloadError(
                f"{self.where}: op {op.index}: timed out after {OP_TIMEOUT:g}s with "
                f"{got}/{op.count} pods scheduled in namespace {ns}"
            )
        if op.collect_metrics:
            self.stop_window(polled_from=created)

    def start_window(self, namespaces: tuple[str, ...], selector: Mapping[str, str]) -> None:
        """Open the measured window (plan() has checked that none is open)."""
        self.collector.start_measuring(namespaces, selector)
        if self.scheduler is not None:
            self.scheduler.extension_point_seconds.clear()
            self.scheduler.attempt_seconds = 0.0
            self.batched_at_start = _batched_pods(self.scheduler)
        chosen = self.plan.workload.metric_threshold
        if self.metrics is not None and chosen is not None:
            # upstream resets the registry when the window opens; a window is a difference
            _, self.histogram_at_start = self.metrics.histogram_totals(chosen.name, chosen.labels)

    def stop_window(self, polled_from: float | None = None) -> None:
        """Close the measured window and keep its figures (the last window's are reported).

        ``polled_from``: when the op's pods were created; upstream's wait for them polls
        every second from then, and the throughput samples run to the poll that sees the
        last of them bound (``poll_end``), not to the bind itself.
        """
        c = self.collector
        start_time = c.measured_start
        end = c.stop_measuring()
        sampled_to = end if polled_from is None else poll_end(polled_from, end)
        if self.scheduler is not None:
            self.extension_points = _extension_points(self.scheduler)
        chosen = self.plan.workload.metric_threshold
        if self.metrics is not None and chosen is not None and self.histogram_at_start:
            bounds, now = self.metrics.histogram_totals(chosen.name, chosen.labels)
            self.metric_data = histogram_data(bounds, self.histogram_at_start, now)
        self.measured = _Window(
            start=start_time,
            end=end,
            sampled_to=sampled_to,
            binds=list(c.bind_times),
            latencies=list(c.latencies),
            attempts=c.attempts,
            latency_estimated=c.latency_estimated,
        )

    async def barrier(self, op: Barrier) -> None:
        where = f"{self.where}: op {op.index}"
        await wait_barrier(
            self.cluster,
            self.collector,
            self.expected,
            op.namespaces,
            op.label_selector,
            op.stage,
            where,
        )

    async def churn(self, op: Churn) -> None:
        """Create (or create then delete, in ``recreate`` mode) objects every interval."""
        slots: list[list[tuple[str, str] | None]] = [
            [None] * max(op.number, 1) for _ in op.templates
        ]
        count = 0
        limit = op.number if op.mode == "create" and op.number else None
        while limit is None or count < limit:
            await anyio.sleep(op.interval)
            for t, template in enumerate(op.templates):
                if op.mode == "create":
                    obj = self.build_any(template, self.env(count, 0), op.namespace)
                    self.cluster.apply(obj)
                    continue
                slot = count % op.number
                held = slots[t][slot]
                if held is not None:
                    kind, key = held
                    if self.cluster.get(kind, key) is not None:
                        self.cluster.remove(kind, key)
                    slots[t][slot] = None
                else:
                    obj = self.build_any(template, self.env(count, 0), op.namespace)
                    self.cluster.apply(obj)
                    slots[t][slot] = (_kind(obj), object_key(obj))
            count += 1


def _named(data: Mapping[str, Any], name: str, namespace: str | None) -> dict[str, Any]:
    meta = dict(data.get("metadata") or {})
    meta["name"] = name
    if namespace is not None:
        meta["namespace"] = namespace
    return {**data, "metadata": meta}


def _as(obj: object, kind: type[T]) -> T:
    if not isinstance(obj, kind):
        raise WorkloadError(f"expected a {kind.__name__}, got {type(obj).__name__}")
    return obj


def _config(plan: Plan) -> SchedulerConfig | None:
    path = plan.test_case.scheduler_config
    if path is None:
        if gang_scheduling(plan):
            # default_plugins.go: the GangScheduling gate adds the plugin to the defaults.
            return parse_config(GANG_PROFILE)
        return None
    try:
        text = path.read_text()
    except OSError as exc:
        raise WorkloadError(f"schedulerConfigPath {path}: {exc.strerror or exc}") from exc
    return load_config(text, source=str(path))


_CYCLE_POINTS = ("PreFilter", "Filter", "PreScore", "Score", "Reserve", "Permit")


def _extension_points(scheduler: Scheduler) -> dict[str, float]:
    """Seconds per extension point, plus the scheduling cycles' time outside them."""
    points = dict(scheduler.extension_point_seconds)
    in_plugins = sum(points.get(p, 0.0) for p in _CYCLE_POINTS)
    points["EngineOverhead"] = max(0.0, scheduler.attempt_seconds - in_plugins)
    return points


def _first(group: BaseExceptionGroup[WorkloadError]) -> WorkloadError:
    """The first WorkloadError of a (nested) group: an op's failure, unwrapped."""
    inner = group.exceptions[0]
    return _first(inner) if isinstance(inner, BaseExceptionGroup) else inner


def _batched_pods(scheduler: Scheduler) -> int:
    return sum(fw.batch.batched_pods for fw in scheduler.frameworks.values() if fw.batch)


async def run_plan(
    plan: Plan, *, seed: int = 0, backend: str = "", cluster: InMemoryCluster | None = None
) -> RunResult:
    """Run ``plan`` in this event loop and measure it (on ``cluster``, else a new one)."""
    cluster = cluster if cluster is not None else InMemoryCluster()
    store = cluster

    def labels_of(key: str) -> Mapping[str, str] | None:
        pod = store.get_pod(key)
        return pod.labels if pod is not None else None

    collector = Collector(labels_of)
    runner = _Runner(plan, cluster, collector)
    chosen = plan.workload.metric_threshold
    if chosen is not None and chosen.name in COLLECTED_METRICS:
        runner.metrics = SchedulerMetrics()
    scheduler = Scheduler.open(
        _config(plan),
        cluster,
        observer=collector,
        metrics=runner.metrics,
        seed=seed,
        timings=True,
        opportunistic_batching=opportunistic_batching(plan),
    )
    try:
        async with scheduler as running, anyio.create_task_group() as tg:
            runner.scheduler = running
            await runner.run(tg)
            tg.cancel_scope.cancel()
            batched = _batched_pods(running) - runner.batched_at_start
    except* WorkloadError as group:
        raise _first(group) from None
    assert runner.measured is not None, "plan() guarantees a measured window"
    window = runner.measured
    binds, latencies = window.binds, sorted(window.latencies)
    return RunResult(
        test_case=plan.test_case.name,
        workload=plan.workload.name,
        nodes=plan.nodes,
        measured_pods=len(binds),
        throughput=Throughput.of(binds, window.start, window.sampled_to),
        latency_p50=percentile(latencies, 50),
        latency_p90=percentile(latencies, 90),
        latency_p99=percentile(latencies, 99),
        latency_estimated=window.latency_estimated,
        attempts=window.attempts,
        measured_seconds=window.end - window.start,
        peak_rss_bytes=peak_rss_bytes(),
        threshold=plan.workload.threshold,
        backend=backend,
        notes=plan.notes,
        extension_points=runner.extension_points,
        batched_pods=batched if running.opportunistic_batching else None,
        metric_threshold=chosen if runner.metrics is not None else None,
        metric_data=runner.metric_data,
        unsampled_pods=unsampled(binds, window.start, window.sampled_to),
    )


def run(plan: Plan, *, backend: str = "asyncio", seed: int = 0) -> RunResult:
    """Run ``plan`` in a fresh event loop of ``backend`` (asyncio, trio or uvloop)."""
    if backend not in BACKENDS:
        raise WorkloadError(f"unknown backend {backend!r} (expected one of {BACKENDS})")
    options: dict[str, Any] = {}
    name = backend
    if backend == "uvloop":
        if importlib.util.find_spec("uvloop") is None:
            raise WorkloadError(
                "backend uvloop: uvloop is not installed (pip install 'ksched[bench]')"
            )
        name, options = "asyncio", {"use_uvloop": True}
    elif backend == "trio" and importlib.util.find_spec("trio") is None:
        raise WorkloadError("backend trio: trio is not installed")

    async def main() -> RunResult:
        return await run_plan(plan, seed=seed, backend=backend)

    result: RunResult = anyio.run(main, backend=name, backend_options=options)
    return result

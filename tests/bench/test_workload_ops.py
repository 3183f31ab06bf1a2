"""The ops beyond creating objects: deletePods, updateAny, metrics windows, barrier
selectors, steadyState and signatureBatchSize. Runs on trio with a MockClock, so the
scheduler's backoffs and the ops' paces cost no real time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
import trio.testing

from ksched import InMemoryCluster
from ksched.bench import WorkloadError, plans
from ksched.bench._delete import DeletePods, delete_pods
from ksched.bench._metrics import Collector, throughput_samples
from ksched.bench._ops import _Runner, run_plan
from ksched.bench._steady import create_steadily
from ksched.bench._template import render
from ksched.bench._workload import CreatePods, StartCollectingMetrics, UpdateAny
from ksched.scheduler import SchedulingEvent
from ksched.testing import make_node, make_pod

NODE = """apiVersion: v1
kind: Node
metadata:
  generateName: node-
spec:
  unschedulable: {unschedulable}
status:
  capacity: {{pods: "110", cpu: "4", memory: 32Gi}}
  allocatable: {{pods: "110", cpu: "4", memory: 32Gi}}
"""

POD = """apiVersion: v1
kind: Pod
metadata:
  generateName: {prefix}-
  labels: {{type: {type}}}
spec:
  containers:
  - name: pause
    image: registry.k8s.io/pause
    resources:
      requests: {{cpu: "{cpu}", memory: 100Mi}}
"""


@pytest.fixture
def anyio_backend() -> tuple[str, dict[str, Any]]:
    return ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "node.yaml").write_text(NODE.format(unschedulable="false"))
    (tmp_path / "node-cordoned.yaml").write_text(
        NODE.format(unschedulable="true").replace("generateName: node-", "name: cordoned")
    )
    (tmp_path / "node-uncordon.yaml").write_text(
        NODE.format(unschedulable="false").replace("generateName: node-", "name: cordoned")
    )
    (tmp_path / "blocker.yaml").write_text(POD.format(prefix="blocker", type="blocker", cpu="1"))
    (tmp_path / "big.yaml").write_text(POD.format(prefix="big", type="unsched", cpu="3"))
    (tmp_path / "small.yaml").write_text(POD.format(prefix="small", type="ok", cpu="100m"))
    (tmp_path / "huge.yaml").write_text(POD.format(prefix="huge", type="never", cpu="64"))
    return tmp_path


def workload(base: Path, ops: str, params: str = "{}") -> Path:
    path = base / "config.yaml"
    path.write_text(f"- name: T\n  workloadTemplate:\n{ops}\n  workloads:\n  - name: w\n")
    path.write_text(path.read_text() + f"    params: {params}\n")
    return path


def plan_error(base: Path, ops: str) -> str:
    with pytest.raises(WorkloadError) as info:
        plans(str(workload(base, ops)))
    return str(info.value)


# ---- plans: bad fields name the test case, workload and op ----------------------------


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        (
            "  - {opcode: deletePods, namespace: a, deletePodsPerSecond: -1}",
            "T/w: op 0 (deletePods): invalid DeletePodsPerSecond=-1; should be non-negative",
        ),
        (
            "  - {opcode: deletePods, namespace: a, podsPerSecond: 3}",
            "T/w: op 0 (deletePods): unknown field 'podsPerSecond'",
        ),
        ("  - {opcode: updateAny, count: 1}", "T/w: op 0 (updateAny): TemplatePath must be set"),
        (
            "  - {opcode: updateAny, templatePath: node.yaml, updatePerSecond: -2}",
            "T/w: op 0 (updateAny): invalid UpdatePerSecond=-2; should be non-negative",
        ),
        (
            "  - {opcode: updateAny, templatePath: node.yaml, subresources: [scale]}",
            "T/w: op 0 (updateAny): subresources: unsupported ['scale']",
        ),
        (
            "  - {opcode: startCollectingMetrics, name: x}",
            "T/w: op 0 (startCollectingMetrics): namespaces cannot be empty",
        ),
        (
            "  - {opcode: startCollectingMetrics, namespaces: [a]}\n"
            "  - {opcode: createPods, count: 1, collectMetrics: true}",
            "T/w: op 1: metrics collection is overlapping",
        ),
        (
            "  - {opcode: createNodes, count: 1}\n  - {opcode: stopCollectingMetrics}",
            "T/w: op 1: missing startCollectingMetrics operation before stopping",
        ),
        (
            "  - {opcode: startCollectingMetrics, namespaces: [a]}\n"
            "  - {opcode: createNodes, count: 1}",
            "T/w: op 0: startCollectingMetrics is never stopped",
        ),
        (
            "  - {opcode: createPods, count: 1, skipWaitToCompletion: true, steadyState: true,"
            " duration: 1s}\n  - {opcode: stopCollectingMetrics}",
            "T/w: op 0 (createPods): skipWaitToCompletion and steadyState cannot be true",
        ),
        (
            "  - {opcode: createPods, count: 1, collectMetrics: true, signatureBatchSize: -1}",
            "T/w: op 0 (createPods): invalid SignatureBatchSize=-1",
        ),
    ],
)
def test_plan_errors_name_the_op(files: Path, ops: str, message: str) -> None:
    assert message in plan_error(files, ops)


def test_new_ops_plan_with_their_fields(files: Path) -> None:
    ops = """  - {opcode: startCollectingMetrics, name: u, namespaces: [a, b],
     labelSelector: {t: x}}
  - opcode: createPods
    countParam: $pods
    namespace: a
    podTemplatePath: small.yaml
    signatureBatchSizeParam: $batch
    skipWaitToCompletion: true
  - {opcode: deletePods, namespace: a, labelSelector: {t: x}, deletePodsPerSecond: 50,
     skipWaitToCompletion: true}
  - {opcode: updateAny, countParam: $pods, templatePath: node.yaml, updatePerSecond: 10}
  - {opcode: stopCollectingMetrics}"""
    [p] = plans(str(workload(files, ops, "{pods: 3, batch: 0}")))
    start, create, delete, update, _ = p.ops
    assert start == StartCollectingMetrics(
        index=0, name="u", namespaces=("a", "b"), label_selector={"t": "x"}
    )
    # Upstream: a batch size of 0 means 1.
    assert isinstance(create, CreatePods) and create.signature_batch == 1
    assert delete == DeletePods(
        index=2, namespace="a", label_selector={"t": "x"}, per_second=50, skip_wait=True
    )
    assert isinstance(update, UpdateAny) and (update.count, update.per_second) == (3, 10)


# ---- runs ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_delete_pods_frees_room_for_pending_pods(files: Path) -> None:
    """Blockers fill the only node; deleting them (the scheduler sees it) lets the big pods
    in. The window measures only the big pods: the blockers' namespace is in it, but not
    their label."""
    ops = """  - {opcode: createNodes, count: 1, nodeTemplatePath: node.yaml}
  - {opcode: createPods, count: 4, podTemplatePath: blocker.yaml, namespace: b}
  - {opcode: startCollectingMetrics, namespaces: [b], labelSelector: {type: unsched}}
  - {opcode: createPods, count: 1, podTemplatePath: big.yaml, namespace: b,
     skipWaitToCompletion: true}
  - {opcode: barrier, stageRequirement: Attempted, labelSelector: {type: unsched}}
  - {opcode: deletePods, namespace: b, labelSelector: {type: blocker}}
  - {opcode: barrier, labelSelector: {type: unsched}}
  - {opcode: stopCollectingMetrics}"""
    [p] = plans(str(workload(files, ops)))
    cluster = InMemoryCluster()
    result = await run_plan(p, cluster=cluster)
    assert [pod.labels["type"] for pod in cluster.pods()] == ["unsched"]
    assert cluster.pods()[0].spec.node_name
    assert result.measured_pods == 1
    assert result.attempts >= 2  # the big pod failed once, before the blockers went


@pytest.mark.anyio
async def test_delete_pods_keeps_its_pace(files: Path) -> None:
    cluster = InMemoryCluster()
    for i in range(3):
        cluster.apply(make_pod(f"p{i}").namespace("a").label("type", "x").obj())
    cluster.apply(make_pod("other").namespace("a").obj())
    cluster.apply(make_pod("elsewhere").namespace("b").label("type", "x").obj())
    deleted: list[tuple[str, float]] = []
    cluster.subscribe(
        lambda kind, old, new: (
            deleted.append((old.key, anyio.current_time())) if new is None else None
        )
    )
    start = anyio.current_time()
    await delete_pods(
        cluster, DeletePods(index=0, namespace="a", label_selector={"type": "x"}, per_second=4)
    )
    assert [(k, t - start) for k, t in deleted] == [("a/p0", 0.25), ("a/p1", 0.5), ("a/p2", 0.75)]
    assert sorted(p.key for p in cluster.pods()) == ["a/other", "b/elsewhere"]


@pytest.mark.anyio
async def test_update_any_uncordons_the_node(files: Path) -> None:
    ops = """  - {opcode: createNodes, count: 1, nodeTemplatePath: node-cordoned.yaml}
  - {opcode: createPods, count: 3, podTemplatePath: small.yaml, namespace: a,
     skipWaitToCompletion: true}
  - {opcode: barrier, stageRequirement: Attempted}
  - {opcode: startCollectingMetrics, namespaces: [a]}
  - {opcode: updateAny, templatePath: node-uncordon.yaml, updatePerSecond: 10}
  - {opcode: barrier}
  - {opcode: stopCollectingMetrics}"""
    [p] = plans(str(workload(files, ops)))
    cluster = InMemoryCluster()
    result = await run_plan(p, cluster=cluster)
    node = cluster.get_node("cordoned")
    assert node is not None and not node.spec.unschedulable
    assert node.labels["kubernetes.io/hostname"] == "cordoned"
    assert all(pod.spec.node_name == "cordoned" for pod in cluster.pods())
    assert result.measured_pods == 3


@pytest.mark.anyio
async def test_update_any_keeps_a_bound_pod_bound(files: Path) -> None:
    (files / "relabel.yaml").write_text(
        POD.format(prefix="x", type="renamed", cpu="100m").replace(
            "generateName: x-", "name: pod-{{ .Index }}"
        )
    )
    ops = """  - {opcode: createNodes, count: 1, nodeTemplatePath: node.yaml}
  - {opcode: createPods, count: 2, podTemplatePath: small.yaml, namespace: a}
  - {opcode: startCollectingMetrics, namespaces: [a]}
  - {opcode: updateAny, count: 2, templatePath: relabel.yaml, namespace: a}
  - {opcode: createPods, count: 1, podTemplatePath: small.yaml, namespace: a}
  - {opcode: stopCollectingMetrics}"""
    (files / "small.yaml").write_text(POD.format(prefix="pod", type="ok", cpu="100m"))
    [p] = plans(str(workload(files, ops)))
    cluster = InMemoryCluster()
    await run_plan(p, cluster=cluster)
    pods = {pod.name: pod for pod in cluster.pods()}
    assert pods["pod-0"].labels["type"] == pods["pod-1"].labels["type"] == "renamed"
    assert all(pod.spec.node_name for pod in pods.values())


@pytest.mark.anyio
async def test_update_any_of_a_missing_object_fails_naming_the_op(files: Path) -> None:
    ops = """  - {opcode: createNodes, count: 1, nodeTemplatePath: node.yaml}
  - {opcode: startCollectingMetrics, namespaces: [a]}
  - {opcode: updateAny, templatePath: node-uncordon.yaml}
  - {opcode: stopCollectingMetrics}"""
    [p] = plans(str(workload(files, ops)))
    with pytest.raises(WorkloadError, match=r"T/w: op 2: failed to update object: Node 'cordoned'"):
        await run_plan(p)


@pytest.mark.anyio
async def test_barrier_selector_counts_only_matching_pods(files: Path) -> None:
    """As upstream: a barrier waits for as many scheduled pods as were created without
    waiting in the namespace. Without a selector the two running blockers make up the count
    of the two stuck pods; with one, only the stuck pods count, and it times out."""
    ops = """  - {opcode: createNodes, count: 1, nodeTemplatePath: node.yaml}
  - {opcode: startCollectingMetrics, namespaces: [a]}
  - {opcode: createPods, count: 2, podTemplatePath: blocker.yaml, namespace: a}
  - {opcode: createPods, count: 2, podTemplatePath: huge.yaml, namespace: a,
     skipWaitToCompletion: true}
  - {opcode: barrier, stageRequirement: Attempted, labelSelector: {type: never}}
  - {opcode: barrier, namespaces: [a]}
  - {opcode: stopCollectingMetrics}
  - {opcode: createPods, count: 2, podTemplatePath: huge.yaml, namespace: a,
     skipWaitToCompletion: true}
  - {opcode: barrier, labelSelector: {type: never}}"""
    [p] = plans(str(workload(files, ops)))
    start = anyio.current_time()
    with pytest.raises(
        WorkloadError,
        match=r"T/w: op 8: timed out waiting for 2 pods of namespace a to be scheduled \(0 are\)",
    ):
        await run_plan(p)
    assert anyio.current_time() - start == pytest.approx(600.0, abs=60)


@pytest.mark.anyio
async def test_metrics_window_spans_ops_and_filters_by_namespace_and_label(files: Path) -> None:
    ops = """  - {opcode: createNodes, count: 4, nodeTemplatePath: node.yaml}
  - {opcode: createPods, count: 3, podTemplatePath: small.yaml, namespace: a}
  - {opcode: startCollectingMetrics, namespaces: [a, c], labelSelector: {type: ok}}
  - {opcode: createPods, count: 4, podTemplatePath: small.yaml, namespace: a}
  - {opcode: createPods, count: 2, podTemplatePath: blocker.yaml, namespace: a}
  - {opcode: createPods, count: 5, podTemplatePath: small.yaml, namespace: b}
  - {opcode: createPods, count: 6, podTemplatePath: small.yaml, namespace: c}
  - {opcode: stopCollectingMetrics}
  - {opcode: createPods, count: 7, podTemplatePath: small.yaml, namespace: a}"""
    [p] = plans(str(workload(files, ops)))
    result = await run_plan(p)
    # Before the window: no; blocker label: no; namespace b: no; after the window: no.
    assert result.measured_pods == 4 + 6


@pytest.mark.anyio
async def test_signature_batch_labels_runs_of_pods(files: Path) -> None:
    ops = """  - {opcode: createNodes, count: 2, nodeTemplatePath: node.yaml}
  - {opcode: createPods, count: 5, podTemplatePath: small.yaml, namespace: a,
     collectMetrics: true, signatureBatchSize: 2}"""
    [p] = plans(str(workload(files, ops)))
    cluster = InMemoryCluster()
    await run_plan(p, cluster=cluster)
    labels = [pod.labels["signature"] for pod in sorted(cluster.pods(), key=lambda q: q.name)]
    assert labels == [f"signature-label-{i}" for i in (0, 0, 1, 1, 2)]


@pytest.mark.anyio
async def test_steady_state_replaces_each_bound_pod_until_the_duration_ends() -> None:
    cluster = InMemoryCluster()
    cluster.apply(make_node("n").obj())
    collector = Collector()
    made = 0

    def build(n: int) -> list[Any]:
        nonlocal made
        pods = [make_pod(f"p{made + i}").namespace("s").obj() for i in range(n)]
        made += n
        return pods

    async def bind_all(after: float) -> None:
        """Play the scheduler: bind every pending pod, ``after`` seconds apart."""
        while True:
            await anyio.sleep(after)
            for pod in cluster.pods():
                if not pod.spec.node_name:
                    collector(SchedulingEvent("Bound", pod.key, anyio.current_time()))

    start = anyio.current_time()
    async with anyio.create_task_group() as tg:
        tg.start_soon(bind_all, 1.0)
        scheduled = await create_steadily(cluster, collector, "s", build, 2, 3.5, "T/w: op 1")
        tg.cancel_scope.cancel()
    assert anyio.current_time() - start == 3.5
    # Binds at 1, 2 and 3 s, two pods each; every bound pod made way for a new one.
    assert scheduled == 6 and made == 2 + 6
    assert len(cluster.pods()) == 2
    assert collector.on_bound == {}


@pytest.mark.anyio
async def test_steady_state_with_nothing_scheduled_fails() -> None:
    cluster = InMemoryCluster()

    def build(n: int) -> list[Any]:
        return [make_pod(f"p{i}").namespace("s").obj() for i in range(n)]

    with pytest.raises(WorkloadError, match="T/w: op 1: no pod at all got scheduled"):
        await create_steadily(cluster, Collector(), "s", build, 1, 2.0, "T/w: op 1")


WORKLOADS = Path(__file__).parents[2] / "benchmarks" / "workloads"


@pytest.mark.parametrize("folder", ["event_handling", "default_preemption"])
def test_upstream_files_plan_every_workload(folder: str) -> None:
    """Every workload of these upstream files plans: each op and field is one ksched runs."""
    planned = plans(str(WORKLOADS / folder / "performance-config.yaml"))
    assert len(planned) >= 5
    ops = {type(op).__name__ for p in planned for op in p.ops}
    if folder == "event_handling":
        assert {"UpdateAny", "DeletePods", "StartCollectingMetrics", "Barrier"} <= ops


def test_lower_case_div_and_mod() -> None:
    assert render("t", "{{ div 30 .C }}-{{ mod .I 12 }}", {"C": 7, "I": 25}) == "4-1"


@pytest.mark.anyio
async def test_the_measured_window_runs_to_the_waits_poll(files: Path) -> None:
    """A createPods op's window closes at the once-a-second poll after its pods were
    created that sees the last bind (upstream's waitUntilPodsScheduledInNamespace), so
    the collector's tick between the last bind and that poll samples the burst."""
    path = workload(files, "  - {opcode: createPods, count: 1, collectMetrics: true}")
    [plan] = plans(str(path))
    runner = _Runner(plan, InMemoryCluster(), Collector())
    start = anyio.current_time()
    runner.start_window(("ns",), {})
    await anyio.sleep(0.2)
    created = anyio.current_time()
    runner.collector.bind_times.extend(
        [start + 0.5, start + 1.5, start + 2.5, *(start + 3.3 + i / 10_000 for i in range(900))]
    )
    await anyio.sleep(3.4 - 0.2)
    runner.stop_window(polled_from=created)
    window = runner.measured
    assert window is not None
    assert window.start == start
    assert window.end == pytest.approx(start + 3.4)
    assert window.sampled_to == pytest.approx(created + 4.0)  # the poll at 4.2 after 3.39
    assert throughput_samples(window.binds, window.start, window.sampled_to) == [1.0, 1.0, 900.0]

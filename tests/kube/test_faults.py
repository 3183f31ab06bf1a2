"""Faults between ksched and a private kube-apiserver: restart, 410 Gone, a flaky network.

Each test here owns its control plane (it restarts or compacts it).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from ksched import Scheduler, load_config
from ksched.kube import ApiError, KubeClient, KubeCluster, TokenBucket

from ._invariants import assert_drained
from ._plane import ControlPlane, missing, pod_manifest
from ._replicas import Replica, nodes_of, poll, write_config
from ._support import (
    ChaosProxy,
    RecordingTransport,
    bound_count,
    profile_config,
    requested_milli_cpu,
    wait_until,
)
from .conftest import Api, http_client, kube_config

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def private_plane() -> Iterator[ControlPlane]:
    """A control plane without the watch cache: watches read etcd, so compaction is 410."""
    why = missing()
    if why is not None:
        pytest.skip(why)
    control = ControlPlane(watch_cache=False).start()
    try:
        yield control
    finally:
        control.stop()


async def _admin(plane: ControlPlane, ns: str) -> tuple[httpx.AsyncClient, Api]:
    http = kube_config(plane.url).http_client()
    api = Api(KubeClient(http, TokenBucket(0, 0)), ns)
    return http, api


async def test_apiserver_restart_mid_run(private_plane: ControlPlane, anyio_backend: str) -> None:
    ns = f"restart-{anyio_backend}"
    name = f"ksched-{ns}"
    http_admin, api = await _admin(private_plane, ns)
    recorder = RecordingTransport(httpx.AsyncHTTPTransport(verify=False))
    async with http_admin:
        await api.create_namespace(ns)
        for i in range(3):
            await api.create_node(f"{ns}-n{i}", cpu="1")
        for i in range(10):
            await api.create_pod(f"a{i}", scheduler=name)
        async with (
            http_client(private_plane.url, transport=recorder) as http,
            KubeCluster.open(
                KubeClient(http, TokenBucket(0, 0)), scheduler_names=(name,)
            ) as cluster,
        ):
            for reflector in cluster.reflectors.values():
                reflector.initial_backoff = 0.2
            await cluster.wait_synced()
            async with Scheduler.open(profile_config(name), cluster=cluster):
                await wait_until(lambda: bound_count(cluster, ns) == 10, 20)
                await anyio.to_thread.run_sync(private_plane.stop_apiserver)
                await anyio.to_thread.run_sync(private_plane.start_apiserver)
                for i in range(20):  # 30 pods in all; 3 nodes hold 30
                    await api.create_pod(f"b{i}", scheduler=name)
                await wait_until(lambda: bound_count(cluster, ns) == 30, 30)
                await anyio.sleep(0.5)
        pods = await api.pods()
    assert sum(1 for p in pods if p["spec"].get("nodeName")) == 30
    assert set(recorder.bindings.values()) == {1}
    assert sum(recorder.bindings.values()) == 30
    assert max(requested_milli_cpu(pods).values()) <= 1000


async def test_watch_expiry_through_compaction_relists(
    private_plane: ControlPlane, anyio_backend: str
) -> None:
    ns = f"gone-{anyio_backend}"
    http_admin, api = await _admin(private_plane, ns)
    async with http_admin, anyio.create_task_group() as tg:
        await api.create_namespace(ns)
        proxy = ChaosProxy(private_plane.port)
        port = await tg.start(proxy.serve)
        for i in range(3):
            await api.create_pod(f"old{i}", scheduler="elsewhere")
        async with (
            http_client(f"https://127.0.0.1:{port}") as http,
            KubeCluster.open(KubeClient(http, TokenBucket(0, 0))) as cluster,
        ):
            pods = cluster.reflectors["Pod"]
            pods.initial_backoff = 0.2
            await cluster.wait_synced()
            assert pods.lists == 1
            seen: list[tuple[str, str]] = []
            cluster.subscribe(
                lambda kind, old, new: (
                    seen.append(
                        (
                            "add" if old is None else "delete" if new is None else "update",
                            (new or old).name,
                        )
                    )
                    if kind == "Pod" and (new or old).namespace == ns
                    else None
                )
            )
            # Partition the watch, change things, compact: the old resourceVersion is gone.
            proxy.paused = True
            proxy.drop_all()
            await api.client.request(
                "DELETE", f"/api/v1/namespaces/{ns}/pods/old0", body={"gracePeriodSeconds": 0}
            )
            await api.create_pod("new0", scheduler="elsewhere")
            for i in range(5):  # churn so the compacted revision is past the watch's
                await api.create_pod(f"churn{i}", scheduler="elsewhere")
            await anyio.to_thread.run_sync(private_plane.compact)
            proxy.paused = False
            await wait_until(lambda: pods.lists >= 2, 20)
            await wait_until(lambda: cluster.get_pod(f"{ns}/new0") is not None, 10)
            assert cluster.get_pod(f"{ns}/old0") is None
            assert ("delete", "old0") in seen
            assert ("add", "new0") in seen
            keys = {p.name for p in cluster.pods() if p.namespace == ns}
            assert keys == {"old1", "old2", "new0", *(f"churn{i}" for i in range(5))}
        tg.cancel_scope.cancel()


async def test_flaky_network_drops_and_delays(
    private_plane: ControlPlane, anyio_backend: str
) -> None:
    ns = f"flaky-{anyio_backend}"
    name = f"ksched-{ns}"
    http_admin, api = await _admin(private_plane, ns)
    recorder = RecordingTransport(httpx.AsyncHTTPTransport(verify=False))
    async with http_admin, anyio.create_task_group() as tg:
        await api.create_namespace(ns)
        for i in range(3):
            await api.create_node(f"{ns}-n{i}", cpu="1")
        proxy = ChaosProxy(private_plane.port, seed=7)
        proxy.delay = 0.02
        port = await tg.start(proxy.serve)
        async with (
            http_client(f"https://127.0.0.1:{port}", transport=recorder) as http,
            KubeCluster.open(
                KubeClient(http, TokenBucket(0, 0)), scheduler_names=(name,)
            ) as cluster,
        ):
            for reflector in cluster.reflectors.values():
                reflector.initial_backoff = 0.1
            await cluster.wait_synced()
            async with Scheduler.open(profile_config(name), cluster=cluster):
                for i in range(36):  # 30 fit
                    await api.create_pod(f"p{i}", scheduler=name)
                    if i % 6 == 5:
                        proxy.drop_all()
                proxy.drop_probability = 0.02
                await wait_until(lambda: bound_count(cluster, ns) >= 30, 40)
                proxy.drop_probability = 0.0
                await anyio.sleep(0.5)
            assert proxy.dropped > 0
        pods = await api.pods()
        tg.cancel_scope.cancel()
    bound = [p for p in pods if p["spec"].get("nodeName")]
    assert len(bound) == 30
    assert max(requested_milli_cpu(pods).values()) <= 1000
    assert all(recorder.bindings[p["metadata"]["name"]] <= 1 for p in pods)


_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "podgroups.scheduling.x-k8s.io"},
    "spec": {
        "group": "scheduling.x-k8s.io",
        "names": {"kind": "PodGroup", "plural": "podgroups", "singular": "podgroup"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}

_GANG = """
profiles:
- schedulerName: {name}
  plugins:
    multiPoint:
      enabled: [{{name: Coscheduling}}]
      disabled: [{{name: PrioritySort}}, {{name: DefaultPreemption}}]
"""


async def test_gang_through_the_pod_group_crd(
    private_plane: ControlPlane, anyio_backend: str
) -> None:
    """scheduler-plugins' PodGroup CRD, served: a gang binds all together or not at all."""
    ns = f"gang-{anyio_backend}"
    name = f"ksched-{ns}"
    http_admin, api = await _admin(private_plane, ns)
    async with http_admin:
        try:
            await api.client.request(
                "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=_CRD
            )
        except ApiError as exc:
            if exc.status != 409:
                raise

        async def served() -> bool:
            body = await api.client.request("GET", "/apis")
            return any(g["name"] == "scheduling.x-k8s.io" for g in body["groups"])

        await wait_until(served, 20)
        await api.create_namespace(ns)
        await api.create_node(f"{ns}-n0", cpu="1")
        groups = f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups"
        for group, members in (("fits", 3), ("short", 3)):
            body = {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": group, "namespace": ns},
                "spec": {"minMember": members},
            }
            await wait_until(lambda body=body: _posted(api, groups, body), 10)
        for i in range(3):
            await api.create_pod(
                f"fits-{i}",
                scheduler=name,
                cpu="200m",
                labels={"scheduling.x-k8s.io/pod-group": "fits"},
            )
        for i in range(2):  # one member short of minMember: none may bind
            await api.create_pod(
                f"short-{i}",
                scheduler=name,
                cpu="200m",
                labels={"scheduling.x-k8s.io/pod-group": "short"},
            )
        async with (
            http_client(private_plane.url) as http,
            KubeCluster.open(
                KubeClient(http, TokenBucket(0, 0)), scheduler_names=(name,)
            ) as cluster,
        ):
            assert "scheduling.x-k8s.io/v1alpha1" not in cluster.missing_groups
            await cluster.wait_synced()
            assert {g.metadata.name for g in cluster.pod_groups(ns)} == {"fits", "short"}
            async with Scheduler.open(load_config(_GANG.format(name=name)), cluster=cluster):
                await wait_until(lambda: bound_count(cluster, ns) == 3, 20)
                await anyio.sleep(1.0)
            bound = {p.name for p in cluster.pods() if p.namespace == ns and p.spec.node_name}
    assert bound == {"fits-0", "fits-1", "fits-2"}


async def _posted(api: Api, path: str, body: dict[str, object]) -> bool:
    """POST once the new CRD's endpoint answers (it takes a moment after Established)."""
    try:
        await api.client.request("POST", path, body=body)
    except ApiError as exc:
        return exc.status == 409
    return True


HOSTILE: dict[str, dict[str, Any]] = {
    # requests no node can hold
    "absurd-cpu": {"resources": {"requests": {"cpu": "999999999"}}},
    "absurd-memory": {"resources": {"requests": {"memory": "900Pi"}}},
    # a pod with very many containers, each a little request
    "many-containers": {"containers": 60},
    # a label selector nothing matches, and a huge annotation
    "nowhere": {"nodeSelector": {"ksched-test": "no-such-node"}},
    "big-annotation": {"annotation": "x" * 200_000},
}
"""Pods a hostile or careless client may create: the unschedulable ones stay pending."""


def _hostile_pod(name: str, ns: str, scheduler: str, how: dict[str, Any]) -> dict[str, Any]:
    pod = pod_manifest(name, ns, scheduler=scheduler, node_selector={"ksched-test": ns})
    container = pod["spec"]["containers"][0]
    if "resources" in how:
        container["resources"]["requests"].update(how["resources"]["requests"])
    if "containers" in how:
        pod["spec"]["containers"] = [
            {**container, "name": f"c{i}", "resources": {"requests": {"cpu": "1m"}}}
            for i in range(how["containers"])
        ]
    if "nodeSelector" in how:
        pod["spec"]["nodeSelector"] = how["nodeSelector"]
    if "annotation" in how:
        pod["metadata"]["annotations"] = {"example.com/blob": how["annotation"]}
    return pod


async def test_apiserver_kill_9_mid_drain_with_hostile_pods(
    private_plane: ControlPlane, tmp_path: Path, replicas: list[Replica], anyio_backend: str
) -> None:
    """`ksched run` drains 300 pods (and meets hostile ones) while the apiserver is
    killed with SIGKILL and restarted: every schedulable pod bound once, none of the
    others, no node over its resources, the process serving throughout."""
    ns = f"kill9-{anyio_backend}"
    name = f"ksched-{ns}"
    http_admin, api = await _admin(private_plane, ns)
    async with http_admin:
        await api.create_namespace(ns)
        for i in range(4):
            await api.create_node(f"{ns}-n{i}", cpu="8", memory="32Gi", pods=110)
        for hostile, how in HOSTILE.items():
            await api.client.request(
                "POST",
                f"/api/v1/namespaces/{ns}/pods",
                body=_hostile_pod(hostile, ns, name, how),
            )
        kubeconfig = private_plane.kubeconfig(tmp_path / "kubeconfig")
        config = write_config(tmp_path / "c.yaml", ns, kubeconfig, qps=50)
        replica = Replica(config, tmp_path, "a", anyio_backend)
        replicas.append(replica)
        for i in range(300):
            await api.create_pod(f"p{i}", scheduler=name)
        await poll(lambda: _bound_at_least(api, 60), 30, "the drain starts")
        before = await _bound(api)
        await anyio.to_thread.run_sync(private_plane.kill_apiserver)
        await anyio.sleep(1.0)
        restarted = time.monotonic()
        first_bind: list[float] = []

        async def first_bind_after() -> None:
            # At 50 binds/s at most a few land between the count above and the kill:
            # five more can only be binds to the restarted apiserver.
            await poll(lambda: _bound_while_up(api, before + 5), 60, "binds after", 0.05)
            first_bind.append(time.monotonic())

        async with anyio.create_task_group() as tg:
            tg.start_soon(first_bind_after)
            await anyio.to_thread.run_sync(private_plane.start_apiserver)
            ready = time.monotonic()
        recovery = first_bind[0] - ready
        await poll(lambda: _bound_at_least(api, 300 + 2), 60, "every schedulable pod bound")
        await anyio.sleep(1.0)  # nothing more binds
        pods = await api.pods()
        print(
            f"\n{anyio_backend}: apiserver ready {ready - restarted:.2f}s after its restart; "
            f"first bind {recovery:+.2f}s from ready"
        )
        assert replica.p.poll() is None, replica.tail()
        assert await replica.get("/livez") == (200, "ok")
        unbound = {p["metadata"]["name"] for p in pods if not p["spec"].get("nodeName")}
        assert unbound == {"absurd-cpu", "absurd-memory", "nowhere"}
        assert_drained([p for p in pods if p["spec"].get("nodeName")], await nodes_of(api))
        assert recovery <= 5.0
        replica.p.send_signal(signal.SIGTERM)
        assert await anyio.to_thread.run_sync(replica.p.wait, 20) == 0, replica.tail()


async def _bound(api: Api) -> int:
    return sum(1 for p in await api.pods() if p["spec"].get("nodeName"))


async def _bound_at_least(api: Api, count: int) -> bool:
    return await _bound(api) >= count


async def _bound_while_up(api: Api, count: int) -> bool:
    try:
        return await _bound_at_least(api, count)
    except Exception:  # still down
        return False

"""Faults between ksched and a private kube-apiserver: restart, 410 Gone, a flaky network.

Each test here owns its control plane (it restarts or compacts it).
"""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import httpx
import pytest

from ksched import Scheduler
from ksched.kube import KubeClient, KubeCluster, TokenBucket

from ._plane import ControlPlane, missing
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

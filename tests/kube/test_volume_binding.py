"""VolumeBinding's PreBind through a real kube-apiserver.

No kube-controller-manager runs, so each test plays the PV controller (and the external
provisioner): it waits for the scheduler's writes (binder.go bindAPIUpdate: the PV's
claimRef with pv.kubernetes.io/bound-by-controller, or the claim's
volume.kubernetes.io/selected-node), checks them, then binds the claim as the controller
would (spec.volumeName, pv.kubernetes.io/bind-completed, both phases Bound).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import httpx
import pytest

from ksched import Scheduler, load_config
from ksched.kube import KubeClient, KubeCluster, TokenBucket

from ._plane import ControlPlane, pod_manifest
from ._support import wait_until
from .conftest import Api, http_client

pytestmark = pytest.mark.anyio

MERGE = "application/merge-patch+json"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
SELECTED_NODE = "volume.kubernetes.io/selected-node"


def _config(name: str, bind_timeout: int | None = None) -> Any:
    text = f"profiles:\n- schedulerName: {name}\n"
    if bind_timeout is not None:
        text += (
            "  pluginConfig:\n  - name: VolumeBinding\n"
            f"    args: {{bindTimeoutSeconds: {bind_timeout}}}\n"
        )
    return load_config(text)


class VolumeWrites(httpx.AsyncBaseTransport):
    """Records the scheduler's PV and PVC writes (method, path) that the server took."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.writes: Counter[tuple[str, str]] = Counter()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        path = request.url.path
        volume = "/persistentvolumes/" in path or "/persistentvolumeclaims/" in path
        if request.method != "GET" and volume and response.status_code < 300:
            self.writes[(request.method, path.rsplit("/", 1)[1])] += 1
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class Storage:
    """Test-side storage objects, and the PV controller's moves."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.ns = api.ns
        self.pvcs = f"/api/v1/namespaces/{api.ns}/persistentvolumeclaims"

    async def storage_class(self, name: str, provisioner: str) -> None:
        body = {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": name},
            "provisioner": provisioner,
            "volumeBindingMode": "WaitForFirstConsumer",
        }
        await self.api.client.request("POST", "/apis/storage.k8s.io/v1/storageclasses", body=body)

    async def pv(self, name: str, storage_class: str, node: str) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": storage_class,
                "local": {"path": "/mnt/disk"},
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "kubernetes.io/hostname",
                                        "operator": "In",
                                        "values": [node],
                                    }
                                ]
                            }
                        ]
                    }
                },
            },
        }
        await self.api.client.request("POST", "/api/v1/persistentvolumes", body=body)
        await self.phase(f"/api/v1/persistentvolumes/{name}", "Available")

    async def pvc(self, name: str, storage_class: str) -> dict[str, Any]:
        body = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": storage_class,
                "resources": {"requests": {"storage": "1Gi"}},
            },
        }
        pvc: dict[str, Any] = await self.api.client.request("POST", self.pvcs, body=body)
        return pvc

    async def pod(self, name: str, claim: str, scheduler: str) -> None:
        pod = pod_manifest(
            name, self.ns, scheduler=scheduler, node_selector={"ksched-test": self.ns}
        )
        pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
        await self.api.client.request("POST", f"/api/v1/namespaces/{self.ns}/pods", body=pod)

    async def get(self, path: str) -> dict[str, Any]:
        obj: dict[str, Any] = await self.api.client.request("GET", path)
        return obj

    async def phase(self, path: str, phase: str) -> None:
        await self.api.client.request(
            "PATCH", f"{path}/status", body={"status": {"phase": phase}}, content_type=MERGE
        )

    async def bind(self, claim: str, pv: str) -> None:
        """The PV controller's syncClaim for a claim whose PV names it."""
        path = f"{self.pvcs}/{claim}"
        annotations = {BIND_COMPLETED: "yes", BOUND_BY_CONTROLLER: "yes"}
        body = {"metadata": {"annotations": annotations}, "spec": {"volumeName": pv}}
        await self.api.client.request("PATCH", path, body=body, content_type=MERGE)
        await self.phase(f"/api/v1/persistentvolumes/{pv}", "Bound")
        await self.phase(path, "Bound")

    async def provision(self, claim: dict[str, Any], storage_class: str, node: str) -> str:
        """The external provisioner: a PV on the selected node, bound to the claim."""
        meta = claim["metadata"]
        name = f"pvc-{meta['uid']}"
        await self.pv(name, storage_class, node)
        ref = {"kind": "PersistentVolumeClaim", "namespace": self.ns, "name": meta["name"]}
        ref["uid"] = meta["uid"]
        await self.api.client.request(
            "PATCH",
            f"/api/v1/persistentvolumes/{name}",
            body={"spec": {"claimRef": ref}},
            content_type=MERGE,
        )
        await self.bind(meta["name"], name)
        return name


async def _node_name(api: Api, pod: str) -> str | None:
    name: str | None = (await api.pod(pod))["spec"].get("nodeName")
    return name


async def test_static_binding_writes_the_pv_claim_ref_then_binds(
    plane: ControlPlane, api: Api
) -> None:
    name = f"ksched-{api.ns}"
    storage = Storage(api)
    nodes = [f"{api.ns}-n0", f"{api.ns}-n1"]
    for node in nodes:
        await api.create_node(node, cpu="2")
    sc, pv = f"local-{api.ns}", f"pv-{api.ns}"
    await storage.storage_class(sc, "kubernetes.io/no-provisioner")
    await storage.pv(pv, sc, nodes[1])
    claim = await storage.pvc("data", sc)
    await storage.pod("web", "data", name)
    writes = VolumeWrites(httpx.AsyncHTTPTransport(verify=False))
    async with (
        http_client(plane.url, transport=writes) as http,
        KubeCluster.open(KubeClient(http, TokenBucket(0, 0)), scheduler_names=(name,)) as cluster,
    ):
        await cluster.wait_synced()
        async with Scheduler.open(_config(name), cluster=cluster):
            pv_path = f"/api/v1/persistentvolumes/{pv}"

            async def claimed() -> bool:
                return bool((await storage.get(pv_path))["spec"].get("claimRef"))

            await wait_until(claimed, 15)
            written = await storage.get(pv_path)
            ref = written["spec"]["claimRef"]
            assert (ref["kind"], ref["namespace"], ref["name"]) == (
                "PersistentVolumeClaim",
                api.ns,
                "data",
            )
            assert ref["uid"] == claim["metadata"]["uid"]
            assert written["metadata"]["annotations"][BOUND_BY_CONTROLLER] == "yes"
            assert written["spec"]["local"] == {"path": "/mnt/disk"}  # nothing else lost
            await anyio.sleep(0.5)  # PreBind waits for the controller: no bind yet
            assert await _node_name(api, "web") is None
            await storage.bind("data", pv)
            bound = await cluster.wait_bound(f"{api.ns}/web", timeout=10)
    assert bound.spec.node_name == nodes[1]
    assert await _node_name(api, "web") == nodes[1]
    assert writes.writes == Counter({("PATCH", pv): 1})


async def test_dynamic_provisioning_annotates_the_claim_with_the_selected_node(
    plane: ControlPlane, api: Api
) -> None:
    name = f"ksched-{api.ns}"
    storage = Storage(api)
    await api.create_node(f"{api.ns}-n0", cpu="2")
    sc = f"csi-{api.ns}"
    await storage.storage_class(sc, "csi.example.com")
    await storage.pvc("data", sc)
    await storage.pod("db", "data", name)
    async with (
        http_client(plane.url) as http,
        KubeCluster.open(KubeClient(http, TokenBucket(0, 0)), scheduler_names=(name,)) as cluster,
    ):
        await cluster.wait_synced()
        async with Scheduler.open(_config(name), cluster=cluster):
            claim_path = f"{storage.pvcs}/data"

            async def selected() -> bool:
                annotations = (await storage.get(claim_path))["metadata"].get("annotations")
                return SELECTED_NODE in (annotations or {})

            await wait_until(selected, 15)
            claim = await storage.get(claim_path)
            node = claim["metadata"]["annotations"][SELECTED_NODE]
            assert node == f"{api.ns}-n0"
            assert await _node_name(api, "db") is None
            pv = await storage.provision(claim, sc, node)
            bound = await cluster.wait_bound(f"{api.ns}/db", timeout=10)
    assert bound.spec.node_name == node
    final = await storage.get(f"{storage.pvcs}/data")
    assert final["spec"]["volumeName"] == pv
    assert final["status"]["phase"] == "Bound"


async def test_bind_timeout_fails_the_attempt_and_the_pod_is_retried(
    plane: ControlPlane, api: Api
) -> None:
    name = f"ksched-{api.ns}"
    storage = Storage(api)
    await api.create_node(f"{api.ns}-n0", cpu="2")
    sc = f"csi-{api.ns}"
    await storage.storage_class(sc, "csi.example.com")
    await storage.pvc("data", sc)
    await storage.pod("db", "data", name)
    writes = VolumeWrites(httpx.AsyncHTTPTransport(verify=False))
    async with (
        http_client(plane.url, transport=writes) as http,
        KubeCluster.open(KubeClient(http, TokenBucket(0, 0)), scheduler_names=(name,)) as cluster,
    ):
        await cluster.wait_synced()
        async with Scheduler.open(_config(name, bind_timeout=1), cluster=cluster):
            # 1 s timeout, then the error backoff (1 s): a second attempt writes again.
            await wait_until(lambda: writes.writes[("PATCH", "data")] >= 2, 10)
            pod = await api.pod("db")
            assert pod["spec"].get("nodeName") is None
            cond = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
            assert (cond["status"], cond["reason"]) == ("False", "SchedulerError")
            assert "binding volumes: context deadline exceeded" in cond["message"]
            # The controller finally answers: the next attempt binds the pod.
            claim = await storage.get(f"{storage.pvcs}/data")
            await storage.provision(claim, sc, f"{api.ns}-n0")
            bound = await cluster.wait_bound(f"{api.ns}/db", timeout=10)
    assert bound.spec.node_name == f"{api.ns}-n0"

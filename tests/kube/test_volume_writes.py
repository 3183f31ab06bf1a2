"""KubeCluster.update_volume (VolumeBinding's PreBind writes) without a server.

# volumebinding/binder.go bindAPIUpdate / checkBindings (skip an API object older than the
# one written); apiserver/pkg/storage APIObjectVersioner (resourceVersions as integers).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from ksched.api import ANN_SELECTED_NODE, PersistentVolumeClaim, read_object
from ksched.cluster._store import VolumeUpdateError, VolumeUpdater
from ksched.kube import RESOURCES, KubeClient, KubeCluster, Reflector, TokenBucket
from ksched.kube._store import is_older

pytestmark = pytest.mark.anyio

PVC = next(r for r in RESOURCES if r.kind == "PersistentVolumeClaim")
CONFLICT = (
    'Operation cannot be fulfilled on persistentvolumeclaims "data": the object has been '
    "modified; please apply your changes to the latest version and try again"
)


@pytest.mark.parametrize(
    ("version", "than", "older"),
    [
        pytest.param("9", "10", True, id="integers, not strings"),
        pytest.param("10", "10", False, id="same"),
        pytest.param("11", "10", False, id="newer"),
        pytest.param("abc", "10", False, id="not a revision"),
    ],
)
def test_is_older(version: str, than: str, older: bool) -> None:
    assert is_older(version, than) is older


def _read_pvc(raw: dict[str, Any]) -> PersistentVolumeClaim:
    claim = read_object(raw)
    assert isinstance(claim, PersistentVolumeClaim)
    return claim


def _raw_pvc(rv: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "data",
            "namespace": "ns",
            "uid": "u1",
            "resourceVersion": rv,
            "annotations": annotations or {},
        },
        "spec": {"storageClassName": "csi", "resources": {"requests": {"storage": "1Gi"}}},
    }


def _store(answer: httpx.Response, seen: list[httpx.Request]) -> tuple[KubeCluster, Reflector]:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer

    http = httpx.AsyncClient(base_url="http://k", transport=httpx.MockTransport(handler))
    client = KubeClient(http, TokenBucket(0, 0), max_retries=0)
    store = KubeCluster(client, client)
    reflector = Reflector(client, PVC, store._apply, store._remove)
    store.reflectors[PVC.kind] = reflector
    reflector._handle({"type": "ADDED", "object": _raw_pvc("10")})
    return store, reflector


async def test_claim_write_is_a_merge_patch_at_the_cached_version_and_waits_for_the_watch() -> None:
    seen: list[httpx.Request] = []
    written = _raw_pvc("12", {ANN_SELECTED_NODE: "n1"})
    store, reflector = _store(httpx.Response(200, json=written), seen)
    assert isinstance(store, VolumeUpdater)
    assumed = _read_pvc(written)
    done = anyio.Event()

    async def write() -> None:
        await store.update_volume(assumed)
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(write)
        await anyio.wait_all_tasks_blocked()
        assert not done.is_set()  # the PATCH answered 12; the cache holds 10
        reflector._handle({"type": "MODIFIED", "object": _raw_pvc("11")})
        await anyio.wait_all_tasks_blocked()
        assert not done.is_set()  # 11 is still older than what was written
        reflector._handle({"type": "MODIFIED", "object": written})
        with anyio.fail_after(1):
            await done.wait()
    (request,) = seen
    assert request.method == "PATCH"
    assert request.url.path == "/api/v1/namespaces/ns/persistentvolumeclaims/data"
    assert request.headers["content-type"] == "application/merge-patch+json"
    body = json.loads(request.content)
    assert body == {"metadata": {"resourceVersion": "10", "annotations": {ANN_SELECTED_NODE: "n1"}}}
    assert store._version_waiters == {}


async def test_refused_write_raises_with_the_servers_message() -> None:
    seen: list[httpx.Request] = []
    status = {"kind": "Status", "reason": "Conflict", "message": CONFLICT, "code": 409}
    store, _ = _store(httpx.Response(409, json=status), seen)
    assumed = _read_pvc(_raw_pvc("10", {ANN_SELECTED_NODE: "n1"}))
    with pytest.raises(VolumeUpdateError) as info:
        await store.update_volume(assumed)
    assert str(info.value) == CONFLICT


async def test_write_of_an_uncached_object_is_refused_without_a_request() -> None:
    seen: list[httpx.Request] = []
    store, reflector = _store(httpx.Response(200, json={}), seen)
    reflector._handle({"type": "DELETED", "object": _raw_pvc("11")})
    with pytest.raises(VolumeUpdateError, match='persistentvolumeclaims "data" not found'):
        await store.update_volume(_read_pvc(_raw_pvc("10")))
    assert seen == []

"""Fixtures: a shared real kube-apiserver per session, a namespace per test, clients."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from ksched.kube import KubeClient, KubeConfig, TokenBucket

from ._plane import TOKEN, ControlPlane, missing, node_manifest, node_status, pod_manifest
from ._replicas import Replica

_names = itertools.count()


@pytest.fixture(scope="session")
def plane() -> Iterator[ControlPlane]:
    why = missing()
    if why is not None:
        pytest.skip(why)
    control = ControlPlane().start()
    try:
        yield control
    finally:
        control.stop()


def kube_config(server: str) -> KubeConfig:
    return KubeConfig(server=server, token=TOKEN, insecure=True)


class Api:
    """Test-side API calls (an admin client, not rate limited)."""

    def __init__(self, client: KubeClient, namespace: str) -> None:
        self.client = client
        self.ns = namespace

    async def create_namespace(self, name: str) -> None:
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        await self.client.request("POST", "/api/v1/namespaces", body=body)

    async def create_node(self, name: str, **resources: Any) -> None:
        node = node_manifest(name, labels={"ksched-test": self.ns})
        await self.client.request("POST", "/api/v1/nodes", body=node)
        await self.client.request(
            "PATCH",
            f"/api/v1/nodes/{name}/status",
            body=node_status(**resources),
            content_type="application/merge-patch+json",
        )
        await self.client.request(
            "PATCH",
            f"/api/v1/nodes/{name}",
            body={"spec": {"taints": None}},
            content_type="application/merge-patch+json",
        )

    async def delete_node(self, name: str) -> None:
        await self.client.request("DELETE", f"/api/v1/nodes/{name}")

    async def create_pod(self, name: str, **options: Any) -> dict[str, Any]:
        pod: dict[str, Any] = await self.client.request(
            "POST",
            f"/api/v1/namespaces/{self.ns}/pods",
            body=pod_manifest(name, self.ns, node_selector={"ksched-test": self.ns}, **options),
        )
        return pod

    async def pods(self) -> list[dict[str, Any]]:
        body = await self.client.request("GET", f"/api/v1/namespaces/{self.ns}/pods")
        return list(body["items"])

    async def pod(self, name: str) -> dict[str, Any]:
        pod: dict[str, Any] = await self.client.request(
            "GET", f"/api/v1/namespaces/{self.ns}/pods/{name}"
        )
        return pod

    async def events(self) -> list[dict[str, Any]]:
        body = await self.client.request(
            "GET", f"/apis/events.k8s.io/v1/namespaces/{self.ns}/events"
        )
        return list(body["items"])

    async def create_priority_class(self, name: str, value: int) -> None:
        body = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
        }
        try:
            await self.client.request(
                "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", body=body
            )
        except Exception as exc:  # already there from an earlier test (other backend)
            if "AlreadyExists" not in str(exc):
                raise


def unique(prefix: str) -> str:
    return f"{prefix}-{next(_names)}"


@pytest.fixture
async def api(plane: ControlPlane) -> AsyncIterator[Api]:
    async with kube_config(plane.url).http_client() as http:
        client = KubeClient(http, TokenBucket(0, 0))
        api = Api(client, unique("t"))
        await api.create_namespace(api.ns)
        yield api


def http_client(server: str, **options: Any) -> httpx.AsyncClient:
    return kube_config(server).http_client(**options)


@pytest.fixture
def replicas() -> Iterator[list[Replica]]:
    """``ksched run`` processes a test starts; each is killed at its end."""
    started: list[Replica] = []
    yield started
    for replica in started:
        replica.stop()

"""Helpers shared by the kube tests: configs, a recording transport, a chaos TCP proxy."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import anyio
import anyio.abc
import httpx

from ksched import SchedulerConfig, load_config
from ksched.api import quantity_value
from ksched.kube import KubeCluster


def profile_config(name: str, **extra: Any) -> SchedulerConfig:
    text = f"profiles:\n- schedulerName: {name}\n"
    for key, value in extra.items():
        text += f"{key}: {value}\n"
    return load_config(text)


class RecordingTransport(httpx.AsyncBaseTransport):
    """Counts successful binding POSTs per pod (to prove no pod is bound twice)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.bindings: Counter[str] = Counter()
        self.binding_attempts: Counter[str] = Counter()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        path = request.url.path
        if request.method == "POST" and path.endswith("/binding"):
            pod = path.split("/pods/")[1].rsplit("/", 1)[0]
            self.binding_attempts[pod] += 1
            if response.status_code < 300:
                self.bindings[pod] += 1
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def requested_milli_cpu(pods: list[dict[str, Any]]) -> Counter[str]:
    """Node -> the CPU (millicores) its bound pods request."""
    used: Counter[str] = Counter()
    for pod in pods:
        node = pod["spec"].get("nodeName")
        if node:
            for c in pod["spec"]["containers"]:
                cpu = c.get("resources", {}).get("requests", {}).get("cpu", "0")
                used[node] += quantity_value("cpu", cpu)
    return used


async def wait_until(predicate: Any, timeout: float, interval: float = 0.1) -> None:
    """Poll ``predicate()`` (sync or async) until true; TimeoutError after ``timeout``."""
    with anyio.fail_after(timeout):
        while True:
            result = predicate()
            if not isinstance(result, bool):
                result = await result
            if result:
                return
            await anyio.sleep(interval)


def bound_count(cluster: KubeCluster, namespace: str) -> int:
    return sum(1 for p in cluster.pods() if p.namespace == namespace and p.spec.node_name)


__all__ = [
    "ChaosProxy",
    "LoopbackProxy",
    "RecordingTransport",
    "bound_count",
    "profile_config",
    "requested_milli_cpu",
    "wait_until",
]


class LoopbackProxy:
    """A listener on a free 127.0.0.1 port whose connections (each in a cancel scope the
    subclass's ``_handle`` adds to ``_scopes``) can all be cut at once."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self._scopes: set[anyio.CancelScope] = set()

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        async with listener:
            self.port = int(listener.extra(anyio.abc.SocketAttribute.local_address)[1])
            task_status.started(self.port)
            await listener.serve(self._handle)

    def cut_all(self) -> int:
        """Cut every open connection (a partition, an LB reset); returns how many."""
        scopes = list(self._scopes)
        for scope in scopes:
            scope.cancel()
        return len(scopes)

    async def _handle(self, client: anyio.abc.SocketStream) -> None:
        raise NotImplementedError


class ChaosProxy(LoopbackProxy):
    """A loopback TCP proxy that can cut every connection and delay traffic."""

    def __init__(self, upstream_port: int, *, seed: int = 0) -> None:
        super().__init__(upstream_port)
        self.delay = 0.0
        self.paused = False
        self.drop_probability = 0.0
        self._rng = random.Random(seed)
        self.connections = 0
        self.dropped = 0

    def drop_all(self) -> None:
        """Cut every open connection (as a network partition or LB reset would)."""
        self.dropped += self.cut_all()

    async def _pump(
        self, src: anyio.abc.ByteStream, dst: anyio.abc.ByteStream, scope: anyio.CancelScope
    ) -> None:
        """Copy one direction; the end of either direction ends the connection."""
        try:
            async for chunk in src:
                if self.delay:
                    await anyio.sleep(self.delay * self._rng.random())
                if self.drop_probability and self._rng.random() < self.drop_probability:
                    self.dropped += 1
                    raise anyio.EndOfStream
                await dst.send(chunk)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream):
            pass
        scope.cancel()

    async def _handle(self, client: anyio.abc.SocketStream) -> None:
        async with client:
            if self.paused:
                return
            self.connections += 1
            try:
                upstream = await anyio.connect_tcp("127.0.0.1", self.upstream_port)
            except OSError:
                return
            async with upstream:
                with anyio.CancelScope() as scope:
                    self._scopes.add(scope)
                    try:
                        async with anyio.create_task_group() as tg:
                            tg.start_soon(self._pump, client, upstream, scope)
                            await self._pump(upstream, client, scope)
                    finally:
                        self._scopes.discard(scope)

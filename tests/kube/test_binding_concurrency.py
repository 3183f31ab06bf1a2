"""`ksched run` against a real kube-apiserver: a backlog's bindings go out many at once.

A binding's round trip is mostly the API server's etcd commit, so a drain's pace is the
bindings in flight over that time. Here every binding is held back for a while on its way
to the API server; the most held at once is the scheduling client's limit, and a limit
of 8 would have been seen as 8.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from ksched.kube import KubeConfig
from ksched.kube._run import BINDING_IN_FLIGHT, RunOptions, run
from ksched.kube._transport import KeepAliveTransport
from ksched.observability import ServingOptions

from ._plane import ControlPlane
from ._support import profile_config, wait_until
from .conftest import Api, kube_config

pytestmark = pytest.mark.anyio

PODS = 2 * BINDING_IN_FLIGHT + 8
HOLD = 0.3
"""Seconds each binding is held: far longer than the loop takes to start the next."""


class HeldBindings(httpx.AsyncBaseTransport):
    """Holds each binding POST for ``HOLD`` seconds; counts how many are held at once."""

    def __init__(self, inner: httpx.AsyncBaseTransport, counts: dict[str, float]) -> None:
        self.inner = inner
        self.counts = counts

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or not request.url.path.endswith("/binding"):
            return await self.inner.handle_async_request(request)
        counts = self.counts
        counts.setdefault("first", anyio.current_time())
        counts["now"] += 1
        counts["most"] = max(counts["most"], counts["now"])
        try:
            await anyio.sleep(HOLD)
            return await self.inner.handle_async_request(request)
        finally:
            counts["now"] -= 1

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_backlog_binds_up_to_the_clients_limit_at_once(
    plane: ControlPlane, api: Api
) -> None:
    name = f"ksched-{api.ns}"
    for i in range(2):
        await api.create_node(f"{api.ns}-n{i}", cpu="8", pods=PODS)
    for i in range(PODS):
        await api.create_pod(f"p{i}", scheduler=name)
    counts: dict[str, float] = {"now": 0, "most": 0}

    def held(kube: KubeConfig) -> httpx.AsyncClient:
        inner = KeepAliveTransport(kube.ssl_context())
        return kube.http_client(transport=HeldBindings(inner, counts))

    config = profile_config(name, leaderElection="{leaderElect: false}")
    options = RunOptions(health_port=0, http=held, serving=ServingOptions(http=True))

    async def bound() -> int:
        pods: list[dict[str, Any]] = await api.pods()
        return sum(1 for p in pods if p["spec"].get("nodeName"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, config, kube_config(plane.url), options)
        for _ in range(300):  # bounded: 30 s
            if await bound() == PODS:
                break
            await anyio.sleep(0.1)
        took = anyio.current_time() - counts["first"]
        tg.cancel_scope.cancel()
    assert await bound() == PODS
    assert counts["most"] == BINDING_IN_FLIGHT > 8
    # From the first binding: ceil(PODS / limit) rounds of HOLD, not PODS / 8 of them.
    assert took < (PODS / 8) * HOLD * 2 / 3, took
    await wait_until(lambda: counts["now"] == 0, 5)

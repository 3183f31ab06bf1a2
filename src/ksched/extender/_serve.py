"""Serving an :class:`ExtenderServer` on a port until cancelled (``ksched extender serve``)."""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from ..observability import RestClientMetrics, serve_http
from ._server import ExtenderServer, ServedCluster

if TYPE_CHECKING:
    from ..kube import KubeConfig

__all__ = ["serve_extender"]

log = logging.getLogger("ksched.extender")


async def serve_extender(
    server: ExtenderServer,
    host: str,
    port: int,
    *,
    kube: KubeConfig | None = None,
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Answer the extender verbs and the health endpoints on ``host:port``; with ``kube``,
    the bind verb binds through that cluster's API. Reports the bound port."""
    from ..kube import KubeClient, KubeCluster

    async with AsyncExitStack() as stack:
        if kube is not None and isinstance(server.cluster, ServedCluster):
            http = await stack.enter_async_context(kube.http_client())
            client = KubeClient(http, metrics=RestClientMetrics(server.metrics.registry))
            server.cluster.binder = KubeCluster(client, client)  # its bind, no watches
        async with anyio.create_task_group() as tg:
            bound = await tg.start(serve_http, server.handle, host, port)
            log.info(
                "serving the extender",
                extra={"kv": {"address": f"{host}:{bound}", "prefix": server.url_prefix or "/"}},
            )
            task_status.started(bound)

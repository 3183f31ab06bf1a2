"""Serving an :class:`ExtenderServer` on a port until cancelled (``ksched extender serve``).

The port is served as ``ksched run``'s health port is (``ksched.observability.Serving``):
HTTPS unless plain HTTP is asked for, clients authenticated by certificate or Bearer
token. Holding cluster credentials (``kube``), the server binds pods with them, so then
every path but the health endpoints, ``filter`` and ``prioritize`` (answers computed from
the request alone) is authorized by a SubjectAccessReview: ``bind``, ``preempt`` and
``/metrics`` are refused to callers the cluster does not allow (``post`` on the path, as
a ClusterRole's ``nonResourceURLs`` grants it). Without credentials nothing is refused.
"""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING

import anyio
import anyio.abc
import attrs

from ..observability import Authenticator, Limits, RestClientMetrics, Serving, ServingOptions
from ..observability._http_messages import MiB
from ._server import ExtenderServer, ServedCluster

if TYPE_CHECKING:
    from ..kube import KubeConfig

__all__ = ["EXTENDER_LIMITS", "OPEN_VERBS", "extender_serving", "serve_extender"]

log = logging.getLogger("ksched.extender")

EXTENDER_LIMITS = Limits(max_body_bytes=32 * MiB, max_connections=64)
"""A 5000-node filter request carries about 10 MiB of nodes; fewer connections than the
health port, as each may hold a body this large."""


OPEN_VERBS = ("filter", "prioritize")
"""Verbs whose answers come from the request alone: open to every caller."""


def extender_serving(
    options: ServingOptions, host: str, server: ExtenderServer, *, credentials: bool
) -> Serving:
    """The port's serving: with cluster ``credentials``, all but the health endpoints,
    ``filter`` and ``prioritize`` need the cluster's leave (a SubjectAccessReview)."""
    open_paths = (*options.always_allow_paths, *(server.verb_path(v) for v in OPEN_VERBS))
    options = attrs.evolve(options, always_allow_paths=open_paths)
    return Serving.build(options, host, authorize=credentials)


async def serve_extender(
    server: ExtenderServer,
    host: str,
    port: int,
    *,
    kube: KubeConfig | None = None,
    serving: Serving | None = None,
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Answer the extender verbs and the health endpoints on ``host:port``; with ``kube``,
    the bind verb binds through that cluster's API, and ``serving`` checks its callers
    there. Without ``serving``: plain HTTP, no checks. Reports the bound port."""
    from ..kube import KubeClient, KubeCluster
    from ..kube._delegated_auth import DelegatedAuth, review_limiter

    async with AsyncExitStack() as stack:
        if kube is not None and isinstance(server.cluster, ServedCluster):
            http = await stack.enter_async_context(kube.http_client())
            client = KubeClient(http, metrics=RestClientMetrics(server.metrics.registry))
            server.cluster.binder = KubeCluster(client, client)  # its bind, no watches
        if kube is not None and serving is not None:
            auth_http = await stack.enter_async_context(kube.http_client())
            serving.delegate(DelegatedAuth(KubeClient(auth_http, review_limiter())))
        if serving is None:
            serving = Serving(None, Authenticator(), None, EXTENDER_LIMITS)
        async with anyio.create_task_group() as tg:
            bound = await tg.start(serving.serve, server.handle, host, port)
            log.info(
                "serving the extender",
                extra={
                    "kv": {
                        "address": f"{serving.scheme}://{host}:{bound}",
                        "prefix": server.url_prefix or "/",
                    }
                },
            )
            task_status.started(bound)

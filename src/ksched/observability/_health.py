"""/healthz, /livez, /readyz and /metrics, as kube-scheduler serves them.

# kube-scheduler serves these on --secure-port 10259; readyz adds "sched-handler-sync"
# (caches synced) and, when electing, the leader's health to the liveness checks.
Each endpoint answers ``ok`` (200) or the failed checks (500), one ``[-]name failed:
reason`` line each; ``/metrics`` is the given registry in the exposition format the
client's ``Accept`` asks for (prometheus_client's text format or OpenMetrics).
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import anyio.abc
import attrs
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from .._errors import ConfigError
from ._http import Request, Response, serve_http
from ._serving import Serving

__all__ = ["Check", "HealthServer", "parse_address"]

Check = Callable[[], str | None]
"""A check returns None when healthy, else the reason."""


def parse_address(value: str, *, flag: str = "--health-address") -> tuple[str, int]:
    """``host:port`` (port 0: any free port); ConfigError naming ``flag`` otherwise."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"{flag}: expected HOST:PORT, got {value!r}")
    return host.strip("[]"), int(port)


@attrs.define(eq=False)
class HealthServer:
    """The health endpoints and, with a ``registry``, ``/metrics``."""

    live: dict[str, Check] = attrs.field(factory=dict)
    ready: dict[str, Check] = attrs.field(factory=dict)
    registry: CollectorRegistry | None = None
    port: int = 0

    def answer(self, path: str, accept: str = "") -> Response:
        """The response to ``GET path`` (``accept``: the request's Accept header)."""
        path = path.rstrip("/") or "/"
        if path == "/metrics" and self.registry is not None:
            encode, content_type = choose_encoder(accept)
            return Response(200, encode(self.registry), content_type)
        checks = {
            "/healthz": self.live,
            "/livez": self.live,
            "/readyz": {**self.live, **self.ready},
        }.get(path)
        if checks is None:
            return Response.text("not found\n", 404)
        failed = [f"[-]{name} failed: {why}" for name, c in checks.items() if (why := c())]
        if failed:
            return Response.text("\n".join(failed) + f"\n{path[1:]} check failed\n", 500)
        return Response.text("ok")

    async def handle(self, request: Request) -> Response:
        """The HTTP handler: GET and HEAD only."""
        if request.method not in ("GET", "HEAD"):
            return Response.text("method not allowed\n", 405)
        return self.answer(request.path, request.headers.get("accept", ""))

    async def serve(
        self,
        host: str,
        port: int,
        *,
        serving: Serving | None = None,
        task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen until cancelled; reports the bound port to ``task_status``. Without
        ``serving``: plain HTTP, no checks (embedding and tests)."""
        async with anyio.create_task_group() as tg:
            if serving is None:
                self.port = await tg.start(serve_http, self.handle, host, port)
            else:
                self.port = await tg.start(serving.serve, self.handle, host, port)
            task_status.started(self.port)

"""/healthz, /livez and /readyz over plain HTTP on a loopback (or given) address.

# kube-scheduler serves these on --secure-port 10259; readyz includes
# "sched-handler-sync" (informers synced) and, when electing, the leader's health.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import anyio
import anyio.abc
import attrs

from .._errors import ConfigError

__all__ = ["HealthServer", "parse_address"]


def parse_address(value: str) -> tuple[str, int]:
    """``host:port`` (port 0: any free port)."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"--health-address: expected HOST:PORT, got {value!r}")
    return host.strip("[]"), int(port)


Check = Callable[[], str | None]
"""A check returns None when healthy, else the reason."""


@attrs.define(eq=False)
class HealthServer:
    """Answers ``ok`` (200) or the failed checks (500) per endpoint."""

    live: dict[str, Check] = attrs.field(factory=dict)
    ready: dict[str, Check] = attrs.field(factory=dict)
    port: int = 0

    def _answer(self, path: str) -> tuple[int, str]:
        path = path.split("?", 1)[0].rstrip("/")
        checks = {
            "/healthz": self.live,
            "/livez": self.live,
            "/readyz": {**self.live, **self.ready},
        }
        if path not in checks:
            return 404, "not found\n"
        failed = [f"[-]{name} failed: {why}" for name, c in checks[path].items() if (why := c())]
        if failed:
            return 500, "\n".join(failed) + f"\n{path[1:]} check failed\n"
        return 200, "ok"

    async def _handle(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            data = b""
            with anyio.move_on_after(5):
                while b"\r\n\r\n" not in data and len(data) < 8192:
                    chunk = await stream.receive(4096)
                    if not chunk:
                        break
                    data += chunk
            parts = data.split(b" ", 2)
            path = parts[1].decode("latin-1") if len(parts) > 1 else "/"
            status, body = self._answer(path)
            reason = {200: "OK", 404: "Not Found", 500: "Internal Server Error"}[status]
            payload = body.encode()
            head = (
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
            )
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.send(head.encode() + payload)

    async def serve(
        self,
        host: str,
        port: int,
        *,
        task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen until cancelled; reports the bound port to ``task_status``."""
        listener = await anyio.create_tcp_listener(local_host=host, local_port=port)
        async with listener:
            sock = listener.extra(anyio.abc.SocketAttribute.local_address)
            self.port = int(sock[1])
            task_status.started(self.port)
            await listener.serve(self._handle)

"""A small HTTP/1.1 server on anyio streams (h11), for the edges that serve HTTP.

``/metrics`` and the health endpoints, and ``ksched extender serve``, run on it: one task
per connection under the caller's task group, keep-alive, bounded request bodies, and
one handler call per request. It runs on asyncio and trio alike.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import anyio.abc
import attrs
import h11

__all__ = ["MAX_BODY_BYTES", "Handler", "Request", "Response", "parse_address", "serve_http"]

logger = logging.getLogger("ksched.http")

MAX_BODY_BYTES = 64 * 1024 * 1024
"""The largest request body accepted (a 5000-node extender request is ~10 MiB)."""

_READ_CHUNK = 65536
_IDLE_TIMEOUT = 120.0


@attrs.frozen
class Request:
    """One HTTP request: method, target path (query string split off) and body."""

    method: str
    path: str
    query: str
    headers: Mapping[str, str]
    body: bytes


@attrs.frozen
class Response:
    """What a handler returns."""

    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: Mapping[str, str] = attrs.field(factory=dict)

    @classmethod
    def text(cls, text: str, status: int = 200) -> Response:
        return cls(status, text.encode())


Handler = Callable[[Request], Awaitable[Response]]
"""``await handler(request) -> Response``; an exception answers 500 with its text."""


def parse_address(address: str, *, default_port: int) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) or ``HOST``; raises ValueError."""
    host, sep, port = address.rpartition(":")
    if not sep or "]" in port:
        host, port = address, str(default_port)
    host = host.strip("[]") or "0.0.0.0"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"invalid address {address!r}: the port must be 0-65535")
    return host, int(port)


async def serve_http(
    handler: Handler,
    host: str,
    port: int,
    *,
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``handler`` on ``host:port`` until cancelled; reports the bound port."""
    listener = await anyio.create_tcp_listener(local_host=host, local_port=port, reuse_port=False)
    async with listener:
        bound: Any = listener.extra(anyio.abc.SocketAttribute.local_port)
        task_status.started(int(bound))
        await listener.serve(lambda stream: _connection(stream, handler))


async def _connection(stream: anyio.abc.ByteStream, handler: Handler) -> None:
    """One client's connection; whatever goes wrong on it ends it, never the listener."""
    try:
        await _serve_connection(stream, handler)
    except Exception:
        logger.exception("HTTP connection failed")


async def _serve_connection(stream: anyio.abc.ByteStream, handler: Handler) -> None:
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=64 * 1024)
    async with stream:
        while True:
            try:
                request = await _read_request(stream, conn)
            except (anyio.EndOfStream, anyio.BrokenResourceError, TimeoutError):
                return
            except _BadRequest as exc:
                await _send(stream, conn, Response(exc.status, exc.message.encode()))
                return
            if request is None:
                return
            try:
                response = await handler(request)
            except Exception as exc:
                logger.exception("%s %s failed", request.method, request.path)
                response = Response(500, f"{type(exc).__name__}: {exc}".encode())
            try:
                await _send(stream, conn, response, head_only=request.method == "HEAD")
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, h11.LocalProtocolError):
                return
            if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
                return
            try:
                conn.start_next_cycle()
            except h11.LocalProtocolError:
                return


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def _read_request(stream: anyio.abc.ByteStream, conn: h11.Connection) -> Request | None:
    head: h11.Request | None = None
    body = bytearray()
    with anyio.fail_after(_IDLE_TIMEOUT):
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError as exc:
                raise _BadRequest(400, f"bad request: {exc}") from exc
            if event is h11.NEED_DATA:
                try:
                    data = await stream.receive(_READ_CHUNK)
                except anyio.EndOfStream:
                    data = b""
                conn.receive_data(data)
                if not data and head is None:
                    return None
                continue
            if isinstance(event, h11.Request):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_BODY_BYTES:
                    raise _BadRequest(413, "request body too large")
            elif isinstance(event, h11.EndOfMessage):
                assert head is not None
                target = head.target.decode("latin-1")
                path, _, query = target.partition("?")
                headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in head.headers}
                return Request(head.method.decode(), path, query, headers, bytes(body))
            elif isinstance(event, h11.ConnectionClosed):
                return None


async def _send(
    stream: anyio.abc.ByteStream,
    conn: h11.Connection,
    response: Response,
    *,
    head_only: bool = False,
) -> None:
    """The response; to a HEAD request, its head alone (the length GET would have)."""
    headers = [
        ("content-type", response.content_type),
        ("content-length", str(len(response.body))),
        *response.headers.items(),
    ]
    data = conn.send(h11.Response(status_code=response.status, headers=headers))
    if not head_only:
        data += conn.send(h11.Data(data=response.body)) or b""
    data += conn.send(h11.EndOfMessage()) or b""
    await stream.send(data)

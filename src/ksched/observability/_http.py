"""The HTTP/1.1 server of the edges that serve HTTP: health and metrics, and the extender.

ksched keeps its own small server over h11 (a well-kept parser, which also yields the 431
for oversized heads) rather than hypercorn, for two reasons the tests pin:

- client-certificate authentication needs the verified peer certificate of the TLS
  connection, and hypercorn 0.18 hands its ASGI application no TLS information (no
  ``tls`` scope extension);
- a flood of connections must be bounded: hypercorn has no connection limit and owns its
  accept loop (``loop.create_server`` on asyncio, ``trio.serve_listeners`` on trio), so a
  flood spends the process's file descriptors, which ``ksched run`` needs for its own
  connections to the API server.

What the server guarantees (``Limits`` holds the numbers): at most ``max_connections``
connections are served at once, the rest wait in the listen backlog; ``EMFILE`` and other
accept errors back off (5 ms doubling to 1 s, as Go's ``net/http`` Server.Serve) and the
server goes on; the TLS handshake and the request head must arrive within
``header_timeout``, the body within ``body_timeout``, the next request on a kept-alive
connection within ``idle_timeout``, each response must be taken within ``write_timeout``;
a head over ``max_header_bytes`` answers 431, a body over ``max_body_bytes`` 413 (before
it is read when its length is declared), ``Expect: 100-continue`` is answered once the
request is admitted; a HEAD request gets the head alone; a handler that raises answers
500. Whatever happens on one connection ends that connection, never the listener.
"""

from __future__ import annotations

import errno
import logging
import ssl
from collections.abc import Awaitable, Callable, Mapping

import anyio
import anyio.abc
import attrs

from ._auth import UserInfo

__all__ = [
    "Guard",
    "Handler",
    "Limits",
    "Request",
    "Response",
    "parse_address",
    "serve_http",
]

logger = logging.getLogger("ksched.http")

MiB = 1024 * 1024


@attrs.frozen(kw_only=True)
class Limits:
    """What one server allows its clients (sizes in bytes, times in seconds)."""

    max_connections: int = 128
    """Connections served at once; more wait in the listen backlog."""
    backlog: int = 128
    """Connections the kernel queues before refusing more."""
    max_header_bytes: int = 64 * 1024
    """The request line and headers; more answers 431."""
    max_body_bytes: int = 1 * MiB
    """The request body; more answers 413 (the extender raises it: a 5000-node request
    is about 10 MiB)."""
    header_timeout: float = 10.0
    """From accept to the end of the first request's head, TLS handshake included."""
    body_timeout: float = 30.0
    """From the end of the head to the end of the body."""
    idle_timeout: float = 30.0
    """How long a kept-alive connection may wait for (the head of) its next request."""
    write_timeout: float = 30.0
    """How long a client may take to read a response."""


@attrs.frozen
class Request:
    """One HTTP request: method, target path (query string split off) and body.

    ``client_subject`` is the subject of the client's verified TLS certificate (attribute
    name to values, e.g. ``{"commonName": ("alice",), "organizationName": ("ops",)}``);
    ``user`` is who the server's guard found the client to be.
    """

    method: str
    path: str
    query: str
    headers: Mapping[str, str]
    body: bytes = b""
    client_subject: Mapping[str, tuple[str, ...]] | None = None
    user: UserInfo | None = None


@attrs.frozen
class Response:
    """What a handler returns."""

    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: Mapping[str, str] = attrs.field(factory=dict)

    @classmethod
    def text(cls, text: str, status: int = 200) -> Response:
        """A plain-text response."""
        return cls(status, text.encode())


Handler = Callable[[Request], Awaitable[Response]]
"""``await handler(request) -> Response``; an exception answers 500 with its text."""

Guard = Callable[[Request], Awaitable[Response | UserInfo]]
"""Runs on each request's head, before its body is read: the user it may act as, or the
answer refusing it (401, 403), which the server sends without reading the body."""


def parse_address(address: str, *, default_port: int) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) or ``HOST``; raises ValueError."""
    host, sep, port = address.rpartition(":")
    if not sep or "]" in port:
        host, port = address, str(default_port)
    host = host.strip("[]") or "0.0.0.0"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"invalid address {address!r}: the port must be 0-65535")
    return host, int(port)


# Accept errors that say "no resources right now": wait and go on (Go's net/http treats
# every temporary accept error so; trio's serve_listeners these four).
_ACCEPT_CAPACITY_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})
_ACCEPT_BACKOFF_FIRST, _ACCEPT_BACKOFF_MAX = 0.005, 1.0


async def serve_http(
    handler: Handler,
    host: str,
    port: int,
    *,
    tls: ssl.SSLContext | None = None,
    limits: Limits | None = None,
    guard: Guard | None = None,
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``handler`` on ``host:port`` until cancelled; reports the bound port.

    With ``tls``, every connection is TLS (HTTPS); with ``guard``, every request passes it
    before its body is read.
    """
    from ._http_connection import Connection

    limits = limits or Limits()
    listener = await anyio.create_tcp_listener(
        local_host=host, local_port=port, reuse_port=False, backlog=limits.backlog
    )
    slots = anyio.Semaphore(limits.max_connections)
    connection = Connection(handler, limits, tls, guard)
    async with listener, anyio.create_task_group() as tg:
        for one in listener.listeners:
            assert isinstance(one, anyio.abc.SocketListener)
            tg.start_soon(_accept_loop, one, slots, connection.serve)
        task_status.started(int(listener.extra(anyio.abc.SocketAttribute.local_port)))


async def _accept_loop(
    listener: anyio.abc.SocketListener,
    slots: anyio.Semaphore,
    serve: Callable[[anyio.abc.SocketStream], Awaitable[None]],
) -> None:
    """Accept while a connection slot is free; back off on accept errors and go on."""
    delay = 0.0
    async with anyio.create_task_group() as tg:
        while True:
            await slots.acquire()
            try:
                stream = await listener.accept()
            except (OSError, anyio.BrokenResourceError) as exc:
                # anyio's trio backend raises BrokenResourceError from the OSError
                error = exc if isinstance(exc, OSError) else exc.__cause__
                if not isinstance(error, OSError):
                    slots.release()
                    raise
                slots.release()
                delay = min(max(2 * delay, _ACCEPT_BACKOFF_FIRST), _ACCEPT_BACKOFF_MAX)
                level = logging.WARNING if error.errno in _ACCEPT_CAPACITY_ERRNOS else logging.INFO
                logger.log(level, "accept failed (%s); retrying in %.3fs", error, delay)
                await anyio.sleep(delay)
                continue
            except BaseException:
                slots.release()
                raise
            delay = 0.0
            tg.start_soon(_serve_in_slot, serve, stream, slots)


async def _serve_in_slot(
    serve: Callable[[anyio.abc.SocketStream], Awaitable[None]],
    stream: anyio.abc.SocketStream,
    slots: anyio.Semaphore,
) -> None:
    try:
        await serve(stream)
    finally:
        slots.release()

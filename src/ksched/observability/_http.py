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
from collections.abc import Awaitable, Callable

import anyio
import anyio.abc

from ._http_messages import Guard, Handler, Limits, Request, Response

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

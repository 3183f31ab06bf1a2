"""A lean HTTP/1.1 keep-alive transport for httpx, on anyio streams.

httpcore's pool rescans every connection on each request and checks each one's liveness
through anyio's typed attributes; at thousands of binding POSTs a second that costs more
than the request itself. Here idle connections wait in a LIFO stack, their liveness is one
``select`` on the socket kept at connect time, and nothing else is scanned. Whole
exchanges (``fetch``) are written and read by ``_http1``; streamed ones (watches, httpx's
requests) by h11.
"""

from __future__ import annotations

import contextlib
import select
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import anyio
import anyio.abc
import anyio.streams.tls
import h11
import httpx

from ._http1 import READ_SIZE, read_response, receive_into, request_bytes

__all__ = ["KeepAliveTransport"]

T = TypeVar("T")

IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


class _Connection:
    """One socket, its h11 state machine (streamed exchanges) and the bytes read past the
    last whole exchange (empty whenever the connection is idle)."""

    def __init__(self, stream: anyio.abc.ByteStream, sock: socket.socket | None) -> None:
        self.stream = stream
        self.sock = sock
        self.h11 = h11.Connection(h11.CLIENT)
        self.buffer = bytearray()

    async def read_more(self) -> bool:
        return await receive_into(self.stream, self.buffer)

    def is_dead(self) -> bool:
        """An idle keep-alive socket that is readable was closed by the server (or sent
        bytes no request asked for): not reusable."""
        if self.sock is None:
            return False
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    async def receive_event(self, timeout: float | None) -> Any:
        while True:
            event = self.h11.next_event()
            if event is not h11.NEED_DATA:
                return event
            try:
                if timeout is None:
                    data = await self.stream.receive(READ_SIZE)
                else:
                    with anyio.fail_after(timeout):
                        data = await self.stream.receive(READ_SIZE)
            except anyio.EndOfStream:
                data = b""
            except TimeoutError as exc:
                raise httpx.ReadTimeout("timed out reading the response") from exc
            except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                raise httpx.ReadError(str(exc) or repr(exc)) from exc
            self.h11.receive_data(data)

    async def aclose(self) -> None:
        with (
            anyio.CancelScope(shield=True),
            anyio.move_on_after(1.0),
            contextlib.suppress(OSError, anyio.BrokenResourceError, ssl.SSLError),
        ):
            await self.stream.aclose()


class _Body(httpx.AsyncByteStream):
    """A response body read from the connection; the connection goes back to the pool
    when the body was read to its end and both sides may start a new cycle."""

    def __init__(
        self, transport: KeepAliveTransport, conn: _Connection, timeout: float | None
    ) -> None:
        self._transport = transport
        self._conn = conn
        self._timeout = timeout
        self._done = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            while not self._done:
                event = await self._conn.receive_event(self._timeout)
                if isinstance(event, h11.Data):
                    yield bytes(event.data)
                elif isinstance(event, h11.EndOfMessage):
                    self._done = True
                elif isinstance(event, h11.ConnectionClosed):
                    raise httpx.RemoteProtocolError("server closed the connection mid-body")
        except h11.RemoteProtocolError as exc:
            raise httpx.RemoteProtocolError(str(exc)) from exc

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None  # type: ignore[assignment]
        if conn is None:
            return
        h = conn.h11
        if self._done and h.our_state is h11.DONE and h.their_state is h11.DONE:
            h.start_next_cycle()
            self._transport._release(conn)
        else:
            await conn.aclose()


class KeepAliveTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 to one server with keep-alive connections (TLS when ``ssl_context``).

    Concurrency is the caller's to bound (KubeClient's in-flight limit; one connection
    per open watch); at most ``max_idle`` idle connections are kept.
    """

    def __init__(self, ssl_context: ssl.SSLContext | bool = False, *, max_idle: int = 32) -> None:
        self._ssl = ssl_context if isinstance(ssl_context, ssl.SSLContext) else None
        self._idle: list[_Connection] = []
        self._retired: list[_Connection] = []
        self.max_idle = max_idle
        self.connections_opened = 0

    async def _connect(self, url: httpx.URL, timeout: float | None) -> _Connection:
        host = url.host
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            with anyio.fail_after(timeout):
                tcp = await anyio.connect_tcp(host, port)
                sock = tcp.extra(anyio.abc.SocketAttribute.raw_socket, None)
                stream: anyio.abc.ByteStream = tcp
                if url.scheme == "https":
                    context = self._ssl or ssl.create_default_context()
                    stream = await anyio.streams.tls.TLSStream.wrap(
                        tcp, hostname=host, ssl_context=context, standard_compatible=False
                    )
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out") from exc
        except (OSError, ssl.SSLError, anyio.BrokenResourceError, anyio.EndOfStream) as exc:
            # EndOfStream: the peer closed the connection during the TLS handshake (a
            # load balancer with no live backend does): a connection error like any other.
            reason = str(exc) or type(exc).__name__
            raise httpx.ConnectError(f"connecting to {host}:{port}: {reason}") from exc
        self.connections_opened += 1
        return _Connection(stream, sock)

    def _release(self, conn: _Connection) -> None:
        if len(self._idle) < self.max_idle:
            self._idle.append(conn)
        elif conn.sock is not None:
            conn.sock.close()  # no TLS close_notify: the server sees the socket close

    def drop_idle(self) -> None:
        """Retire the idle connections: the next requests connect anew (after a client
        certificate rotated, as client-go closes its connections then)."""
        self._retired.extend(self._idle)
        self._idle = []

    async def _checkout(self, url: httpx.URL, timeout: float | None) -> tuple[_Connection, bool]:
        while self._retired:
            await self._retired.pop().aclose()
        while self._idle:
            conn = self._idle.pop()
            if not conn.is_dead():
                return conn, True
            await conn.aclose()
        return await self._connect(url, timeout), False

    async def _attempts(
        self,
        url: httpx.URL,
        method: str,
        connect_timeout: float | None,
        exchange: Callable[[_Connection], Awaitable[T]],
    ) -> T:
        """``exchange`` on a pooled or new connection, which is closed if it fails; once
        more on a new one when a reused connection turns out closed by the server (if
        the request may have been taken, only when repeating it is harmless)."""
        for attempt in range(2):
            conn, reused = await self._checkout(url, connect_timeout)
            try:
                return await exchange(conn)
            except (httpx.WriteError, httpx.RemoteProtocolError, httpx.ReadError) as exc:
                await conn.aclose()
                unsent = isinstance(exc, httpx.WriteError)
                if reused and attempt == 0 and (unsent or method in IDEMPOTENT):
                    continue
                raise
            except h11.ProtocolError as exc:
                await conn.aclose()
                raise httpx.RemoteProtocolError(str(exc)) from exc
            except BaseException:
                await conn.aclose()
                raise
        raise AssertionError("unreachable")

    @staticmethod
    async def _send(conn: _Connection, wire: bytes, timeout: float | None) -> None:
        try:
            if timeout is None:
                await conn.stream.send(wire)
            else:
                with anyio.fail_after(timeout):
                    await conn.stream.send(wire)
        except TimeoutError as exc:
            raise httpx.WriteTimeout("timed out sending the request") from exc
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise httpx.WriteError(str(exc) or repr(exc)) from exc

    async def _exchange(
        self,
        url: httpx.URL,
        method: str,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        timeouts: dict[str, float | None],
    ) -> tuple[_Connection, h11.Response]:
        """Send one request through h11 and read the response head; the body is the
        caller's."""
        read_timeout = timeouts.get("read")
        if body and not any(k.lower() == b"content-length" for k, _ in headers):
            headers = [*headers, (b"Content-Length", str(len(body)).encode())]

        async def exchange(conn: _Connection) -> tuple[_Connection, h11.Response]:
            wire = conn.h11.send(h11.Request(method=method, target=target, headers=headers))
            if body:
                wire += conn.h11.send(h11.Data(data=body))
            wire += conn.h11.send(h11.EndOfMessage())
            await self._send(conn, wire, timeouts.get("write"))
            event = await conn.receive_event(read_timeout)
            while isinstance(event, h11.InformationalResponse):
                event = await conn.receive_event(read_timeout)
            if isinstance(event, h11.ConnectionClosed):
                raise httpx.RemoteProtocolError("server closed the connection")
            assert isinstance(event, h11.Response)
            return conn, event

        return await self._attempts(url, method, timeouts.get("connect"), exchange)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout") or {}
        body = b"".join([part async for part in request.stream])  # type: ignore[union-attr]
        conn, head = await self._exchange(
            request.url,
            request.method,
            request.url.raw_path,
            list(request.headers.raw),
            body,
            timeouts,
        )
        return httpx.Response(
            head.status_code,
            headers=head.headers.raw_items(),
            stream=_Body(self, conn, timeouts.get("read")),
            extensions={"http_version": b"HTTP/1.1"},
        )

    async def open_stream(
        self,
        url: httpx.URL,
        method: str,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        timeouts: dict[str, float | None],
    ) -> tuple[int, list[tuple[bytes, bytes]], httpx.AsyncByteStream]:
        """A request whose body is read as it comes (watches): status, raw headers and the
        body stream, which the caller must ``aclose``. ``timeouts["read"]`` bounds each
        read."""
        conn, head = await self._exchange(url, method, target, headers, b"", timeouts)
        body = _Body(self, conn, timeouts.get("read"))
        return head.status_code, list(head.headers.raw_items()), body

    async def fetch(
        self,
        url: httpx.URL,
        method: str,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        timeouts: dict[str, float | None],
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """One whole request without httpx's request and response models: status, raw
        headers and body. ``url`` names the server; ``target`` is the path and query."""
        # One deadline for the whole exchange (read + write) instead of one per socket
        # operation: a cancel scope per receive costs as much as the receive.
        limits = [t for t in (timeouts.get("read"), timeouts.get("write")) if t is not None]
        wire = request_bytes(method, target, headers, body)

        async def exchange(conn: _Connection) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
            if conn.h11.our_state is not h11.IDLE or conn.h11.trailing_data[0]:
                raise httpx.WriteError("connection left mid-exchange: not used")
            await self._send(conn, wire, None)
            status, head, content, keep_alive = await read_response(conn, method)
            if keep_alive and not conn.buffer:
                self._release(conn)
            else:
                await conn.aclose()
            return status, head, content

        try:
            with anyio.fail_after(sum(limits) if limits else None):
                return await self._attempts(url, method, timeouts.get("connect"), exchange)
        except TimeoutError as exc:
            raise httpx.ReadTimeout(f"{method} {target.decode()} timed out") from exc

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            await conn.aclose()

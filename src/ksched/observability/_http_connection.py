"""One client connection of :func:`~ksched.observability._http.serve_http`: TLS handshake,
requests read with h11 under the limits, the guard, the handler, the answers."""

from __future__ import annotations

import contextlib
import logging
import ssl
from collections.abc import Iterator, Mapping
from http import HTTPStatus
from typing import Any

import anyio
import anyio.abc
import attrs
import h11
from anyio.streams.tls import TLSAttribute, TLSStream

from ._auth import UserInfo
from ._http_messages import Guard, Handler, Limits, Request, Response

__all__ = ["Connection"]

logger = logging.getLogger("ksched.http")

_READ_CHUNK = 65536
_DRAIN_BYTES, _DRAIN_SECONDS = 256 * 1024, 1.0
_CLOSED = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)


class _Refusal(Exception):
    """The request cannot be served: answer ``response`` and close the connection."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status)
        self.response = response


class _Gone(Exception):
    """The client left, or took too long: close without an answer."""


@attrs.frozen
class Connection:
    """Serves connections: one ``serve(stream)`` call per accepted stream."""

    handler: Handler
    limits: Limits
    tls: ssl.SSLContext | None
    guard: Guard | None

    async def serve(self, stream: anyio.abc.ByteStream) -> None:
        """Serve one connection to its end; nothing that happens on it escapes."""
        try:
            async with stream:
                await self._serve(stream)
        except Exception:
            logger.exception("HTTP connection failed")

    async def _serve(self, raw: anyio.abc.ByteStream) -> None:
        with anyio.move_on_after(self.limits.header_timeout) as handshake:
            stream = await self._handshake(raw)
        if handshake.cancelled_caught or stream is None:
            return
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=self.limits.max_header_bytes)
        subject = _client_subject(stream)
        deadline = anyio.current_time() + self.limits.header_timeout
        while True:
            try:
                keep = await self._one_request(stream, conn, subject, deadline)
            except _Gone:
                return
            except _Refusal as refusal:
                with _quietly():
                    await self._send(stream, conn, refusal.response, close=True)
                    await _drain(stream)
                return
            if not keep:
                return
            deadline = anyio.current_time() + self.limits.idle_timeout

    async def _handshake(self, raw: anyio.abc.ByteStream) -> anyio.abc.ByteStream | None:
        if self.tls is None:
            return raw
        try:
            return await TLSStream.wrap(
                raw, server_side=True, ssl_context=self.tls, standard_compatible=False
            )
        except (*_CLOSED, ssl.SSLError) as exc:
            logger.debug("TLS handshake failed: %s", exc)
            return None

    async def _one_request(
        self,
        stream: anyio.abc.ByteStream,
        conn: h11.Connection,
        subject: Mapping[str, tuple[str, ...]] | None,
        deadline: float,
    ) -> bool:
        """Read, admit and answer one request; whether the connection goes on."""
        with anyio.move_on_after(max(0.0, deadline - anyio.current_time())) as waited:
            head = await _next_event(stream, conn)
        if waited.cancelled_caught or head is None:
            raise _Gone
        assert isinstance(head, h11.Request)
        if _head_size(head) > self.limits.max_header_bytes:  # h11 bounds only partial heads
            raise _Refusal(Response.text("request header fields too large\n", 431))
        request = _request_of(head, subject)
        if self.guard is not None:
            admitted = await self._admit(request)
            if isinstance(admitted, Response):
                raise _Refusal(admitted)
            request = attrs.evolve(request, user=admitted)
        body = await self._read_body(stream, conn, head)
        request = attrs.evolve(request, body=body)
        response = await self._answer(request)
        await self._send(stream, conn, response, head_only=request.method == "HEAD")
        if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
            return False
        conn.start_next_cycle()
        return True

    async def _read_body(
        self, stream: anyio.abc.ByteStream, conn: h11.Connection, head: h11.Request
    ) -> bytes:
        limit = self.limits.max_body_bytes
        declared = _content_length(head)
        if declared is not None and declared > limit:
            raise _Refusal(_too_large(limit))
        if conn.they_are_waiting_for_100_continue:
            await self._write(
                stream, conn.send(h11.InformationalResponse(status_code=100, headers=[]))
            )
        body = bytearray()
        with anyio.move_on_after(self.limits.body_timeout) as waited:
            while True:
                event = await _next_event(stream, conn)
                if isinstance(event, h11.Data):
                    body += event.data
                    if len(body) > limit:
                        raise _Refusal(_too_large(limit))
                elif isinstance(event, h11.EndOfMessage):
                    return bytes(body)
                else:  # the client closed mid-body
                    raise _Gone
        assert waited.cancelled_caught
        raise _Refusal(Response.text("request body timed out\n", 408))

    async def _admit(self, request: Request) -> Response | UserInfo:
        assert self.guard is not None
        try:
            return await self.guard(request)
        except Exception:
            logger.exception("%s %s: the request's checks failed", request.method, request.path)
            return Response.text("internal error while checking the request\n", 500)

    async def _answer(self, request: Request) -> Response:
        try:
            return await self.handler(request)
        except Exception as exc:
            logger.exception("%s %s failed", request.method, request.path)
            return Response(500, f"{type(exc).__name__}: {exc}".encode())

    async def _send(
        self,
        stream: anyio.abc.ByteStream,
        conn: h11.Connection,
        response: Response,
        *,
        head_only: bool = False,
        close: bool = False,
    ) -> None:
        """The response; to a HEAD request, its head alone (the length GET would have)."""
        headers = [
            ("content-type", response.content_type),
            ("content-length", str(len(response.body))),
            *response.headers.items(),
        ]
        if close:
            headers.append(("connection", "close"))
        try:
            head = h11.Response(
                status_code=response.status, headers=headers, reason=_reason(response.status)
            )
            data = conn.send(head) or b""
            if not head_only:
                data += conn.send(h11.Data(data=response.body)) or b""
            data += conn.send(h11.EndOfMessage()) or b""
        except h11.LocalProtocolError as exc:  # nothing valid can be said on this connection
            logger.debug("no answer possible: %s", exc)
            conn.send_failed()
            return
        await self._write(stream, data)

    async def _write(self, stream: anyio.abc.ByteStream, data: bytes | None) -> None:
        if not data:
            return
        with anyio.move_on_after(self.limits.write_timeout) as waited:
            try:
                await stream.send(data)
            except _CLOSED as exc:
                raise _Gone from exc
        if waited.cancelled_caught:
            raise _Gone


async def _next_event(stream: anyio.abc.ByteStream, conn: h11.Connection) -> object | None:
    """The next event of the request (a head, data, its end); None when the client
    closed before a new request began. A protocol error is refused with its status."""
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError as exc:
            raise _Refusal(Response.text(f"bad request: {exc}\n", exc.error_status_hint)) from exc
        except ValueError as exc:  # a Content-Length too long for int()
            raise _Refusal(Response.text("bad request: invalid framing\n", 400)) from exc
        if event is h11.NEED_DATA:
            try:
                data = await stream.receive(_READ_CHUNK)
            except _CLOSED:
                data = b""
            conn.receive_data(data)
            continue
        if isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
            return None
        return event


async def _drain(stream: anyio.abc.ByteStream) -> None:
    """Read (and drop) what the client still sends, a little while: closing a socket with
    unread data resets it, and the client would lose the answer (Go's net/http reads up
    to 256 KiB of an unread body the same way before it closes)."""
    left = _DRAIN_BYTES
    with anyio.move_on_after(_DRAIN_SECONDS):
        while left > 0:
            try:
                left -= len(await stream.receive(_READ_CHUNK))
            except _CLOSED:
                return


@contextlib.contextmanager
def _quietly() -> Iterator[None]:
    """A last answer on a connection about to close: the client may be gone already."""
    with contextlib.suppress(_Gone):
        yield


def _request_of(head: h11.Request, subject: Mapping[str, tuple[str, ...]] | None) -> Request:
    target = head.target.decode("latin-1")
    path, _, query = target.partition("?")
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in head.headers}
    return Request(head.method.decode("latin-1"), path, query, headers, client_subject=subject)


def _head_size(head: h11.Request) -> int:
    """The request line and headers as sent (give or take a few bytes)."""
    size = len(head.method) + len(head.target) + 12
    return size + sum(len(name) + len(value) + 4 for name, value in head.headers)


def _content_length(head: h11.Request) -> int | None:
    for name, value in head.headers:
        if name == b"content-length":
            return int(value)  # h11 has checked it is a number
    return None


def _reason(status: int) -> bytes:
    try:
        return HTTPStatus(status).phrase.encode()
    except ValueError:
        return b""


def _too_large(limit: int) -> Response:
    return Response.text(f"request body larger than {limit} bytes\n", 413)


def _client_subject(stream: anyio.abc.ByteStream) -> Mapping[str, tuple[str, ...]] | None:
    """The subject of the client's certificate when the TLS layer verified one."""
    cert: Any = stream.extra(TLSAttribute.peer_certificate, None)
    if not cert:
        return None
    subject: dict[str, tuple[str, ...]] = {}
    for rdn in cert.get("subject", ()):
        for name, value in rdn:
            subject[name] = (*subject.get(name, ()), value)
    return subject

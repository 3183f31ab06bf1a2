"""One HTTP/1.1 request written and its whole response read, for the client's requests.

The transport's requests (bindings, Events, status patches, lists) are whole exchanges:
a request with a known body, a response read to its end. Through h11 a binding against
kube-apiserver cost 0.48 ms of the client's CPU (TLS included), written and read here
0.28 ms (benchmarks/RESULTS.md, wave 15): h11's event machinery and header checks were
most of the difference, so these exchanges are handled here; the
streamed exchanges (watches, httpx's own requests) stay on h11. What a response may hold
is bounded as h11 bounds it: a head of at most ``MAX_HEAD`` bytes, chunk-size lines of at
most ``MAX_LINE``; anything else malformed is a ``httpx.RemoteProtocolError``.
"""

from __future__ import annotations

import re
from typing import Protocol

import anyio
import anyio.abc
import httpx

__all__ = ["READ_SIZE", "Response", "Source", "read_response", "receive_into", "request_bytes"]

MAX_HEAD = 64 * 1024
"""The most bytes a response head (status line and headers) may take."""
MAX_LINE = 1024
"""The most bytes a chunk-size line (or one trailer line) may take."""
READ_SIZE = 65536
"""The most bytes one read of a connection takes."""

_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
_NO_BODY = frozenset({204, 304})

Response = tuple[int, list[tuple[bytes, bytes]], bytes, bool]
"""Status, raw headers, body, and whether the connection may carry another request."""


class Source(Protocol):
    """Where a response comes from: the connection's stream and what was read past the
    last response (empty between exchanges)."""

    buffer: bytearray

    async def read_more(self) -> bool:
        """Append what the server sent next to ``buffer``; False at the end of stream."""


def request_bytes(
    method: str, target: bytes, headers: list[tuple[bytes, bytes]], body: bytes
) -> bytes:
    """The request on the wire. A target, header name or value that would change the
    message's framing (CR, LF, NUL, a space in the target) is refused, as h11 refuses it."""
    if not target or any(c in target for c in b" \r\n\0"):
        raise httpx.LocalProtocolError(f"illegal request target {target[:100]!r}")
    parts = [method.encode("ascii"), b" ", target, b" HTTP/1.1\r\n"]
    for name, value in headers:
        parts += (name, b": ", value, b"\r\n")
    if body:
        parts += (b"Content-Length: ", b"%d" % len(body), b"\r\n")
    parts.append(b"\r\n")
    head = b"".join(parts)
    lines = len(headers) + (3 if body else 2)
    if head.count(b"\n") != lines or head.count(b"\r") != lines or b"\0" in head:
        raise httpx.LocalProtocolError("a header name or value holds CR, LF or NUL")
    if any(_TOKEN.fullmatch(name) is None for name, _ in headers):
        raise httpx.LocalProtocolError("illegal header name")
    return head + body


async def read_response(source: Source, method: str) -> Response:
    """The next whole response: informational (1xx) ones skipped, the body by
    Content-Length, chunked transfer coding, or to the end of the stream."""
    while True:
        head = await _head(source)
        status, version, headers = _parse_head(head)
        if status >= 200:
            break
        if status == 101:
            raise httpx.RemoteProtocolError("the server switched protocols unasked")
    keep_alive = version == b"HTTP/1.1"
    length: int | None = None
    coding: bytes | None = None
    for name, value in headers:
        key = name.lower()
        if key == b"content-length":
            length = _content_length(value, length)
        elif key == b"transfer-encoding":
            coding = value.lower()
        elif key == b"connection" and b"close" in value.lower():
            keep_alive = False
    if method == "HEAD" or status in _NO_BODY:
        return status, headers, b"", keep_alive
    if coding is not None:
        if coding.rsplit(b",", 1)[-1].strip() == b"chunked":
            return status, headers, await _chunked(source), keep_alive and length is None
        return status, headers, await _to_end(source), False
    if length is None:
        return status, headers, await _to_end(source), False
    return status, headers, await _exactly(source, length), keep_alive


async def _more(source: Source, what: str) -> None:
    if not await source.read_more():
        raise httpx.RemoteProtocolError(f"server closed the connection {what}")


async def _head(source: Source) -> bytes:
    buffer = source.buffer
    searched = 0
    while (end := buffer.find(b"\r\n\r\n", searched)) < 0:
        if len(buffer) > MAX_HEAD:
            raise httpx.RemoteProtocolError(f"response head longer than {MAX_HEAD} bytes")
        searched = max(0, len(buffer) - 3)
        await _more(source, "before the response" if not buffer else "in the response head")
    if end > MAX_HEAD:
        raise httpx.RemoteProtocolError(f"response head longer than {MAX_HEAD} bytes")
    head = bytes(buffer[:end])
    del buffer[: end + 4]
    return head


def _parse_head(head: bytes) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
    status_line, *lines = head.split(b"\r\n")
    version, _, rest = status_line.partition(b" ")
    code = rest[:3]
    if (
        version not in (b"HTTP/1.1", b"HTTP/1.0")
        or len(code) != 3
        or not code.isdigit()
        or rest[3:4] not in (b"", b" ")
    ):
        raise httpx.RemoteProtocolError(f"malformed status line {status_line[:100]!r}")
    headers = []
    for line in lines:
        name, colon, value = line.partition(b":")
        if not colon or _TOKEN.fullmatch(name) is None:
            raise httpx.RemoteProtocolError(f"malformed response header {line[:100]!r}")
        headers.append((name, value.strip(b" \t")))
    return int(code), version, headers


def _content_length(value: bytes, seen: int | None) -> int:
    if not value.isdigit() or len(value) > 18:
        raise httpx.RemoteProtocolError(f"malformed Content-Length {value[:40]!r}")
    length = int(value)
    if seen is not None and seen != length:
        raise httpx.RemoteProtocolError("conflicting Content-Length headers")
    return length


async def _exactly(source: Source, length: int) -> bytes:
    buffer = source.buffer
    while len(buffer) < length:
        await _more(source, "mid-body")
    body = bytes(buffer[:length])
    del buffer[:length]
    return body


async def _to_end(source: Source) -> bytes:
    while await source.read_more():
        pass
    body = bytes(source.buffer)
    source.buffer.clear()
    return body


async def _line(source: Source) -> bytes:
    buffer = source.buffer
    while (end := buffer.find(b"\r\n")) < 0:
        if len(buffer) > MAX_LINE:
            raise httpx.RemoteProtocolError(f"chunked body line longer than {MAX_LINE} bytes")
        await _more(source, "mid-body")
    if end > MAX_LINE:
        raise httpx.RemoteProtocolError(f"chunked body line longer than {MAX_LINE} bytes")
    line = bytes(buffer[:end])
    del buffer[: end + 2]
    return line


async def _chunked(source: Source) -> bytes:
    buffer = source.buffer
    body = bytearray()
    while True:
        size_text = (await _line(source)).split(b";", 1)[0].strip(b" \t")
        if _CHUNK_SIZE.fullmatch(size_text) is None:
            raise httpx.RemoteProtocolError(f"malformed chunk size {size_text[:40]!r}")
        size = int(size_text, 16)
        if size == 0:
            trailer = 0
            while line := await _line(source):  # trailer fields, then the empty line
                trailer += len(line)
                if trailer > MAX_HEAD:
                    raise httpx.RemoteProtocolError("chunked trailer too long")
            return bytes(body)
        while len(buffer) < size + 2:
            await _more(source, "mid-body")
        if buffer[size : size + 2] != b"\r\n":
            raise httpx.RemoteProtocolError("chunk not followed by CRLF")
        body += buffer[:size]
        del buffer[: size + 2]


async def receive_into(stream: anyio.abc.ByteStream, buffer: bytearray) -> bool:
    """One read of ``stream`` appended to ``buffer``; False at its end. Transport failures
    are ``httpx.ReadError``."""
    try:
        buffer += await stream.receive(READ_SIZE)
    except anyio.EndOfStream:
        return False
    except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
        raise httpx.ReadError(str(exc) or repr(exc)) from exc
    return True

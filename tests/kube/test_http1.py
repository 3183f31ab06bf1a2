"""The whole-exchange HTTP/1.1 reader and writer, against h11 as the oracle.

Responses h11 writes (Content-Length, chunked, to the end of the stream, with 1xx before
them), cut into arbitrary pieces, read back the same; any bytes at all read to a response
or a clear protocol error, never another exception; requests are refused where they would
change the message's framing.
"""

from __future__ import annotations

import itertools

import anyio
import h11
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ksched.kube._http1 import MAX_HEAD, MAX_LINE, Response, read_response, request_bytes


class Pieces:
    """A connection that delivers ``pieces`` one read at a time, then its end."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.buffer = bytearray()
        self._pieces = list(reversed(pieces))

    async def read_more(self) -> bool:
        if not self._pieces:
            return False
        self.buffer += self._pieces.pop()
        return True


def cut(data: bytes, at: list[int]) -> list[bytes]:
    points = sorted({min(max(0, a), len(data)) for a in at} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def read(data: bytes, at: list[int] | None = None, method: str = "GET") -> Response:
    async def main() -> Response:
        return await read_response(Pieces(cut(data, at or [])), method)

    return anyio.run(main)


def served(
    status: int,
    headers: list[tuple[bytes, bytes]],
    body: bytes,
    *,
    informational: int = 0,
    method: bytes = b"GET",
) -> bytes:
    """What an h11 server writes for this response to a ``method`` request."""
    server = h11.Connection(h11.SERVER)
    server.receive_data(b"%s / HTTP/1.1\r\nHost: x\r\n\r\n" % method)
    assert isinstance(server.next_event(), h11.Request)
    assert isinstance(server.next_event(), h11.EndOfMessage)
    wire = b"".join(
        server.send(h11.InformationalResponse(status_code=100 + (i % 2) * 3, headers=[])) or b""
        for i in range(informational)
    )
    wire += server.send(h11.Response(status_code=status, headers=headers)) or b""
    if body:
        wire += server.send(h11.Data(data=body)) or b""
    wire += server.send(h11.EndOfMessage()) or b""
    return wire


header_names = st.sampled_from([b"X-A", b"Audit-Id", b"Content-Type", b"Warning", b"x_b"])
header_values = st.binary(max_size=40).map(
    lambda v: bytes(c for c in v if 0x20 < c < 0x7F or c == 0x20).strip()
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    status=st.sampled_from([200, 201, 400, 404, 409, 429, 500]),
    extra=st.lists(st.tuples(header_names, header_values), max_size=5),
    body=st.binary(max_size=3000),
    framing=st.sampled_from(["length", "chunked"]),
    informational=st.integers(0, 2),
    at=st.lists(st.integers(0, 4000), max_size=12),
)
def test_what_h11_serves_reads_back_the_same(
    status: int,
    extra: list[tuple[bytes, bytes]],
    body: bytes,
    framing: str,
    informational: int,
    at: list[int],
) -> None:
    headers = list(extra)
    if framing == "length":
        headers.append((b"Content-Length", b"%d" % len(body)))
    else:
        headers.append((b"Transfer-Encoding", b"chunked"))
    wire = served(status, headers, body, informational=informational)
    got_status, got_headers, got_body, keep_alive = read(wire, at)
    assert (got_status, got_body, keep_alive) == (status, body, True)
    assert [(k.lower(), v) for k, v in got_headers] == [
        (k.lower(), v) for k, v in h11.Response(status_code=status, headers=headers).headers
    ]


def test_a_body_without_framing_is_read_to_the_end_and_the_connection_dropped() -> None:
    wire = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it"
    assert read(wire, [20, 50]) == (200, [(b"Content-Type", b"text/plain")], b"all of it", False)


def test_connection_close_and_http_1_0_are_not_kept() -> None:
    close = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"
    assert read(close)[3] is False
    old = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    assert read(old)[3] is False


def test_no_body_for_head_204_and_304() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n"
    assert read(head, method="HEAD") == (200, [(b"Content-Length", b"1234")], b"", True)
    for status in (204, 304):
        assert read(b"HTTP/1.1 %d X\r\n\r\n" % status)[2] == b""


@pytest.mark.parametrize(
    ("wire", "says"),
    [
        (b"", "closed the connection before the response"),
        (b"HTTP/1.1 200 OK\r\nContent-Le", "closed the connection in the response head"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", "closed the connection mid-body"),
        (b"HTTP/2 200 OK\r\n\r\n", "malformed status line"),
        (b"HTTP/1.1 2x0 OK\r\n\r\n", "malformed status line"),
        (b"HTTP/1.1 200OK\r\n\r\n", "malformed status line"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed response header"),
        (b"HTTP/1.1 200 OK\r\n folded: x\r\n\r\n", "malformed response header"),
        (b"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "malformed response header"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "malformed Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1e3\r\n\r\n", "malformed Content-Length"),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
            "conflicting Content-Length",
        ),
        (b"HTTP/1.1 101 Switching\r\n\r\n", "switched protocols"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x1\r\na\r\n0\r\n\r\n", "chunk"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1_0\r\n", "malformed chunk"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", "CRLF"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "mid-body"),
    ],
)
def test_malformed_responses_are_protocol_errors(wire: bytes, says: str) -> None:
    with pytest.raises(httpx.RemoteProtocolError, match=says):
        read(wire)


def test_heads_and_chunk_lines_are_bounded() -> None:
    endless = b"HTTP/1.1 200 OK\r\n" + b"X-A: " + b"a" * (MAX_HEAD + 10)
    with pytest.raises(httpx.RemoteProtocolError, match="head longer"):
        read(endless, list(range(0, len(endless), 4096)))
    long_line = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"1" * (MAX_LINE + 5)
    with pytest.raises(httpx.RemoteProtocolError, match="line longer"):
        read(long_line)


@settings(max_examples=300, deadline=None)
@given(
    data=st.one_of(
        st.binary(max_size=600),
        st.builds(
            lambda tail: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + tail,
            st.binary(max_size=300),
        ),
        st.builds(lambda tail: b"HTTP/1.1 " + tail, st.binary(max_size=300)),
    ),
    at=st.lists(st.integers(0, 700), max_size=8),
)
def test_any_bytes_read_to_a_response_or_a_protocol_error(data: bytes, at: list[int]) -> None:
    try:
        status, _, _, _ = read(data, at)
    except httpx.RemoteProtocolError:
        return
    assert 200 <= status <= 999


def test_request_bytes_frame_the_request_as_h11_does() -> None:
    headers = [(b"Host", b"example:6443"), (b"Content-Type", b"application/json")]
    wire = request_bytes("POST", b"/api/v1/x?a=b", headers, b'{"k":1}')
    server = h11.Connection(h11.SERVER)
    server.receive_data(wire)
    request = server.next_event()
    assert isinstance(request, h11.Request)
    assert (request.method, request.target) == (b"POST", b"/api/v1/x?a=b")
    assert (b"content-length", b"7") in list(request.headers)
    data = server.next_event()
    assert isinstance(data, h11.Data) and data.data == b'{"k":1}'
    assert isinstance(server.next_event(), h11.EndOfMessage)


@pytest.mark.parametrize(
    ("target", "headers"),
    [
        (b"/a b", []),
        (b"/a\r\nX-Evil: 1", []),
        (b"", []),
        (b"/", [(b"Authorization", b"Bearer x\r\nX-Evil: 1")]),
        (b"/", [(b"Authorization", b"Bearer x\nX-Evil: 1")]),
        (b"/", [(b"X-A", b"nul\0")]),
        (b"/", [(b"Bad Name", b"v")]),
        (b"/", [(b"X-A\r\n", b"v")]),
    ],
)
def test_request_bytes_refuse_what_would_change_the_framing(
    target: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    with pytest.raises(httpx.LocalProtocolError):
        request_bytes("GET", target, [(b"Host", b"h"), *headers], b"")

"""The small HTTP server: real requests on loopback, keep-alive, bad input, faults."""

from __future__ import annotations

import anyio
import pytest

from ksched.observability import Request, Response, parse_address, serve_http

pytestmark = pytest.mark.anyio


async def _echo(request: Request) -> Response:
    if request.path == "/boom":
        raise RuntimeError("boom")
    body = f"{request.method} {request.path} {request.query} {len(request.body)}".encode()
    return Response(200, body)


async def _exchange(port: int, raw: bytes, *, replies: int = 1) -> bytes:
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        await stream.send(raw)
        data = b""
        with anyio.fail_after(5):
            while data.count(b"HTTP/1.1") < replies or not _complete(data, replies):
                try:
                    data += await stream.receive()
                except anyio.EndOfStream:
                    break
        return data


def _complete(data: bytes, replies: int) -> bool:
    parts = data.split(b"HTTP/1.1 ")[1:]
    if len(parts) < replies:
        return False
    last = parts[-1]
    head, _, body = last.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        ),
        0,
    )
    return len(body) >= length


async def test_requests_on_one_kept_alive_connection() -> None:
    async with anyio.create_task_group() as tg:
        port = await tg.start(serve_http, _echo, "127.0.0.1", 0)
        raw = (
            b"POST /filter?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
            b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
        )
        data = await _exchange(port, raw, replies=2)
        assert b"POST /filter x=1 3" in data
        assert b"GET /healthz  0" in data
        tg.cancel_scope.cancel()


async def test_a_failing_handler_answers_500_and_the_server_goes_on() -> None:
    async with anyio.create_task_group() as tg:
        port = await tg.start(serve_http, _echo, "127.0.0.1", 0)
        data = await _exchange(port, b"GET /boom HTTP/1.1\r\nHost: a\r\n\r\n")
        assert data.startswith(b"HTTP/1.1 500") and b"RuntimeError: boom" in data
        data = await _exchange(port, b"GET /ok HTTP/1.1\r\nHost: a\r\n\r\n")
        assert data.startswith(b"HTTP/1.1 200")
        tg.cancel_scope.cancel()


async def test_malformed_request_answers_400() -> None:
    async with anyio.create_task_group() as tg:
        port = await tg.start(serve_http, _echo, "127.0.0.1", 0)
        data = await _exchange(port, b"NOT HTTP AT ALL\r\n\r\n")
        assert data.startswith(b"HTTP/1.1 400")
        tg.cancel_scope.cancel()


@pytest.mark.parametrize(
    ("address", "want"),
    [("127.0.0.1:10259", ("127.0.0.1", 10259)), ("[::1]:80", ("::1", 80)), ("host", ("host", 7))],
)
def test_parse_address(address: str, want: tuple[str, int]) -> None:
    assert parse_address(address, default_port=7) == want


def test_parse_address_rejects_a_bad_port() -> None:
    with pytest.raises(ValueError, match="port"):
        parse_address("127.0.0.1:99999", default_port=7)


async def test_a_head_request_gets_the_head_alone_and_the_server_goes_on() -> None:
    async with anyio.create_task_group() as tg:
        port = await tg.start(serve_http, _echo, "127.0.0.1", 0)
        async with await anyio.connect_tcp("127.0.0.1", port) as stream:
            await stream.send(b"HEAD /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
            with anyio.fail_after(5):
                head = await stream.receive()
            # The handler's length ("HEAD /healthz  0" is 16 bytes), and no body.
            assert head.startswith(b"HTTP/1.1 200")
            assert b"content-length: 16\r\n" in head.lower()
            assert head.endswith(b"\r\n\r\n")
            # The same connection answers the next request.
            await stream.send(b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
            with anyio.fail_after(5):
                data = b""
                while not data.endswith(b"GET /healthz  0"):
                    data += await stream.receive()
        data = await _exchange(port, b"GET /ok HTTP/1.1\r\nHost: a\r\n\r\n")
        assert data.startswith(b"HTTP/1.1 200")
        tg.cancel_scope.cancel()

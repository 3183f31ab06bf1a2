"""The server under hostile clients: oversized heads and bodies, Expect: 100-continue,
slow and idle clients, connection floods, accept errors (EMFILE), on loopback."""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import socket

import anyio
import pytest

from ksched.observability import Limits

from ._wire import GET, answers, exchange, open_fds, read_all, serving, settle

pytestmark = pytest.mark.anyio

SMALL = Limits(
    max_connections=4,
    max_header_bytes=4096,
    max_body_bytes=1000,
    header_timeout=0.5,
    body_timeout=0.5,
    idle_timeout=0.5,
    write_timeout=0.5,
)


async def test_an_oversized_head_answers_431() -> None:
    async with serving(limits=SMALL) as port:
        raw = b"GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + b"x" * 8000 + b"\r\n\r\n"
        reply = await exchange(port, raw)
        assert reply.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
        assert await answers(port)


async def test_a_declared_oversized_body_answers_413_before_it_is_sent() -> None:
    async with serving(limits=SMALL) as port:
        raw = b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5000\r\n\r\n"
        reply = await exchange(port, raw, close=False)  # no body sent: the answer comes anyway
        assert reply.startswith(b"HTTP/1.1 413 ") and b"larger than 1000 bytes" in reply
        assert b"connection: close" in reply.lower()
        assert await answers(port)


async def test_a_chunked_body_over_the_limit_answers_413() -> None:
    async with serving(limits=SMALL) as port:
        chunk = b"%x\r\n%s\r\n" % (600, b"y" * 600)
        raw = b"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk * 2
        reply = await exchange(port, raw, close=False)
        assert reply.startswith(b"HTTP/1.1 413 ")
        assert await answers(port)


async def test_expect_100_continue_gets_100_then_the_answer() -> None:
    async with serving(limits=SMALL) as port, await anyio.connect_tcp("127.0.0.1", port) as s:
        await s.send(
            b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n"
        )
        with anyio.fail_after(5):
            interim = await s.receive()
        assert interim.startswith(b"HTTP/1.1 100 ")
        await s.send(b"abc")
        await s.send_eof()
        reply = await read_all(s)
        assert reply.startswith(b"HTTP/1.1 200 ") and reply.endswith(b"POST /x  3")


async def test_expect_100_continue_with_a_body_too_large_gets_413_and_no_100() -> None:
    async with serving(limits=SMALL) as port:
        raw = b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n"
        reply = await exchange(port, raw, close=False)
        assert reply.startswith(b"HTTP/1.1 413 ")


async def test_a_slow_head_is_cut_off_after_the_header_timeout() -> None:
    async with serving(limits=SMALL) as port, await anyio.connect_tcp("127.0.0.1", port) as s:
        start = anyio.current_time()
        await s.send(b"GET /slow HTTP/1.1\r\nHo")  # and never the rest
        assert await read_all(s) == b""  # closed without an answer
        assert 0.4 <= anyio.current_time() - start < 3
        assert await answers(port)


async def test_a_slow_body_answers_408_after_the_body_timeout() -> None:
    async with serving(limits=SMALL) as port, await anyio.connect_tcp("127.0.0.1", port) as s:
        await s.send(b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc")
        reply = await read_all(s)
        assert reply.startswith(b"HTTP/1.1 408 ")


async def test_an_idle_kept_alive_connection_is_closed_after_the_idle_timeout() -> None:
    async with serving(limits=SMALL) as port, await anyio.connect_tcp("127.0.0.1", port) as s:
        await s.send(GET)
        start = anyio.current_time()
        reply = await read_all(s)  # the answer, then the close once idle too long
        assert reply.startswith(b"HTTP/1.1 200 ")
        assert 0.4 <= anyio.current_time() - start < 3


async def test_a_client_that_does_not_read_is_dropped_after_the_write_timeout() -> None:
    big = b"z" * (8 * 1024 * 1024)

    async def large(request: object) -> object:
        from ksched.observability import Response

        return Response(200, big)

    async with serving(large, limits=SMALL) as port:  # type: ignore[arg-type]
        fds = open_fds()
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(GET)  # ...and never reads
        try:
            with anyio.fail_after(5):
                while True:  # the server gives up and closes its side
                    await anyio.sleep(0.05)
                    if open_fds() <= fds + 1:  # only the client's socket is left
                        break
        finally:
            sock.close()


async def test_a_flood_of_connections_is_served_a_few_at_a_time() -> None:
    async with serving(limits=SMALL) as port:
        fds, tasks = open_fds(), len(anyio.get_running_tasks())
        replies: list[bytes] = []

        async def one() -> None:
            replies.append(await exchange(port, GET, timeout=20))

        async with anyio.create_task_group() as tg:
            for _ in range(60):
                tg.start_soon(one)
        assert len(replies) == 60 and all(r.startswith(b"HTTP/1.1 200 ") for r in replies)
        await settle(fds, tasks)


async def test_connections_over_the_cap_wait_for_a_free_slot() -> None:
    async with serving(limits=SMALL) as port:
        # No holder can be cut off before its header timeout, counted from its accept:
        # measured from before the first connect, the bound holds however late accepts are.
        start = anyio.current_time()
        holders = [await anyio.connect_tcp("127.0.0.1", port) for _ in range(SMALL.max_connections)]
        try:
            for holder in holders:  # each holds its slot with a head that never ends
                await holder.send(b"GET / HTTP/1.1\r\n")
            # served once the holders are cut off (header timeout), not refused or lost
            assert await answers(port)
            assert anyio.current_time() - start >= SMALL.header_timeout
        finally:
            for holder in holders:
                await holder.aclose()


async def test_emfile_on_accept_backs_off_and_the_server_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "ksched.http")
    async with serving(limits=SMALL) as port:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        client = socket.socket()
        client.setblocking(False)
        fillers: list[int] = []
        resource.setrlimit(resource.RLIMIT_NOFILE, (open_fds() + 16, hard))
        try:
            try:
                while True:  # every descriptor taken: the server's accept has none
                    fillers.append(os.open("/dev/null", os.O_RDONLY))
            except OSError:
                pass
            with contextlib.suppress(BlockingIOError):
                client.connect(("127.0.0.1", port))
            client.setblocking(True)
            client.sendall(GET)
            with anyio.fail_after(5):
                while "accept failed" not in caplog.text:
                    await anyio.sleep(0.01)
        finally:
            for fd in fillers:
                os.close(fd)
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        client.settimeout(5)
        reply = await anyio.to_thread.run_sync(client.recv, 4096)
        client.close()
        assert reply.startswith(b"HTTP/1.1 200 ")  # accepted once descriptors were free
        assert "Too many open files" in caplog.text
        assert await answers(port)

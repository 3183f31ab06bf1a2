"""Raw HTTP over loopback for the server tests: what a client sends byte for byte, and
the resources a server holds (file descriptors, tasks)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc

from ksched.observability import Handler, Limits, Request, Response, serve_http

GET = b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"


async def echo(request: Request) -> Response:
    if request.path == "/boom":
        raise RuntimeError("boom")
    body = f"{request.method} {request.path} {request.query} {len(request.body)}".encode()
    return Response(200, body)


@asynccontextmanager
async def serving(
    handler: Handler = echo, limits: Limits | None = None, **options: Any
) -> AsyncIterator[int]:
    """``serve_http`` on a free loopback port for the block; yields the port."""
    async with anyio.create_task_group() as tg:
        port = await tg.start(
            lambda task_status: serve_http(
                handler, "127.0.0.1", 0, limits=limits, task_status=task_status, **options
            )
        )
        yield port
        tg.cancel_scope.cancel()


async def read_all(stream: anyio.abc.ByteStream, timeout: float = 5.0) -> bytes:
    """Everything until the server closes (bounded by ``timeout``)."""
    data = b""
    with anyio.fail_after(timeout):
        while True:
            try:
                data += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                return data


async def exchange(port: int, raw: bytes, *, close: bool = True, timeout: float = 5.0) -> bytes:
    """Send ``raw``, half-close (``close``), and read until the server closes."""
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        await stream.send(raw)
        if close:
            await stream.send_eof()
        return await read_all(stream, timeout)


async def answers(port: int) -> bool:
    """The server still answers a plain GET."""
    reply = await exchange(port, GET)
    return reply.startswith(b"HTTP/1.1 200 ")


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def settle(baseline_fds: int, baseline_tasks: int, *, timeout: float = 5.0) -> None:
    """Wait (bounded) until the process holds no more descriptors and tasks than before:
    the server closes its side a moment after the client sees the end."""
    with anyio.move_on_after(timeout):
        while open_fds() > baseline_fds or len(anyio.get_running_tasks()) > baseline_tasks:
            await anyio.sleep(0.01)
    assert open_fds() <= baseline_fds, f"{open_fds()} descriptors open, {baseline_fds} before"
    tasks = len(anyio.get_running_tasks())
    assert tasks <= baseline_tasks, f"{tasks} tasks, {baseline_tasks} before"

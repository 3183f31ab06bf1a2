"""Fuzzing the servers ksched runs (health and metrics, the extender; plain and TLS):
random bytes, random, truncated and pipelined requests, slow clients and floods. Each
example ends with the server still answering and nothing leaked: no descriptor
(/proc/self/fd) and no task more than before."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
import h11
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ksched.config import parse_config
from ksched.extender.serving import ExtenderServer
from ksched.observability import Handler, HealthServer, Limits, Serving, ServingOptions
from ksched.observability._http import serve_http

from ._wire import GET, exchange, open_fds, read_all, settle

pytestmark = pytest.mark.anyio

LIMITS = Limits(
    max_connections=8,
    max_header_bytes=2048,
    max_body_bytes=4096,
    header_timeout=0.3,
    body_timeout=0.3,
    idle_timeout=0.3,
    write_timeout=0.3,
)
EXAMPLES = settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
CONFIG = parse_config(
    {
        "profiles": [
            {
                "plugins": {
                    "multiPoint": {
                        "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"},
                                    {"name": "NodeResourcesFit"}],
                        "disabled": [{"name": "*"}],
                    }
                }
            }
        ]
    }
)  # fmt: skip
SERVERS: dict[str, Callable[[], Handler]] = {
    "health": lambda: HealthServer(live={"ping": lambda: None}, registry=None).handle,
    "extender": lambda: ExtenderServer(CONFIG, "/ksched").handle,
}
PATHS = ["/healthz", "/readyz", "/livez", "/metrics", "/ksched/filter", "/ksched/prioritize",
         "/ksched/bind", "/ksched/preempt", "/", "/x?y=z", "//..%2f"]  # fmt: skip
METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "BREW"]

token = st.text("abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=1,
                max_size=20)  # fmt: skip
header_value = st.from_regex(r"\A[!-~]([ -~]{0,40}[!-~])?\Z")
body = st.one_of(
    st.binary(max_size=512),
    st.builds(lambda d: json.dumps(d).encode(), st.dictionaries(token, st.integers())),
)


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, bytes]:
    """A well-formed request: method, path, a few headers, a body as h11 frames it."""
    method = draw(st.sampled_from(METHODS))
    path = draw(st.sampled_from(PATHS))
    headers = draw(st.lists(st.tuples(token, header_value), max_size=4))
    payload = draw(body) if method in ("POST", "PUT") else b""
    headers = [(k, v) for k, v in headers if k.lower() not in ("content-length",
               "transfer-encoding", "expect", "connection", "host", "upgrade")]  # fmt: skip
    headers = [("Host", "fuzz"), *headers, ("Content-Length", str(len(payload)))]
    client = h11.Connection(h11.CLIENT)
    raw = client.send(h11.Request(method=method, target=path, headers=headers)) or b""
    raw += client.send(h11.Data(data=payload)) or b"" if payload else b""
    raw += client.send(h11.EndOfMessage()) or b""
    return method, raw


@asynccontextmanager
async def fuzzed(server: str, *, tls: bool = False) -> AsyncIterator[int]:
    """The server on a free port; after the block it still answers and holds no more
    descriptors or tasks than before the block."""
    handler = SERVERS[server]()
    serving = Serving.build(ServingOptions(http=not tls), "127.0.0.1") if tls else None
    async with anyio.create_task_group() as tg:
        tls_context = serving.tls if serving else None
        port = await tg.start(
            lambda task_status: serve_http(
                handler, "127.0.0.1", 0, tls=tls_context, limits=LIMITS, task_status=task_status
            )
        )
        fds, tasks = open_fds(), len(anyio.get_running_tasks())
        yield port
        if not tls:
            assert (await exchange(port, GET)).startswith(b"HTTP/1.1 200 "), "no answer"
        await settle(fds, tasks)
        tg.cancel_scope.cancel()


def _well_formed(reply: bytes) -> None:
    assert reply == b"" or reply.startswith(b"HTTP/1.1 "), reply[:80]


@pytest.mark.parametrize("server", sorted(SERVERS))
@EXAMPLES
@given(data=st.binary(max_size=3000))
async def test_random_bytes(server: str, data: bytes) -> None:
    async with fuzzed(server) as port:
        _well_formed(await exchange(port, data))


@pytest.mark.parametrize("server", sorted(SERVERS))
@EXAMPLES
@given(request=requests(), cut=st.floats(0, 1))
async def test_truncated_requests(server: str, request: tuple[str, bytes], cut: float) -> None:
    raw = request[1]
    async with fuzzed(server) as port:
        _well_formed(await exchange(port, raw[: int(len(raw) * cut)]))


@pytest.mark.parametrize("server", sorted(SERVERS))
@EXAMPLES
@given(batch=st.lists(requests(), min_size=1, max_size=5))
async def test_pipelined_requests_get_one_answer_each(
    server: str, batch: list[tuple[str, bytes]]
) -> None:
    async with fuzzed(server) as port:
        reply = await exchange(port, b"".join(raw for _, raw in batch))
        statuses = _statuses([method for method, _ in batch], reply)
        assert len(statuses) == len(batch)
        assert all(s < 500 for s in statuses), statuses


def _statuses(methods: list[str], reply: bytes) -> list[int]:
    """The answers' statuses, parsed by a client that sent requests of these methods."""
    client = h11.Connection(h11.CLIENT)
    client.receive_data(reply)
    client.receive_data(b"")
    statuses: list[int] = []
    for method in methods:
        client.send(h11.Request(method=method, target="/", headers=[("Host", "x")]))
        client.send(h11.EndOfMessage())
        while True:
            event = client.next_event()
            if isinstance(event, h11.Response):
                statuses.append(event.status_code)
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.ConnectionClosed) or event is h11.NEED_DATA:
                return statuses
        if client.their_state is not h11.DONE or client.our_state is not h11.DONE:
            return statuses
        client.start_next_cycle()
    return statuses


@pytest.mark.parametrize("server", sorted(SERVERS))
@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(min_size=1, max_size=2000))
async def test_random_bytes_at_the_tls_port(server: str, data: bytes) -> None:
    async with fuzzed(server, tls=True) as port:
        reply = await exchange(port, data)
        assert not reply.startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize("server", sorted(SERVERS))
async def test_slow_clients_and_a_flood_at_once(server: str) -> None:
    async with fuzzed(server) as port:

        async def slow() -> None:  # a head a byte at a time, never finished in time
            async with await anyio.connect_tcp("127.0.0.1", port) as stream:
                for byte in b"GET /healthz HTTP/1.1\r\nHost: a\r\n":
                    try:
                        await stream.send(bytes([byte]))
                    except (anyio.BrokenResourceError, OSError):
                        return
                    await anyio.sleep(0.05)

        async def flood() -> None:
            reply = await exchange(port, GET, timeout=20)
            assert reply.startswith(b"HTTP/1.1 200 ")

        async def idle() -> None:  # connects, says nothing: closed after the header timeout
            async with await anyio.connect_tcp("127.0.0.1", port) as stream:
                assert await read_all(stream) == b""

        async with anyio.create_task_group() as tg:
            for _ in range(LIMITS.max_connections):
                tg.start_soon(slow)
            for _ in range(4):
                tg.start_soon(idle)
            for _ in range(24):
                tg.start_soon(flood)

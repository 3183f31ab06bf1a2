"""A loopback proxy in front of kube-apiserver that breaks a share of new connections.

Each new connection is either passed through (TCP, TLS end to end) or given one fault,
taken in turn in a seeded order:

- ``handshake-eof``: accepted and closed at once (a load balancer with no live backend);
- ``reset``: accepted and reset (RST, SO_LINGER 0);
- ``tls-garbage``: plain-text bytes where the TLS ServerHello belongs (a TLS error);
- ``cut``: passed through, then cut after a random number of the server's bytes (in the
  handshake, mid-response or mid-watch);
- ``stall``: accepted, never answered (the client's connect timeout ends it);
- ``http-503`` / ``http-429``: TLS terminated here, the first request answered with that
  status (``Retry-After: 1``) and the connection closed;
- ``garbage-body``: a 200 whose JSON body is not JSON;
- ``garbage-http``: bytes that are not an HTTP response.

The proxy terminates TLS (for the HTTP faults) with the apiserver's own certificate and key.
"""

from __future__ import annotations

import random
import socket
import ssl
import struct
from collections import Counter
from pathlib import Path

import anyio
import anyio.abc
import anyio.streams.tls

from ._support import LoopbackProxy

__all__ = ["FAULTS", "FaultProxy"]

FAULTS = (
    "handshake-eof",
    "reset",
    "tls-garbage",
    "cut",
    "stall",
    "http-503",
    "http-429",
    "garbage-body",
    "garbage-http",
)

STALL_SECONDS = 30.0
"""A stalled connection is closed after this long if the client has not given up."""

_ANSWERS = {
    "http-503": b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n"
    b"Content-Type: text/plain\r\nContent-Length: 11\r\nConnection: close\r\n\r\nunavailable",
    "http-429": b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\n"
    b"Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
    "garbage-body": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    b"Content-Length: 17\r\nConnection: close\r\n\r\n<html>nope</html>",
    "garbage-http": b"\x00\x17SSH-2.0-nonsense\r\n\xff\xfe\r\n\r\n",
}


class FaultProxy(LoopbackProxy):
    """Forward 127.0.0.1:``port`` to the apiserver, breaking ``rate`` of new connections."""

    def __init__(
        self,
        upstream_port: int,
        cert_dir: Path,
        *,
        rate: float = 0.0,
        faults: tuple[str, ...] = FAULTS,
        seed: int = 0,
    ) -> None:
        super().__init__(upstream_port)
        self.rate = rate
        self.faults = faults
        self.counts: Counter[str] = Counter()
        self._rng = random.Random(seed)
        self._turn: list[str] = []
        self._tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._tls.load_cert_chain(cert_dir / "apiserver.crt", cert_dir / "apiserver.key")

    def drop_all(self) -> int:
        """Cut every open connection (a partition); returns how many."""
        return self.cut_all()

    def _pick(self) -> str:
        """``rate`` of the connections get a fault, the faults taken in turn (each one
        soon met, in an order the seed decides)."""
        if not (self.rate and self._rng.random() < self.rate):
            return "pass"
        if not self._turn:
            self._turn = self._rng.sample(self.faults, len(self.faults))
        return self._turn.pop()

    async def _handle(self, client: anyio.abc.SocketStream) -> None:
        fault = self._pick()
        self.counts[fault] += 1
        with anyio.CancelScope() as scope:
            self._scopes.add(scope)
            try:
                async with client:
                    await self._serve_one(client, fault)
            except (OSError, anyio.BrokenResourceError, anyio.EndOfStream, ssl.SSLError):
                pass
            finally:
                self._scopes.discard(scope)

    async def _serve_one(self, client: anyio.abc.SocketStream, fault: str) -> None:
        if fault == "handshake-eof":
            return
        if fault == "reset":
            sock = client.extra(anyio.abc.SocketAttribute.raw_socket)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
        if fault == "tls-garbage":
            await client.receive()
            await client.send(b"HTTP/1.1 400 Bad Request\r\n\r\n")
            return
        if fault == "stall":
            with anyio.move_on_after(STALL_SECONDS):
                async for _ in client:
                    pass
            return
        if fault in _ANSWERS:
            await self._answer(client, _ANSWERS[fault])
            return
        limit = self._rng.randint(1, 30000) if fault == "cut" else None
        await self._forward(client, limit)

    async def _answer(self, client: anyio.abc.SocketStream, answer: bytes) -> None:
        tls = await anyio.streams.tls.TLSStream.wrap(
            client, server_side=True, ssl_context=self._tls, standard_compatible=False
        )
        head = b""
        with anyio.move_on_after(10):
            while b"\r\n\r\n" not in head:
                head += await tls.receive()
        await tls.send(answer)

    async def _forward(self, client: anyio.abc.SocketStream, limit: int | None) -> None:
        upstream = await anyio.connect_tcp("127.0.0.1", self.upstream_port)
        async with upstream, anyio.create_task_group() as tg:

            async def pump(src: anyio.abc.ByteStream, dst: anyio.abc.ByteStream) -> None:
                try:
                    async for chunk in src:
                        await dst.send(chunk)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    pass
                tg.cancel_scope.cancel()

            async def down() -> None:
                sent = 0
                try:
                    async for chunk in upstream:
                        if limit is not None and sent + len(chunk) >= limit:
                            await client.send(chunk[: max(0, limit - sent)])
                            break
                        sent += len(chunk)
                        await client.send(chunk)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    pass
                tg.cancel_scope.cancel()

            tg.start_soon(pump, client, upstream)
            await down()

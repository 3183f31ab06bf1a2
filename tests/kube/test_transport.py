"""KeepAliveTransport against the real kube-apiserver: reuse, recovery, both code paths."""

from __future__ import annotations

import anyio
import anyio.abc
import httpx
import pytest

from ksched.kube import KubeClient, TokenBucket
from ksched.kube._transport import KeepAliveTransport

from ._plane import ControlPlane
from ._support import ChaosProxy
from .conftest import Api, http_client

pytestmark = pytest.mark.anyio


async def test_sequential_requests_share_one_connection(plane: ControlPlane, api: Api) -> None:
    async with http_client(plane.url) as http:
        transport = http._transport
        assert isinstance(transport, KeepAliveTransport)
        client = KubeClient(http, TokenBucket(0, 0))
        for _ in range(20):
            body = await client.request("GET", f"/api/v1/namespaces/{api.ns}")
            assert body["metadata"]["name"] == api.ns
        # httpx's own path (streams, watches) goes through the same pool.
        response = await http.get(f"/api/v1/namespaces/{api.ns}")
        assert response.json()["metadata"]["name"] == api.ns
        assert transport.connections_opened == 1


async def test_a_connection_the_server_closed_is_replaced(plane: ControlPlane, api: Api) -> None:
    proxy = ChaosProxy(int(plane.url.rsplit(":", 1)[1]))
    async with anyio.create_task_group() as tg:
        port = await tg.start(proxy.serve)
        async with http_client(f"https://127.0.0.1:{port}") as http:
            client = KubeClient(http, TokenBucket(0, 0), max_retries=0)
            for _ in range(3):
                await client.request("GET", f"/api/v1/namespaces/{api.ns}")
                proxy.drop_all()  # the idle keep-alive connection dies
                await anyio.sleep(0.05)
            transport = http._transport
            assert isinstance(transport, KeepAliveTransport)
            assert transport.connections_opened == 3
        tg.cancel_scope.cancel()


def test_a_proxied_server_goes_through_httpx_so_proxy_variables_apply(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With HTTPS_PROXY set (and the server not in NO_PROXY) the client keeps httpx's own
    transport, which honours the proxy variables as client-go does; otherwise ksched's pool."""
    from ksched.kube._kubeconfig import _proxied

    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY",
                 "all_proxy", "NO_PROXY", "no_proxy"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    assert not _proxied("https://10.0.0.1:6443")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert _proxied("https://10.0.0.1:6443")
    monkeypatch.setenv("NO_PROXY", "10.0.0.1")
    assert not _proxied("https://10.0.0.1:6443")


async def _accept_and_close(stream: anyio.abc.SocketStream) -> None:
    await stream.aclose()


async def test_a_connection_closed_in_the_tls_handshake_is_a_connect_error() -> None:
    """A listener that accepts and closes (a load balancer without a live backend): the
    handshake's end of stream is a retryable httpx.ConnectError, not a crash."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    transport = KeepAliveTransport(True)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, _accept_and_close)
        url = httpx.URL(f"https://127.0.0.1:{port}")
        for _ in range(3):
            with pytest.raises(httpx.ConnectError, match=r"connecting to 127\.0\.0\.1"):
                await transport.fetch(url, "GET", b"/", [(b"Host", b"x")], b"", {"connect": 5.0})
        tg.cancel_scope.cancel()
    await listener.aclose()

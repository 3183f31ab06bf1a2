"""`ksched run` as a process through a loopback proxy that breaks connections.

Every fault a connection can meet (EOF or reset in the TLS handshake, a TLS error, a cut
mid-request or mid-watch, a stall, 429 and 503, bodies and heads that are garbage) on a
share of the new connections, while the process drains a backlog: it keeps running, binds
every pod once, and exits 0 on SIGTERM.
"""

from __future__ import annotations

import signal
from pathlib import Path

import anyio
import pytest

from ._fault_proxy import FAULTS, FaultProxy
from ._invariants import assert_drained, scheduled_total
from ._plane import TOKEN, ControlPlane, write_kubeconfig
from ._replicas import Replica, nodes_of, poll, write_config
from .conftest import Api

pytestmark = pytest.mark.anyio

PODS = 120
NODES = 4
WAVES = 8


async def all_bound(api: Api, count: int) -> bool:
    pods = await api.pods()
    return len(pods) == count and all(p["spec"].get("nodeName") for p in pods)


async def test_no_connection_fault_is_fatal(
    plane: ControlPlane, api: Api, tmp_path: Path, replicas: list[Replica], anyio_backend: str
) -> None:
    for i in range(NODES):
        await api.create_node(f"{api.ns}-n{i}", cpu="4", pods=40)
    proxy = FaultProxy(plane.port, plane.dir / "certs", rate=0.3, seed=11)
    async with anyio.create_task_group() as tg:
        port = await tg.start(proxy.serve)
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", f"https://127.0.0.1:{port}")
        config = write_config(tmp_path / "c.yaml", api.ns, kubeconfig)
        replica = Replica(config, tmp_path, "a", anyio_backend)
        replicas.append(replica)

        async def backlog() -> None:
            for wave in range(WAVES):  # pods keep coming while connections break
                for i in range(PODS // WAVES):
                    await api.create_pod(f"p{wave}-{i}", scheduler=f"ksched-{api.ns}")
                await anyio.sleep(1.0)

        cuts = anyio.CancelScope()

        async def partitions() -> None:
            with cuts:
                while True:  # cut every open connection (watches too) now and then
                    await anyio.sleep(2.0)
                    proxy.drop_all()

        tg.start_soon(partitions)
        tg.start_soon(backlog)
        took = await poll(
            lambda: all_bound(api, PODS), 90, f"{PODS} pods bound through faults", 0.5
        )
        cuts.cancel()
        assert replica.p.poll() is None, replica.tail()
        print(f"\n{anyio_backend}: {PODS} pods bound in {took:.1f}s; faults {dict(proxy.counts)}")
        assert all(proxy.counts[f] > 0 for f in FAULTS), proxy.counts
        assert_drained(await api.pods(), await nodes_of(api))
        proxy.rate = 0.0  # the health port reviews the token through the proxy
        assert await replica.get("/livez") == (200, "ok")
        status, text = await replica.get("/metrics", token=TOKEN)
        assert status == 200 and scheduled_total(text) == PODS, text[-1500:]
        replica.p.send_signal(signal.SIGTERM)
        code = await anyio.to_thread.run_sync(replica.p.wait, 20)
        tg.cancel_scope.cancel()
    assert code == 0, replica.tail()


async def test_a_server_name_that_does_not_resolve_is_waited_out(
    tmp_path: Path, replicas: list[Replica], anyio_backend: str
) -> None:
    """DNS failure: the process keeps trying (health port up, not ready) and leaves on
    SIGTERM with status 0."""
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", "https://ksched-test.invalid:6443")
    config = write_config(tmp_path / "c.yaml", "dns", kubeconfig)
    replica = Replica(config, tmp_path, "dns", anyio_backend)
    replicas.append(replica)
    await poll(replica.ready.exists, 20, "health port up")
    # a request's retries spent (about 6 s), then the wait goes on: logged, still running
    await poll(lambda: "API server unreachable" in replica.log.read_text(), 30, "logged")
    assert "ConnectError" in replica.log.read_text()
    assert replica.p.poll() is None, replica.tail()
    status, body = await replica.get("/readyz")
    assert status == 500 and "caches not synced" in body
    replica.p.send_signal(signal.SIGTERM)
    assert await anyio.to_thread.run_sync(replica.p.wait, 10) == 0, replica.tail()

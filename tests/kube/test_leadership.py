"""Leadership under load: replicas of `ksched run` taking over a backlog.

The issue's lease (leaseDuration 4s, renewDeadline 3s, retryPeriod 1s) and a rate limit
that makes a drain last several renewals: the leader renews ahead of its own binding
backlog, a standby's first bind follows a leader's kill -9 within leaseDuration +
retryPeriod + 1 s, and SIGTERM releases the lease within the grace period.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import anyio
import pytest

from ._invariants import assert_drained
from ._plane import ControlPlane
from ._replicas import Replica, nodes_of, poll, write_config
from .conftest import Api

pytestmark = pytest.mark.anyio

LEASE = ("4s", "3s", "1s")
TAKEOVER_BOUND = 4.0 + 1.0 + 1.0
"""leaseDuration + retryPeriod + 1 s"""
QPS = 80


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the replicas run on asyncio; the test only polls


async def _create_pods(api: Api, prefix: str, count: int) -> None:
    async def some(start: int) -> None:
        for i in range(start, count, 8):
            await api.create_pod(f"{prefix}{i}", scheduler=f"ksched-{api.ns}")

    async with anyio.create_task_group() as tg:
        for start in range(8):
            tg.start_soon(some, start)


async def _holder(api: Api) -> str:
    lease = await api.client.request(
        "GET", f"/apis/coordination.k8s.io/v1/namespaces/{api.ns}/leases/ksched-{api.ns}"
    )
    return str(lease["spec"].get("holderIdentity") or "")


async def _bound(api: Api) -> int:
    return sum(1 for p in await api.pods() if p["spec"].get("nodeName"))


def _identity(replica: Replica) -> str:
    """The identity a replica logged when it acquired the lease ('' before)."""
    for line in replica.log.read_text(errors="replace").splitlines():
        if "acquired lease" in line:
            return line.split('msg="', 1)[1].split(" acquired", 1)[0]
    return ""


async def _start(api: Api, plane: ControlPlane, tmp: Path, count: int) -> list[Replica]:
    kubeconfig = plane.kubeconfig(tmp / "kubeconfig")
    config = write_config(tmp / "c.yaml", api.ns, kubeconfig, lease=LEASE, qps=QPS)
    started = [Replica(config, tmp, f"r{i}", verbose=True) for i in range(count)]
    for replica in started:
        await poll(replica.ready.exists, 20, "health port up")
        await poll(lambda r=replica: _ready(r), 20, "caches synced")
    return started


async def _ready(replica: Replica) -> bool:
    return (await replica.get("/readyz"))[0] == 200


def _leader(running: list[Replica]) -> Replica:
    leaders = [r for r in running if _identity(r) and r.p.poll() is None]
    assert len(leaders) == 1, [r.tail() for r in running]
    return leaders[0]


async def _kill_and_time_takeover(leader: Replica, standbys: list[Replica]) -> float:
    """kill -9 the leader; seconds until a standby's first bind (as its log stamps it)."""
    leader.p.send_signal(signal.SIGKILL)
    killed = time.time()
    await anyio.to_thread.run_sync(leader.p.wait, 5)
    await poll(lambda: any(r.first_bind_at() for r in standbys), 15, "a standby binds", 0.2)
    return min(t for r in standbys if (t := r.first_bind_at()) is not None) - killed


async def _more_bound(api: Api, than: int) -> bool:
    return await _bound(api) > than


@pytest.mark.parametrize("count", [2, 3])
async def test_standby_takes_over_a_backlog_after_kill_9(
    plane: ControlPlane, api: Api, tmp_path: Path, replicas: list[Replica], count: int
) -> None:
    pods = 300 * count
    for i in range(6):
        await api.create_node(f"{api.ns}-n{i}", cpu="64", memory="64Gi", pods=250)
    running = await _start(api, plane, tmp_path, count)
    replicas.extend(running)
    await poll(lambda: _any_leads(running), 20, "a replica leads")
    await _create_pods(api, "p", pods)
    takeovers: list[float] = []
    for round_ in range(count - 1):
        leader = _leader(running)
        await poll(lambda r=round_: _more_bound(api, 100 + 300 * r), 30, "the leader binds", 0.3)
        running.remove(leader)
        took = await _kill_and_time_takeover(leader, running)
        takeovers.append(took)
        await poll(lambda: _any_leads(running), 10, "a standby leads")
    await poll(lambda: _all_bound(api, pods), 60, f"{pods} pods bound", 0.5)
    print(f"\n{count} replicas: kill -9 to the standby's first bind {takeovers}")
    assert all(r.p.poll() is None for r in running), [r.tail() for r in running]
    assert all(t <= TAKEOVER_BOUND for t in takeovers), takeovers
    new_leader = _leader(running)
    assert "lost lease" not in new_leader.log.read_text()
    assert_drained(await api.pods(), await nodes_of(api))


async def _any_leads(running: list[Replica]) -> bool:
    return any(_identity(r) and r.p.poll() is None for r in running)


async def _all_bound(api: Api, count: int) -> bool:
    pods = await api.pods()
    return len(pods) == count and all(p["spec"].get("nodeName") for p in pods)


async def test_sigterm_mid_drain_releases_the_lease_within_the_grace_period(
    plane: ControlPlane, api: Api, tmp_path: Path, replicas: list[Replica]
) -> None:
    pods = 900
    for i in range(6):
        await api.create_node(f"{api.ns}-n{i}", cpu="64", memory="64Gi", pods=250)
    running = await _start(api, plane, tmp_path, 2)
    replicas.extend(running)
    await poll(lambda: _any_leads(running), 20, "a replica leads")
    leader = _leader(running)
    standby = next(r for r in running if r is not leader)
    await _create_pods(api, "p", pods)
    await poll(lambda: _more_bound(api, 100), 30, "the leader binds", 0.3)
    assert await _bound(api) < pods - 300, "the drain is too fast to stop in the middle"
    leader.p.send_signal(signal.SIGTERM)
    released = await poll(lambda: _released_by(api, _identity(leader)), 10, "lease released")
    code = await anyio.to_thread.run_sync(leader.p.wait, 10)
    # The standby takes over at its next retry, not when the lease would have expired.
    took_over = await poll(lambda: bool(_identity(standby)), 10, "the standby leads")
    print(f"\nSIGTERM to lease released: {released:.2f}s; standby leads {took_over:.2f}s later")
    assert released <= 5.0  # RunOptions.grace
    assert took_over <= 1.0 * 1.2 + 0.5  # retryPeriod, jittered, and the poll
    assert code == 0, leader.tail()
    assert "released lease" in leader.log.read_text()
    await poll(lambda: _all_bound(api, pods), 60, f"{pods} pods bound by the standby", 0.5)
    assert standby.first_bind_at() is not None
    assert_drained(await api.pods(), await nodes_of(api))


async def _released_by(api: Api, identity: str) -> bool:
    return await _holder(api) != identity

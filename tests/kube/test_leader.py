"""Leader election rules on a virtual clock.

# client-go/tools/leaderelection/leaderelection.go
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import attrs
import httpx
import pytest
import trio.testing

from ksched.kube import KubeClient, LeaderElection, LeaderElector, LeadershipLostError, TokenBucket

pytestmark = pytest.mark.anyio

CONFIG = LeaderElection(resource_name="ks", resource_namespace="ns")  # 15s / 10s / 2s


@pytest.fixture
def anyio_backend() -> tuple[str, dict[str, Any]]:
    return ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})


@attrs.define
class LeaseServer:
    lease: dict[str, Any] | None = None
    version: int = 0
    failing: bool = False
    writes: list[dict[str, Any]] = attrs.field(factory=list)

    def handle(self, request: httpx.Request) -> httpx.Response:
        if self.failing:
            return httpx.Response(503)
        body: dict[str, Any] = json.loads(request.content) if request.content else {}
        if request.method == "GET":
            return httpx.Response(200, json=self.lease) if self.lease else httpx.Response(404)
        if request.method == "POST" and self.lease is not None:
            return httpx.Response(409, json={"reason": "AlreadyExists"})
        if request.method == "PUT":
            assert self.lease is not None
            if body["metadata"]["resourceVersion"] != self.lease["metadata"]["resourceVersion"]:
                return httpx.Response(409, json={"reason": "Conflict"})
        self.version += 1
        body["metadata"]["resourceVersion"] = str(self.version)
        self.lease = body
        self.writes.append(body["spec"])
        return httpx.Response(200, json=body)

    def hold(self, holder: str) -> None:
        self.version += 1
        spec = {"holderIdentity": holder, "leaseDurationSeconds": 15, "leaseTransitions": 3}
        self.lease = {
            "metadata": {"name": "ks", "namespace": "ns", "resourceVersion": str(self.version)},
            "spec": spec,
        }

    def elector(self, identity: str = "me") -> LeaderElector:
        http = httpx.AsyncClient(base_url="http://k", transport=httpx.MockTransport(self.handle))
        return LeaderElector(KubeClient(http, TokenBucket(0, 0), max_retries=0), CONFIG, identity)


async def test_creates_a_missing_lease_and_leads() -> None:
    server = LeaseServer()
    elector = server.elector()
    await elector.acquire()
    assert anyio.current_time() == 0.0
    assert server.lease is not None
    assert server.lease["spec"]["holderIdentity"] == "me"
    assert server.lease["spec"]["leaseDurationSeconds"] == 15
    assert elector.is_leader()


async def test_someone_elses_lease_is_taken_only_after_lease_duration_of_our_own_clock() -> None:
    server = LeaseServer()
    server.hold("other")  # the holder died: nobody renews it any more
    elector = server.elector()
    await elector.acquire()
    took = anyio.current_time()
    # First seen at 0; free from 15 s on; polled every retryPeriod (2 s, jitter up to 1.2x).
    assert 15.0 <= took <= 15.0 + 2.0 * 1.2
    assert server.lease is not None
    assert server.lease["spec"]["holderIdentity"] == "me"
    assert server.lease["spec"]["leaseTransitions"] == 4


async def test_a_released_lease_is_taken_at_once() -> None:
    server = LeaseServer()
    server.hold("")
    await server.elector().acquire()
    assert anyio.current_time() == 0.0


async def test_failing_renewals_lose_the_lease_within_renew_deadline_and_cancel_leading() -> None:
    server = LeaseServer()
    elector = server.elector()
    cancelled_at: float | None = None
    broke_at = 0.0

    async def lead() -> None:
        nonlocal cancelled_at, broke_at
        await anyio.sleep(5)
        server.failing = True
        broke_at = anyio.current_time()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled_at = anyio.current_time()
            assert not elector.is_leader()  # the write gate closed before the cancel

    with pytest.raises(LeadershipLostError):
        await elector.run(lead)
    assert cancelled_at is not None
    # Last renewal at 4 s. Upstream's window opens at 6 s and would give up at 16 s; the
    # write gate (renewed less than renewDeadline ago) closes at 14 s, and leading with it.
    assert broke_at == 5.0
    assert cancelled_at == 14.0
    assert cancelled_at - 4.0 < CONFIG.lease_duration  # before anyone else may take it


async def test_leading_done_releases_the_lease() -> None:
    server = LeaseServer()
    elector = server.elector()

    async def lead() -> None:
        await anyio.sleep(3)

    await elector.run(lead)
    assert server.lease is not None
    assert server.lease["spec"]["holderIdentity"] == ""
    assert server.lease["spec"]["leaseDurationSeconds"] == 1
    assert not elector.is_leader()


async def test_is_leader_expires_without_renewals() -> None:
    server = LeaseServer()
    elector = server.elector()
    await elector.acquire()
    await anyio.sleep(CONFIG.renew_deadline - 0.001)
    assert elector.is_leader()
    await anyio.sleep(0.002)
    assert not elector.is_leader()

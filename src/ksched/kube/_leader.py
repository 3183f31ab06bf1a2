"""Leader election with a coordination.k8s.io/v1 Lease.

# client-go/tools/leaderelection/leaderelection.go: tryAcquireOrRenew (create if
# missing; someone else's lease counts as held until leaseDuration after *we* last saw
# it change; leaseTransitions grows when the holder changes), acquire (retry every
# retryPeriod, jittered by JitterFactor 1.2), renew (every retryPeriod; a renewal that
# does not succeed within renewDeadline loses the lease), release on cancel
# (holderIdentity "", leaseDurationSeconds 1). Identity: cmd/kube-scheduler
# "<hostname>_<uuid>".
# ksched also tries again right when an observed lease runs out (instead of at the next
# jittered retry), and adds a write gate: a leader whose last successful renewal is
# renewDeadline old stops at once (never later than upstream's renew window would),
# before leaseDuration lets anyone else take over.
"""

from __future__ import annotations

import logging
import random
import socket
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import attrs

from .._errors import KschedError
from ..config import JITTER_FACTOR, LeaderElection
from ._client import ApiError, KubeClient
from ._writer import micro_time

__all__ = ["LeaderElector", "LeadershipLostError"]

log = logging.getLogger("ksched.kube")


class LeadershipLostError(KschedError, RuntimeError):
    """The lease could not be renewed within renewDeadline."""


def default_identity() -> str:
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@attrs.define(eq=False)
class LeaderElector:
    """Acquire, renew and release one Lease; :meth:`run` leads while it holds it."""

    client: KubeClient
    config: LeaderElection
    identity: str = attrs.field(factory=default_identity)
    _observed: dict[str, Any] | None = attrs.field(init=False, default=None)
    _observed_at: float = attrs.field(init=False, default=0.0)
    _renewed_at: float | None = attrs.field(init=False, default=None)
    _resource_version: str = attrs.field(init=False, default="")
    _held_until: float | None = attrs.field(init=False, default=None)
    """When the other holder's lease runs out, as last observed (loop time)."""

    @property
    def path(self) -> str:
        ns, name = self.config.resource_namespace, self.config.resource_name
        return f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}"

    @property
    def release_timeout(self) -> float:
        """The most :meth:`release` waits for the API server (retryPeriod)."""
        return self.config.retry_period

    def is_leader(self) -> bool:
        """Held now: renewed less than renewDeadline ago (checked before every write)."""
        return (
            self._renewed_at is not None
            and anyio.current_time() - self._renewed_at < self.config.renew_deadline
        )

    def _spec(self, *, acquire_time: str, transitions: int) -> dict[str, Any]:
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(1, round(self.config.lease_duration)),
            "acquireTime": acquire_time,
            "renewTime": micro_time(),
            "leaseTransitions": transitions,
        }

    async def try_acquire_or_renew(self) -> bool:
        """One attempt; True when this scheduler holds the lease afterwards."""
        now = anyio.current_time()
        try:
            lease = await self._get()
        except ApiError as exc:
            if exc.status != 404:
                log.warning("reading lease %s: %s", self.path, exc)
                return False
            lease = None
        if lease is None:
            spec = self._spec(acquire_time=micro_time(), transitions=0)
            ns, name = self.config.resource_namespace, self.config.resource_name
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": name, "namespace": ns},
                "spec": spec,
            }
            try:
                await self.client.request(
                    "POST", self.path.rsplit("/", 1)[0], body=body, retry=False
                )
            except ApiError as exc:
                log.info("creating lease %s: %s", self.path, exc)
                return False
            self._observed, self._observed_at = spec, now
            self._renewed_at = now
            return True
        spec = dict(lease.get("spec") or {})
        if spec != self._observed:
            self._observed, self._observed_at = spec, now
        holder = spec.get("holderIdentity") or ""
        duration = float(spec.get("leaseDurationSeconds") or self.config.lease_duration)
        if holder and holder != self.identity and self._observed_at + duration > now:
            self._held_until = self._observed_at + duration
            return False
        mine = holder == self.identity
        transitions = int(spec.get("leaseTransitions") or 0) + (0 if mine else 1)
        acquired = spec.get("acquireTime") if mine and spec.get("acquireTime") else micro_time()
        new_spec = self._spec(acquire_time=str(acquired), transitions=transitions)
        body = {**lease, "spec": new_spec}
        try:
            await self.client.request("PUT", self.path, body=body, retry=False)
        except ApiError as exc:
            log.info("updating lease %s: %s", self.path, exc)
            return False
        self._observed, self._observed_at = new_spec, now
        self._renewed_at = now
        return True

    async def _get(self) -> dict[str, Any] | None:
        lease: dict[str, Any] = await self.client.request("GET", self.path, retry=False)
        return lease

    async def _attempt(self, limit: float) -> bool:
        with anyio.move_on_after(limit) as scope:
            try:
                return await self.try_acquire_or_renew()
            except Exception as exc:  # network faults: this attempt failed
                log.info("lease attempt failed: %r", exc)
        if scope.cancelled_caught:
            log.info("lease attempt timed out after %.1fs", limit)
        return False

    async def acquire(self) -> None:
        """Return once the lease is held (retries every retryPeriod, jittered)."""
        period = self.config.retry_period
        # An attempt may take up to renewDeadline (client-go bounds it only by the HTTP
        # timeout): one cut short on a slow apiserver is work thrown away.
        while not await self._attempt(self.config.renew_deadline):
            delay = period * (1.0 + random.random() * (JITTER_FACTOR - 1.0))
            held_until, self._held_until = self._held_until, None
            if held_until is not None:
                # Try again the moment the holder's lease runs out, if that comes first.
                delay = min(delay, max(0.0, held_until - anyio.current_time()) + 0.01)
            await anyio.sleep(delay)
        log.info("%s acquired lease %s", self.identity, self.path)

    async def _renew_loop(self) -> None:
        """Renew every retryPeriod; return when a renewal misses renewDeadline."""
        period, deadline = self.config.retry_period, self.config.renew_deadline
        while True:
            await anyio.sleep(period)
            started = anyio.current_time()
            while True:
                left = deadline - (anyio.current_time() - started)
                if left <= 0 or not self.is_leader():
                    return
                if await self._attempt(left):  # upstream: bounded by renewDeadline only
                    break
                await anyio.sleep(
                    min(period, max(0.0, deadline - (anyio.current_time() - started)))
                )

    async def release(self) -> None:
        """Give the lease up at once so a standby need not wait for it to expire."""
        was_leader = self._renewed_at is not None
        self._renewed_at = None
        if not was_leader:
            return
        with anyio.move_on_after(self.release_timeout):
            try:
                lease = await self._get()
                if (
                    lease is None
                    or (lease.get("spec") or {}).get("holderIdentity") != self.identity
                ):
                    return
                spec = {
                    "holderIdentity": "",
                    "leaseDurationSeconds": 1,
                    "acquireTime": micro_time(),
                    "renewTime": micro_time(),
                    "leaseTransitions": int((lease.get("spec") or {}).get("leaseTransitions") or 0),
                }
                await self.client.request(
                    "PUT", self.path, body={**lease, "spec": spec}, retry=False
                )
                log.info("%s released lease %s", self.identity, self.path)
            except Exception as exc:
                log.warning("releasing lease %s: %r", self.path, exc)

    async def run(self, lead: Callable[[], Awaitable[None]]) -> None:
        """Acquire, then run ``lead()`` while the lease is renewed.

        ``lead`` is cancelled the moment a renewal misses renewDeadline (then this raises
        LeadershipLostError); when ``lead`` returns, the lease is released.
        """
        await self.acquire()
        lost = False
        try:
            async with anyio.create_task_group() as tg:

                async def renew() -> None:
                    nonlocal lost
                    await self._renew_loop()
                    lost = True
                    self._renewed_at = None  # the write gate closes before cancelling
                    tg.cancel_scope.cancel()

                async def leading() -> None:
                    await lead()
                    tg.cancel_scope.cancel()

                tg.start_soon(renew)
                tg.start_soon(leading)
        finally:
            if not lost:
                with anyio.CancelScope(shield=True):
                    await self.release()
        if lost:
            log.error("%s lost lease %s", self.identity, self.path)
            raise LeadershipLostError(f"leader election lost: {self.path}")

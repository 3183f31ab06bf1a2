"""``ksched run``: schedule the pods of a real cluster.

# cmd/kube-scheduler/app/server.go: informers start before the election, only the
# leader schedules, losing the lease ends the process; cmd/kube-scheduler/app/options
# createClients: events and leader election go through their own clients (own rate
# limiters, same qps/burst).
"""

from __future__ import annotations

import functools
import logging
import signal
from collections.abc import Callable
from pathlib import Path

import anyio
import attrs
import httpx

from .._errors import ConfigError
from ..config import SchedulerConfig
from ..observability import RestClientMetrics, SchedulerMetrics, Serving, ServingOptions
from ..observability._health import HealthServer
from ..scheduler import Scheduler
from ._client import KubeClient, TokenBucket
from ._delegated_auth import DelegatedAuth, review_limiter
from ._kubeconfig import KubeConfig, in_cluster_config, kubeconfig_paths, load_kubeconfig
from ._leader import LeaderElector, LeadershipLostError
from ._store import KubeCluster

__all__ = ["RunOptions", "resolve_kubeconfig", "run"]

log = logging.getLogger("ksched.kube")

STALL_SECONDS = 60.0
"""readyz fails when the leader's loop has pods to schedule but started none this long."""

BINDING_IN_FLIGHT = 32
"""Requests the scheduling client (bindings, status patches) sends at once. A binding's
round trip is mostly the API server's etcd commit, 15-25 ms on loopback, so binds per
second are about this number over that time; kube-scheduler's HTTP/2 client has no such
cap. With 8, a backlog's bindings waited for a slot (median 53 ms each) while the API
server had cores to spare (benchmarks/RESULTS.md, wave 15)."""


@attrs.frozen(kw_only=True)
class RunOptions:
    health_host: str = "127.0.0.1"
    health_port: int = 10259
    grace: float = 5.0
    """Seconds from SIGTERM to the lease released: binding cycles get to finish within it,
    less the release's own bound (retryPeriod) when leader election is on."""
    http: Callable[[KubeConfig], httpx.AsyncClient] | None = None
    """Build the HTTP client (tests interpose a proxy or a recording transport)."""
    ready_file: str | None = None
    """Write the health port here once listening (tests)."""
    serving: ServingOptions = attrs.field(factory=ServingOptions)
    """How the health port is served: HTTPS, clients checked through the API server."""


def resolve_kubeconfig(
    flag: str | None,
    config: SchedulerConfig,
    master: str | None,
    context: str | None = None,
) -> KubeConfig:
    """--kubeconfig, else clientConnection.kubeconfig, else the KUBECONFIG files (merged
    as client-go merges them), else the in-cluster account; ``context`` picks a context."""
    path = flag or config.client_connection.kubeconfig
    listed = kubeconfig_paths()
    if path:
        kube = load_kubeconfig(path, context=context)
    elif listed:
        kube = load_kubeconfig(listed, context=context)
    elif master:
        kube = KubeConfig(server=master.rstrip("/"))
    else:
        kube = in_cluster_config()
    if master:
        if not master.startswith(("http://", "https://")):
            raise ConfigError(f"--master: expected an http(s) URL, got {master!r}")
        kube = attrs.evolve(kube, server=master.rstrip("/"))
    return kube


async def run(config: SchedulerConfig, kube: KubeConfig, options: RunOptions) -> int:
    """Run until SIGTERM/SIGINT (0) or until the lease is lost (1).

    Signals and health endpoints are served from the start; a stop before this scheduler
    leads (still syncing, or standing by) just leaves.
    """
    conn, election = config.client_connection, config.leader_election
    make_http = options.http or (lambda k: k.http_client())
    names = tuple(p.scheduler_name for p in config.profiles)
    stop = anyio.Event()
    state = _LoopState()
    code = 0
    serving = Serving.build(options.serving, options.health_host)
    async with (
        make_http(kube) as http,
        make_http(kube) as watch_http,
        make_http(kube) as event_http,
        make_http(kube) as auth_http,
        make_http(kube) as lease_http,
        anyio.create_task_group() as tg,
    ):
        metrics = SchedulerMetrics()
        rest_metrics = RestClientMetrics(metrics.registry)
        client = KubeClient(
            http,
            TokenBucket(conn.qps, conn.burst),
            watch_http=watch_http,
            metrics=rest_metrics,
            max_in_flight=BINDING_IN_FLIGHT,
        )
        event_client = KubeClient(
            event_http, TokenBucket(conn.qps, conn.burst), metrics=rest_metrics
        )
        # Leader election has its own connection, queue and rate limit (upstream's
        # leaderElectionClient): a renewal never waits behind the binding backlog.
        elector = (
            LeaderElector(
                KubeClient(lease_http, TokenBucket(conn.qps, conn.burst), metrics=rest_metrics),
                election,
            )
            if election.leader_elect
            else None
        )
        # On SIGTERM the lease is released within the grace period: binding cycles get
        # what the release does not need.
        binding_grace = (
            options.grace if elector is None else max(0.0, options.grace - elector.release_timeout)
        )
        may_write = elector.is_leader if elector is not None else (lambda: True)
        health = HealthServer(
            live={"ping": lambda: None, "leaderElection": state.lease_check(elector)},
            ready={"sched-handler-sync": state.sync_check, "scheduling-loop": state.loop_check},
            registry=metrics.registry,
        )
        # The health port's reviews have their own client and rate limit (as upstream's).
        serving.delegate(DelegatedAuth(KubeClient(auth_http, review_limiter())))
        health_port = await tg.start(
            functools.partial(health.serve, serving=serving),
            options.health_host,
            options.health_port,
        )
        if options.ready_file:
            Path(options.ready_file).write_text(str(health_port))
        tg.start_soon(_watch_signals, stop)
        with anyio.CancelScope() as body:

            async def stopper() -> None:
                await stop.wait()
                if state.scheduler is None:  # syncing or standing by: nothing to finish
                    body.cancel()

            tg.start_soon(stopper)
            async with KubeCluster.open(
                client, event_client, scheduler_names=names, may_write=may_write
            ) as cluster:
                state.cluster = cluster
                await cluster.wait_synced()
                log.info("caches synced; %s", "electing a leader" if elector else "scheduling")

                async def lead() -> None:
                    async with Scheduler.open(
                        config, cluster=cluster, metrics=metrics
                    ) as scheduler:
                        state.scheduler = scheduler
                        async with anyio.create_task_group() as inner:
                            inner.start_soon(state.watchdog)
                            await stop.wait()
                            inner.cancel_scope.cancel()
                        log.info("shutting down: binding cycles get %.1fs", binding_grace)
                        await scheduler.aclose(binding_grace)
                    state.scheduler = None

                try:
                    if elector is None:
                        await lead()
                    else:
                        await elector.run(lead)
                except* LeadershipLostError as group:
                    log.error("%s", group.exceptions[0])
                    code = 1
        tg.cancel_scope.cancel()
    return code


async def _watch_signals(stop: anyio.Event) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            log.info("received %s", signal.Signals(signum).name)
            stop.set()


@attrs.define(eq=False)
class _LoopState:
    """What readyz and healthz read: loop progress and the lease."""

    scheduler: Scheduler | None = None
    cluster: KubeCluster | None = None
    _cycle: int = -1
    _since: float = 0.0
    stalled: bool = False

    async def watchdog(self) -> None:
        while True:
            scheduler = self.scheduler
            now = anyio.current_time()
            if scheduler is not None:
                cycle = scheduler.queue.scheduling_cycle
                busy = not scheduler.queue.is_idle()
                if cycle != self._cycle or not busy:
                    self._cycle, self._since = cycle, now
                self.stalled = busy and now - self._since > STALL_SECONDS
            await anyio.sleep(1.0)

    def sync_check(self) -> str | None:
        return None if self.cluster is not None and self.cluster.synced else "caches not synced"

    def loop_check(self) -> str | None:
        return f"no pod scheduled for {STALL_SECONDS:.0f}s" if self.stalled else None

    def lease_check(self, elector: LeaderElector | None) -> Callable[[], str | None]:
        def check() -> str | None:
            if elector is None or self.scheduler is None or elector.is_leader():
                return None
            return "leading without a renewed lease"

        return check

"""`ksched run` as a process: leader election between two, bad input, health endpoints."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import anyio
import httpx
import pytest
import trio.testing

from ksched import ConfigError, Scheduler
from ksched.cli import main
from ksched.kube import (
    KubeClient,
    KubeCluster,
    LeaderElection,
    LeaderElector,
    LeadershipLostError,
    NotLeaderError,
    TokenBucket,
)

from ._plane import TOKEN, ControlPlane
from ._support import bound_count, profile_config, wait_until
from .conftest import Api, http_client

LEASE = {"leaseDuration": "3s", "renewDeadline": "2s", "retryPeriod": "500ms"}


def _write_config(tmp: Path, ns: str, kubeconfig: Path, *, elect: bool = True) -> Path:
    election = "".join(f"  {k}: {v}\n" for k, v in LEASE.items())
    path = tmp / "scheduler.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        f"clientConnection:\n  kubeconfig: {kubeconfig}\n  qps: 200\n  burst: 400\n"
        f"leaderElection:\n  leaderElect: {str(elect).lower()}\n"
        f"  resourceName: ksched-{ns}\n  resourceNamespace: {ns}\n{election}"
        f"profiles:\n- schedulerName: ksched-{ns}\n"
    )
    return path


class Proc:
    def __init__(self, config: Path, tmp: Path, tag: str) -> None:
        self.ready = tmp / f"{tag}.port"
        self.log = tmp / f"{tag}.log"
        env = {**os.environ, "KSCHED_READY_FILE": str(self.ready)}
        cmd = [sys.executable, "-c", "from ksched.cli import main; raise SystemExit(main())"]
        self.p = subprocess.Popen(
            [*cmd, "run", "--config", str(config), "--health-address", "127.0.0.1:0"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(self.log, "wb"),  # noqa: SIM115  # the process owns it
        )

    def health(self, path: str, *, token: str | None = TOKEN) -> tuple[int, str]:
        """GET over HTTPS (the port's certificate is made at start: not verified here),
        as the admin unless ``token`` is None."""
        port = int(self.ready.read_text())
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        r = httpx.get(f"https://127.0.0.1:{port}{path}", headers=headers, timeout=2, verify=False)
        return r.status_code, r.text

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(5)


@pytest.fixture
def procs() -> Iterator[list[Proc]]:
    started: list[Proc] = []
    yield started
    for proc in started:
        proc.stop()


def _wait(predicate: Any, timeout: float, what: str) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if predicate():
            return time.monotonic() - start
        time.sleep(0.05)
    raise TimeoutError(f"{what} within {timeout}s")


def _holder(plane: ControlPlane, ns: str) -> str:
    try:
        lease = plane.request(
            "GET", f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/ksched-{ns}"
        )
    except Exception:
        return ""
    return str(lease["spec"].get("holderIdentity") or "")


def _bound(plane: ControlPlane, ns: str) -> int:
    pods = plane.request("GET", f"/api/v1/namespaces/{ns}/pods")["items"]
    return sum(1 for p in pods if p["spec"].get("nodeName"))


def _setup(plane: ControlPlane, ns: str, nodes: int) -> None:
    from ._plane import node_manifest, node_status

    plane.request(
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
    )
    for i in range(nodes):
        name = f"{ns}-n{i}"
        plane.request("POST", "/api/v1/nodes", node_manifest(name, labels={"ksched-test": ns}))
        plane.request(
            "PATCH",
            f"/api/v1/nodes/{name}/status",
            node_status(cpu="2"),
            ctype="application/merge-patch+json",
        )
        plane.request(
            "PATCH",
            f"/api/v1/nodes/{name}",
            {"spec": {"taints": None}},
            ctype="application/merge-patch+json",
        )


def _pods(plane: ControlPlane, ns: str, prefix: str, count: int) -> None:
    from ._plane import pod_manifest

    for i in range(count):
        plane.request(
            "POST",
            f"/api/v1/namespaces/{ns}/pods",
            pod_manifest(
                f"{prefix}{i}", ns, scheduler=f"ksched-{ns}", node_selector={"ksched-test": ns}
            ),
        )


def test_standby_takes_over_within_lease_duration(
    plane: ControlPlane, tmp_path: Path, procs: list[Proc]
) -> None:
    ns = "leader-election"
    _setup(plane, ns, nodes=2)
    config = _write_config(tmp_path, ns, plane.kubeconfig(tmp_path / "kubeconfig"))
    leader = Proc(config, tmp_path, "a")
    procs.append(leader)
    _wait(lambda: _holder(plane, ns) != "", 20, "the first process leads")
    first = _holder(plane, ns)
    standby = Proc(config, tmp_path, "b")
    procs.append(standby)
    _wait(
        lambda: standby.ready.exists() and standby.health("/readyz")[0] == 200, 20, "standby ready"
    )
    _pods(plane, ns, "a", 10)
    _wait(lambda: _bound(plane, ns) == 10, 20, "the leader binds")
    assert leader.health("/readyz") == (200, "ok")
    assert leader.health("/readyz", token=None) == (200, "ok")  # always allowed
    assert leader.health("/metrics", token=None)[0] == 403  # anonymous: SubjectAccessReview
    status, text = leader.health("/metrics")  # the leader's Prometheus metrics
    assert status == 200
    assert re.search(
        r'scheduler_schedule_attempts_total\{profile="[^"]+",result="scheduled"\} 10\.0', text
    ), text[:2000]
    # client-go's API-client metrics on the same registry: the 10 binding POSTs (201)
    binds = re.search(
        r'rest_client_requests_total\{code="201",host="[^"]+",method="POST"\} (\d+)\.0', text
    )
    assert binds is not None and int(binds.group(1)) >= 10, text[:2000]
    assert 'rest_client_request_duration_seconds_count{host="' in text

    leader.p.send_signal(signal.SIGKILL)
    leader.p.wait(5)
    took = _wait(lambda: _holder(plane, ns) not in ("", first), 10, "the standby leads")
    assert took <= 3.0 + 1.5, f"takeover took {took:.1f}s"  # leaseDuration + retry slack
    _pods(plane, ns, "b", 10)
    _wait(lambda: _bound(plane, ns) == 20, 20, "the new leader binds")
    lease = plane.request("GET", f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/ksched-{ns}")
    assert lease["spec"]["leaseTransitions"] == 1

    standby.p.send_signal(signal.SIGTERM)
    assert standby.p.wait(15) == 0, standby.log.read_text()[-2000:]
    assert _holder(plane, ns) == ""  # released on shutdown


@pytest.mark.parametrize(
    ("config_text", "message"),
    [
        (
            "leaderElection:\n  leaseDuration: 5s\n  renewDeadline: 10s\n",
            "leaderElection.leaseDuration: must be greater than renewDeadline",
        ),
        ("leaderElection:\n  retryPeriod: soon\n", "leaderElection.retryPeriod: invalid duration"),
        ("clientConnection:\n  qps: -1\n", "clientConnection.qps"),
        ("clientConnection:\n  kubeconfig: /nonexistent/kubeconfig\n", "/nonexistent/kubeconfig"),
    ],
)
def test_bad_input_exits_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config_text: str, message: str
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(config_text)
    assert main(["run", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert message in err
    named = message if message.startswith("/") else config  # a kubeconfig names itself
    assert err.startswith(f"ksched: error: {named}: ")


def test_bad_kubeconfig_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("current-context: nowhere\ncontexts: []\n")
    assert main(["run", "--kubeconfig", str(kubeconfig)]) == 2
    err = capsys.readouterr().err
    assert str(kubeconfig) in err and "contexts: no entry named 'nowhere'" in err


@pytest.mark.anyio
async def test_lost_lease_stops_binding_at_once(plane: ControlPlane, api: Api) -> None:
    name = f"ksched-{api.ns}"
    await api.create_node(f"{api.ns}-n0", cpu="2")
    election = LeaderElection(
        resource_name="ksched",
        resource_namespace=api.ns,
        lease_duration=3.0,
        renew_deadline=2.0,
        retry_period=0.5,
    )
    async with http_client(plane.url) as http:
        client = KubeClient(http, TokenBucket(0, 0))
        elector = LeaderElector(client, election, identity="me")
        async with KubeCluster.open(
            client, scheduler_names=(name,), may_write=elector.is_leader
        ) as cluster:
            await cluster.wait_synced()
            leading = anyio.Event()

            async def lead() -> None:
                async with Scheduler.open(profile_config(name), cluster=cluster):
                    leading.set()
                    await anyio.sleep_forever()

            lost_after: float | None = None
            async with anyio.create_task_group() as tg:

                async def elect() -> None:
                    nonlocal lost_after
                    with pytest.raises(LeadershipLostError):
                        await elector.run(lead)
                    lost_after = anyio.current_time() - stolen

                tg.start_soon(elect)
                await leading.wait()
                await api.create_pod("before", scheduler=name)
                await wait_until(lambda: bound_count(cluster, api.ns) == 1, 10)
                # Another scheduler takes the lease over (e.g. after a long GC pause here).
                path = f"/apis/coordination.k8s.io/v1/namespaces/{api.ns}/leases/ksched"
                lease = await client.request("GET", path)
                lease["spec"]["holderIdentity"] = "someone-else"
                await client.request("PUT", path, body=lease)
                stolen = anyio.current_time()
            assert lost_after is not None and lost_after <= 2.0 + 0.5 + 0.5
            assert not elector.is_leader()
            await api.create_pod("after", scheduler=name)
            await anyio.sleep(1.0)  # nobody schedules now: the pod stays pending
            assert cluster.get_pod(f"{api.ns}/after") is not None
            assert bound_count(cluster, api.ns) == 1
            pod = cluster.get_pod(f"{api.ns}/after")
            assert pod is not None
            with pytest.raises(NotLeaderError):
                await cluster.bind(pod, f"{api.ns}-n0")


def test_master_overrides_the_kubeconfig_server(tmp_path: Path) -> None:
    from ksched import SchedulerConfig
    from ksched.kube._run import resolve_kubeconfig

    from ._plane import write_kubeconfig

    kubeconfig = write_kubeconfig(tmp_path / "k", "https://a:6443")
    config = resolve_kubeconfig(str(kubeconfig), SchedulerConfig(), "https://b:443/")
    assert config.server == "https://b:443"
    assert config.token  # the rest still comes from the kubeconfig
    with pytest.raises(ConfigError, match="--master: expected an http"):
        resolve_kubeconfig(str(kubeconfig), SchedulerConfig(), "b:443")


class _Queue:
    scheduling_cycle = 0
    idle = False

    def is_idle(self) -> bool:
        return self.idle


@pytest.mark.anyio
@pytest.mark.parametrize(
    "anyio_backend", [("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})]
)
async def test_readyz_fails_when_the_loop_stalls_with_work_queued() -> None:
    from ksched.kube._run import STALL_SECONDS, _LoopState

    queue = _Queue()
    state = _LoopState(scheduler=cast(Any, SimpleNamespace(queue=queue)))
    async with anyio.create_task_group() as tg:
        tg.start_soon(state.watchdog)
        # The watchdog looks every second (0, 1, 2...); the test acts between its looks.
        await anyio.sleep(STALL_SECONDS - 2.5)
        assert state.loop_check() is None
        queue.scheduling_cycle += 1  # progress (seen at 58 s) resets the clock
        await anyio.sleep(STALL_SECONDS - 2.5)
        assert state.loop_check() is None
        await anyio.sleep(4.5)  # t=119.5: the look at 119 s found 61 s without progress
        assert state.loop_check() == f"no pod scheduled for {STALL_SECONDS:.0f}s"
        queue.idle = True  # nothing to do is not a stall
        await anyio.sleep(2)
        assert state.loop_check() is None
        tg.cancel_scope.cancel()


def test_sigterm_before_the_server_answers_exits_at_once(tmp_path: Path, procs: list[Proc]) -> None:
    from ._plane import free_port, write_kubeconfig

    kubeconfig = tmp_path / "kubeconfig"
    write_kubeconfig(kubeconfig, f"https://127.0.0.1:{free_port()}")
    proc = Proc(_write_config(tmp_path, "nowhere", kubeconfig), tmp_path, "c")
    procs.append(proc)
    _wait(proc.ready.exists, 20, "health endpoints up")
    # No API server to review a token: an anonymous probe is served (health paths are
    # always allowed), a Bearer token is refused with 401, as kube-scheduler does.
    status, body = proc.health("/readyz", token=None)
    assert status == 500 and "sched-handler-sync failed: caches not synced" in body
    assert proc.health("/livez", token=None) == (200, "ok")
    assert proc.health("/livez")[0] == 401
    proc.p.send_signal(signal.SIGTERM)
    assert proc.p.wait(5) == 0

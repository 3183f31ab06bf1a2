"""The real Go kube-scheduler (v1.24, ../shared/kube, percentageOfNodesToScore 100)
schedules 1000+ pods arriving over time on 120 nodes of four sizes through a real
kube-apiserver while ``ksched record`` records; ``ksched replay --follow-recorded`` with
v1.24's default profile (examples/kube/kube-scheduler-1.24.yaml) then agrees with at
least 99 % of its decisions (a tie is agreement only when the recorded node is among
ksched's best-scored nodes).

The workload makes the weights matter: a tenth of the nodes carry a PreferNoSchedule
taint (TaintToleration, weight 3) that a fifth of the pods tolerate, a third of the pods
prefer zone z1 (NodeAffinity, weight 2), requests differ per pod (NodeResourcesFit and
BalancedAllocation), a tenth of the pods are deleted again, and five pods fit nowhere.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from ksched.cli import main
from ksched.kube import KubeClient, KubeConfig, TokenBucket

from ._plane import REPO, TOKEN, ControlPlane, assets_dir, free_port, missing, node_status

pytestmark = pytest.mark.anyio

NODES = 120
PODS = 1000
RATE = 40.0
"""Pods created per second: the Go scheduler decides each before the next arrives."""
SHAPES = (("4", "8Gi"), ("8", "32Gi"), ("16", "64Gi"), ("32", "128Gi"))
CPUS = ("100m", "250m", "500m", "1", "2")
MEMORIES = ("128Mi", "256Mi", "512Mi", "1Gi", "2Gi")
TAINT = {"key": "dedicated", "value": "batch", "effect": "PreferNoSchedule"}
KSCHED = Path(sys.executable).with_name("ksched")


@pytest.fixture(scope="module")
def own_plane() -> Iterator[ControlPlane]:
    """A control plane of this test's own: 1000 pods and a Go scheduler would disturb
    the tests that share the session's."""
    why = missing()
    if why is not None:
        pytest.skip(why)
    control = ControlPlane().start()
    try:
        yield control
    finally:
        control.stop()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # one backend: the run costs real minutes; the replay is trio's anyway


def _go_config(path: Path, kubeconfig: Path) -> Path:
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
        "kind: KubeSchedulerConfiguration\n"
        "percentageOfNodesToScore: 100\n"
        "leaderElection: {leaderElect: false}\n"
        f"clientConnection: {{kubeconfig: {kubeconfig}, qps: 5000, burst: 5000}}\n"
    )
    return path


def _pod(name: str, rng: random.Random) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "c",
                "image": "registry.k8s.io/pause:3.7",
                "resources": {
                    "requests": {"cpu": rng.choice(CPUS), "memory": rng.choice(MEMORIES)}
                },
            }
        ]
    }
    if rng.random() < 0.2:
        spec["tolerations"] = [{**TAINT, "operator": "Equal"}]
    if rng.random() < 0.33:
        term = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z1"]}
        spec["affinity"] = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 50, "preference": {"matchExpressions": [term]}}
                ]
            }
        }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


async def _create_nodes(client: KubeClient) -> None:
    for i in range(NODES):
        cpu, memory = SHAPES[i % len(SHAPES)]
        name = f"node-{i:03d}"
        labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"z{i % 3}"}
        body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
        await client.request("POST", "/api/v1/nodes", body=body)
        await client.request(
            "PATCH",
            f"/api/v1/nodes/{name}/status",
            body=node_status(cpu=cpu, memory=memory),
            content_type="application/merge-patch+json",
        )
        taints = [TAINT] if i % 10 == 3 else None
        await client.request(
            "PATCH",
            f"/api/v1/nodes/{name}",
            body={"spec": {"taints": taints}},
            content_type="application/merge-patch+json",
        )


async def _delete(client: KubeClient, ns: str, name: str) -> None:
    """Every other one at once; the rest gracefully (with no kubelet to finish them, they
    stay terminating on their nodes, and both schedulers count them)."""
    path = f"/api/v1/namespaces/{ns}/pods/{name}"
    if int(name.rsplit("-", 1)[1]) % 2:
        await client.request("DELETE", path, params={"gracePeriodSeconds": "0"})
    else:
        await client.request("DELETE", path)


async def _workload(client: KubeClient, ns: str) -> set[str]:
    """Pods at RATE a second, a tenth deleted a second later; returns the pods kept."""
    rng = random.Random(38)
    kept: set[str] = set()
    doomed: list[tuple[float, str]] = []
    start = anyio.current_time()
    for i in range(PODS + 5):
        name = f"p-{i:04d}"
        pod = _pod(name, rng)
        if i >= PODS:  # fits on no node
            pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "64"
        await client.request("POST", f"/api/v1/namespaces/{ns}/pods", body=pod)
        if i < PODS and rng.random() < 0.1:
            doomed.append((anyio.current_time() + 1.0, name))
        elif i < PODS:
            kept.add(name)
        while doomed and doomed[0][0] <= anyio.current_time():
            await _delete(client, ns, doomed.pop(0)[1])
        await anyio.sleep(max(0.0, start + (i + 1) / RATE - anyio.current_time()))
    for _, name in doomed:
        await _delete(client, ns, name)
    return kept


async def _wait_ready(client: KubeClient, ns: str, timeout: float = 30) -> None:
    """Until the Go scheduler binds a first pod: started late, it would meet a backlog,
    and bindings of a backlog reach the watch out of the order they were decided in."""
    probe = _pod("probe", random.Random(0))
    await client.request("POST", f"/api/v1/namespaces/{ns}/pods", body=probe)
    await _wait_bound(client, ns, {"probe"}, timeout)


async def _wait_bound(client: KubeClient, ns: str, kept: set[str], timeout: float) -> None:
    with anyio.fail_after(timeout):
        while True:
            body = await client.request("GET", f"/api/v1/namespaces/{ns}/pods")
            bound = {p["metadata"]["name"] for p in body["items"] if p["spec"].get("nodeName")}
            if kept <= bound:
                return
            await anyio.sleep(0.5)


def _wait_for_line(log: Path, text: str, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            raise AssertionError(f"exited with {proc.returncode}: {log.read_text()}")
        time.sleep(0.1)
    raise TimeoutError(f"no {text!r} in {log} after {timeout}s")


def _stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> int:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    return proc.returncode


async def test_replay_agrees_with_the_go_scheduler(own_plane: ControlPlane, tmp_path: Path) -> None:
    assets = assets_dir()
    assert assets is not None
    kubeconfig = own_plane.kubeconfig(tmp_path / "kubeconfig")
    trace = tmp_path / "trace.jsonl.gz"
    ns = "what-if"
    config = KubeConfig(server=own_plane.url, token=TOKEN, insecure=True)
    async with config.http_client() as http:
        client = KubeClient(http, TokenBucket(0, 0))
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        await client.request("POST", "/api/v1/namespaces", body=namespace)
        await _create_nodes(client)
        record_log = tmp_path / "record.log"
        go_log = tmp_path / "kube-scheduler.log"
        with open(record_log, "wb") as rlog, open(go_log, "wb") as glog:
            recorder = subprocess.Popen(
                [str(KSCHED), "record", "--kubeconfig", str(kubeconfig), "-o", str(trace)],
                stdout=rlog,
                stderr=rlog,
            )
            go = None
            try:
                _wait_for_line(record_log, "initial state written", recorder, 30)
                go = subprocess.Popen(
                    [
                        str(assets / "kube-scheduler"),
                        f"--config={_go_config(tmp_path / 'go.yaml', kubeconfig)}",
                        f"--secure-port={free_port()}",
                        "--bind-address=127.0.0.1",
                        f"--cert-dir={tmp_path / 'certs'}",
                    ],
                    stdout=glog,
                    stderr=glog,
                )
                await _wait_ready(client, ns)
                kept = await _workload(client, ns)
                await _wait_bound(client, ns, kept, timeout=30)
                await anyio.sleep(1.0)  # the last bindings reach the recorder's watch
                assert _stop(recorder, signal.SIGINT) == 0, record_log.read_text()
            finally:
                _stop(recorder)
                if go is not None:
                    _stop(go)
    report_file = tmp_path / "report.json"
    started = time.perf_counter()
    args = [
        "replay",
        str(trace),
        "--follow-recorded",
        "--config",
        str(REPO / "examples/kube/kube-scheduler-1.24.yaml"),
        "--output",
        "json",
        "--report-file",
        str(report_file),
    ]
    code = await anyio.to_thread.run_sync(main, args)  # it runs an event loop of its own
    replay_seconds = time.perf_counter() - started
    assert code == 0
    report = json.loads(report_file.read_text())
    agreement = report["agreement"]
    disagreements = [p["decision"] for p in report["pods"] if p.get("agreed") is False]
    assert agreement["decisions"] >= PODS * 0.9, agreement  # the deleted ones may go first
    assert agreement["agreed"] >= 0.99 * agreement["decisions"], disagreements[:5]
    # the Scheduled Events' controller (the last Events may reach the watch after the end)
    recorded_by = Counter(p.get("recordedBy") for p in report["pods"] if p.get("decision"))
    assert set(recorded_by) <= {"default-scheduler", None}
    assert recorded_by["default-scheduler"] >= 0.95 * agreement["decisions"], recorded_by
    unplaceable = {f"{ns}/p-{i:04d}" for i in range(PODS, PODS + 5)}
    assert unplaceable <= set(report["pending"]["pods"])
    deleted = [p for p in report["pods"] if "deleted" in p]
    assert len(deleted) >= 20  # pods removed at once: deletions were replayed
    print(f"\nagreement {agreement}, replay {replay_seconds:.1f}s", file=sys.stderr)

"""`ksched run` as a process against the real apiserver, with exactly the privileges of
examples/kube/rbac.yaml (applied with kubectl, a token from `kubectl create token`), and
with a pod whose memory request (1e10000000, which kube-apiserver v1.24 accepts and
stores) once cost tens of seconds of event-loop CPU to read."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from ._plane import REPO, ControlPlane, node_manifest, node_status, pod_manifest

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="needs kubectl on PATH")


def _kubectl(admin: Path, *args: str, stdin: str | None = None) -> str:
    assert KUBECTL is not None
    done = subprocess.run(
        [KUBECTL, "--kubeconfig", str(admin), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _wait(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise TimeoutError(f"{what} within {timeout}s")


class _Run:
    """One `ksched run` process; stopped (SIGTERM, then SIGKILL) by the fixture."""

    def __init__(self, tmp: Path, config: Path) -> None:
        self.ready, self.log = tmp / "port", tmp / "ksched.log"
        env = {**os.environ, "KSCHED_READY_FILE": str(self.ready)}
        env.pop("KUBECONFIG", None)
        cmd = [sys.executable, "-c", "from ksched.cli import main; raise SystemExit(main())"]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [*cmd, "run", "--config", str(config), "--health-address", "127.0.0.1:0", "-v"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )

    def get(self, path: str) -> httpx.Response:
        """An anonymous GET over HTTPS (the port's certificate is made at start)."""
        port = int(self.ready.read_text())
        return httpx.get(f"https://127.0.0.1:{port}{path}", timeout=2, verify=False)

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode


@pytest.fixture
def runs() -> Iterator[list[_Run]]:
    started: list[_Run] = []
    yield started
    for run in started:
        run.stop()


def _scheduler_config(tmp: Path, kubeconfig: Path, name: str) -> Path:
    path = tmp / "scheduler.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        f"clientConnection:\n  kubeconfig: {kubeconfig}\n  qps: 200\n  burst: 400\n"
        "leaderElection:\n  leaderElect: true\n  resourceName: ksched\n"
        "  resourceNamespace: kube-system\n"
        "  leaseDuration: 3s\n  renewDeadline: 2s\n  retryPeriod: 500ms\n"
        f"profiles:\n- schedulerName: {name}\n"
    )
    return path


def _token_kubeconfig(path: Path, server: str, token: str) -> Path:
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {"name": "c", "cluster": {"server": server, "insecure-skip-tls-verify": True}}
                ],
                "users": [{"name": "ksched", "user": {"token": token}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "ksched"}}],
                "current-context": "x",
            }
        )
    )
    return path


def _setup_namespace(plane: ControlPlane, ns: str, nodes: int) -> None:
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
            node_status(cpu="4", memory="8Gi"),
            ctype="application/merge-patch+json",
        )
        plane.request(
            "PATCH",
            f"/api/v1/nodes/{name}",
            {"spec": {"taints": None}},
            ctype="application/merge-patch+json",
        )


def _create_pods(
    plane: ControlPlane, ns: str, name: str, count: int, memory: str = "100Mi"
) -> None:
    for i in range(count):
        pod = pod_manifest(
            f"p{i}", ns, scheduler=name, memory=memory, node_selector={"ksched-test": ns}
        )
        plane.request("POST", f"/api/v1/namespaces/{ns}/pods", pod)


def _bound(plane: ControlPlane, ns: str) -> int:
    pods = plane.request("GET", f"/api/v1/namespaces/{ns}/pods")["items"]
    return sum(1 for p in pods if p["spec"].get("nodeName"))


@needs_kubectl
def test_ksched_run_needs_no_more_than_the_example_rbac(
    plane: ControlPlane, tmp_path: Path, runs: list[_Run]
) -> None:
    admin = plane.kubeconfig(tmp_path / "admin")
    applied = _kubectl(admin, "apply", "-f", str(REPO / "examples/kube/rbac.yaml"))
    assert "clusterrole.rbac.authorization.k8s.io/ksched" in applied
    token = _kubectl(admin, "create", "token", "ksched", "-n", "kube-system").strip()
    ns, name, count = "least-privilege", "ksched-least-privilege", 20
    _setup_namespace(plane, ns, nodes=2)
    kubeconfig = _token_kubeconfig(tmp_path / "ksched-kubeconfig", plane.url, token)
    run = _Run(tmp_path, _scheduler_config(tmp_path, kubeconfig, name))
    runs.append(run)
    _create_pods(plane, ns, name, count)
    _wait(lambda: _bound(plane, ns) == count, 60, "the pods bind")
    # An unschedulable pod: the PodScheduled condition and a FailedScheduling Event
    plane.request(
        "POST",
        f"/api/v1/namespaces/{ns}/pods",
        pod_manifest("too-big", ns, scheduler=name, cpu="64", node_selector={"ksched-test": ns}),
    )
    _wait(lambda: _failed_events(plane, ns) > 0, 30, "a FailedScheduling Event")
    assert run.stop() == 0
    log = run.log.read_text()
    assert "caches synced" in log
    assert not re.search(r"\b403\b|forbidden", log, re.IGNORECASE), log[-4000:]


def _failed_events(plane: ControlPlane, ns: str) -> int:
    events = plane.request("GET", f"/apis/events.k8s.io/v1/namespaces/{ns}/events")["items"]
    return sum(1 for e in events if e.get("reason") == "FailedScheduling")


def test_a_pod_asking_1e10000000_bytes_does_not_stall_ksched_run(
    plane: ControlPlane, tmp_path: Path, runs: list[_Run]
) -> None:
    ns, name = "hostile-quantity", "ksched-hostile-quantity"
    _setup_namespace(plane, ns, nodes=1)
    created = plane.request(
        "POST",
        f"/api/v1/namespaces/{ns}/pods",
        pod_manifest(
            "huge", ns, scheduler=name, memory="1e10000000", node_selector={"ksched-test": ns}
        ),
    )
    stored = created["spec"]["containers"][0]["resources"]["requests"]["memory"]
    assert stored.endswith("e9999999")  # the apiserver's canonical form of 1e10000000
    config = _scheduler_config(tmp_path, plane.kubeconfig(tmp_path / "kubeconfig"), name)
    text = config.read_text().replace("resourceName: ksched", f"resourceName: ksched-{ns}")
    config.write_text(text)
    run = _Run(tmp_path, config)
    runs.append(run)
    _create_pods(plane, ns, name, 5)
    _wait(lambda: _bound(plane, ns) == 5, 60, "the other pods bind")
    for _ in range(20):  # the loop answers at once the whole time
        start = time.monotonic()
        assert run.get("/livez").status_code == 200
        assert time.monotonic() - start < 1.0
    _wait(lambda: _failed_events(plane, ns) > 0, 30, "the huge pod's FailedScheduling Event")
    pod = plane.request("GET", f"/api/v1/namespaces/{ns}/pods/huge")
    assert not pod["spec"].get("nodeName")
    condition = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
    assert "Insufficient memory" in condition["message"]
    assert run.stop() == 0

"""The real Go kube-scheduler (v1.24, ../shared/kube) delegates binds to ``ksched extender
serve --kubeconfig`` (a process of its own), which binds through the real kube-apiserver.
It calls the extender over HTTPS with its ``tlsConfig`` (caData, certData, keyData): the
client certificate says it is ``system:kube-scheduler``, whom a ClusterRole allows to post
to ``/ksched/bind``; an anonymous caller gets 403.

# pkg/scheduler/extender.go (HTTPExtender.Bind, IsInterested), schedule_one.go
# (extendersBinding: the first binder extender interested in the pod binds it, else the
# Bind plugins), scheduler.go (managedResources with ignoredByScheduler are left out of
# NodeResourcesFit)
Only the pod asking for the extender's managed resource goes to ksched; the other is
bound by the Go scheduler's own DefaultBinder.
"""

from __future__ import annotations

import base64
import re
import ssl
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import pytest

from observability._certs import CertAuthority, Pair

from ._plane import TOKEN, ControlPlane, assets_dir, free_port, pod_manifest
from .conftest import Api, unique

pytestmark = pytest.mark.anyio

MANAGED = "example.com/ksched-bind"

SERVED = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint:
      enabled: [{name: PrioritySort}, {name: DefaultBinder}]
      disabled: [{name: "*"}]
"""


def _go_config(path: Path, kubeconfig: Path, port: int, ca: CertAuthority, client: Pair) -> Path:
    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    path.write_text(
        f"""apiVersion: kubescheduler.config.k8s.io/v1beta3
kind: KubeSchedulerConfiguration
leaderElection: {{leaderElect: false}}
clientConnection: {{kubeconfig: {kubeconfig}, qps: 100, burst: 100}}
extenders:
- urlPrefix: https://127.0.0.1:{port}/ksched
  tlsConfig:
    caData: {b64(ca.pem)}
    certData: {b64(client.cert_pem)}
    keyData: {b64(client.key_pem)}
  bindVerb: bind
  httpTimeout: 10s
  managedResources:
  - {{name: {MANAGED}, ignoredByScheduler: true}}
"""
    )
    return path


async def _allow_bind(api: Api, user: str) -> None:
    """A ClusterRole letting ``user`` post to the extender's bind path, bound to it."""
    role = unique("ksched-extender-bind")
    await api.client.request(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        body={"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
              "metadata": {"name": role},
              "rules": [{"nonResourceURLs": ["/ksched/bind"], "verbs": ["post"]}]},
    )  # fmt: skip
    await api.client.request(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        body={"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
              "metadata": {"name": role},
              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                          "name": role},
              "subjects": [{"kind": "User", "name": user,
                            "apiGroup": "rbac.authorization.k8s.io"}]},
    )  # fmt: skip


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


async def test_the_go_scheduler_lets_ksched_bind_the_pods_it_manages(
    api: Api, plane: ControlPlane, tmp_path: Path
) -> None:
    assets = assets_dir()
    assert assets is not None
    node = unique(f"{api.ns}-n")
    await api.create_node(node)
    kubeconfig = plane.kubeconfig(tmp_path / "kubeconfig")
    (tmp_path / "served.yaml").write_text(SERVED)
    ca = CertAuthority(tmp_path)
    serving, client = ca.serving(), ca.client("system:kube-scheduler")
    await _allow_bind(api, "system:kube-scheduler")
    trust = ssl.create_default_context(cafile=str(ca.path))
    port = free_port()
    serve_log = open(tmp_path / "ksched.log", "wb")  # noqa: SIM115  # the process owns it
    serve = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from ksched.cli import main; raise SystemExit(main())",
            "extender",
            "serve",
            f"--listen=127.0.0.1:{port}",
            "--url-prefix=/ksched",
            f"--config={tmp_path / 'served.yaml'}",
            f"--kubeconfig={kubeconfig}",
            f"--tls-cert-file={serving.cert}",
            f"--tls-private-key-file={serving.key}",
            f"--client-ca-file={ca.path}",
        ],
        stdout=serve_log,
        stderr=serve_log,
    )
    go_log = open(tmp_path / "kube-scheduler.log", "wb")  # noqa: SIM115  # the process owns it
    go: subprocess.Popen[bytes] | None = None
    try:
        async with httpx.AsyncClient(verify=trust) as http:
            with anyio.fail_after(30):
                while True:
                    try:
                        if (await http.get(f"https://127.0.0.1:{port}/healthz")).text == "ok":
                            break
                    except httpx.TransportError:
                        pass
                    assert serve.poll() is None, (tmp_path / "ksched.log").read_text()
                    await anyio.sleep(0.2)
        go = subprocess.Popen(
            [
                str(assets / "kube-scheduler"),
                f"--config={_go_config(tmp_path / 'scheduler.yaml', kubeconfig, port, ca, client)}",
                f"--secure-port={free_port()}",
                "--bind-address=127.0.0.1",
                f"--cert-dir={tmp_path / 'certs'}",
            ],
            stdout=go_log,
            stderr=go_log,
        )
        managed = pod_manifest("managed", api.ns, scheduler="default-scheduler")
        managed["spec"]["nodeSelector"] = {"ksched-test": api.ns}
        resources = managed["spec"]["containers"][0]["resources"]
        resources["requests"][MANAGED] = "1"
        resources["limits"] = {MANAGED: "1"}
        await api.client.request("POST", f"/api/v1/namespaces/{api.ns}/pods", body=managed)
        await api.create_pod("plain", scheduler="default-scheduler")
        with anyio.fail_after(45):
            while True:
                placed = [(await api.pod(p))["spec"].get("nodeName") for p in ("managed", "plain")]
                if all(placed):
                    break
                await anyio.sleep(0.2)
        assert placed == [node, node]
        served = (tmp_path / "ksched.log").read_text()
        assert f"pod={api.ns}/managed" in served  # ksched bound it...
        assert f"pod={api.ns}/plain" not in served  # ...and only it
        admin = {"Authorization": f"Bearer {TOKEN}"}  # system:masters: always allowed
        async with httpx.AsyncClient(base_url=f"https://127.0.0.1:{port}", verify=trust) as http:
            assert (await http.get("/readyz")).text == "ok"
            refused = await http.post("/ksched/bind", json={"PodName": "managed"})
            assert refused.status_code == 403  # anonymous: not allowed to bind
            text = (await http.get("/metrics", headers=admin)).text
        # the Go scheduler's bind call, and the one binding POST it made through the API
        assert 'scheduler_extender_server_requests_total{code="200",verb="bind"} 1.0' in text
        assert re.search(
            r'rest_client_requests_total\{code="201",host="[^"]+",method="POST"\} 1\.0', text
        ), text
    finally:
        if go is not None:
            _stop(go)
        _stop(serve)
        go_log.close()
        serve_log.close()

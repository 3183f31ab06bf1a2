"""Secure serving of the health and metrics port: HTTPS with a certificate made at start,
client certificates, Bearer tokens, /metrics authorized, answers as kube-apiserver's
filters give them; curl and kubectl as the clients.

# k8s.io/apiserver pkg/server/options/authorization.go (AlwaysAllowPaths, system:masters),
# pkg/endpoints/handlers/responsewriters (the 401 and 403 Status answers)
"""

from __future__ import annotations

import builtins
import json
import os
import shutil
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from prometheus_client import CollectorRegistry, Counter

from ksched.observability import (
    AccessReview,
    HealthServer,
    Serving,
    ServingOptions,
    TokenReview,
    UserInfo,
)

from ._certs import CertAuthority
from ._wire import open_fds

pytestmark = pytest.mark.anyio

GOOD, OTHER = "token-of-reader", "token-of-nobody"


class FakeReviews:
    """The API server's reviews, as a fake: two known tokens, one user allowed /metrics."""

    def __init__(self) -> None:
        self.tokens = {GOOD: UserInfo("reader", "u1", ("ops",)), OTHER: UserInfo("nobody")}
        self.allowed = {("reader", "get", "/metrics")}
        self.token_reviews: list[str] = []
        self.access_reviews: list[tuple[str, str, str]] = []

    async def review_token(self, token: str) -> TokenReview:
        self.token_reviews.append(token)
        user = self.tokens.get(token)
        return TokenReview(user is not None, user, "" if user else "invalid bearer token")

    async def review_access(self, user: UserInfo, verb: str, path: str) -> AccessReview:
        self.access_reviews.append((user.name, verb, path))
        return AccessReview((user.name, verb, path) in self.allowed)


def _health() -> HealthServer:
    registry = CollectorRegistry()
    Counter("ksched_test_total", "A counter the test reads back.", registry=registry).inc()
    return HealthServer(live={"ping": lambda: None}, registry=registry)


@asynccontextmanager
async def served(serving: Serving, reviews: FakeReviews | None = None) -> AsyncIterator[int]:
    if reviews is not None:
        serving.delegate(reviews)
    async with anyio.create_task_group() as tg:
        port = await tg.start(serving.serve, _health().handle, "127.0.0.1", 0)
        yield port
        tg.cancel_scope.cancel()


def _trust(pem: bytes) -> ssl.SSLContext:
    context = ssl.create_default_context(cadata=pem.decode())
    return context


async def test_https_by_default_with_a_certificate_made_at_start(tmp_path: Path) -> None:
    serving = Serving.build(ServingOptions(), "127.0.0.1")
    assert serving.certificate is not None
    ca = tmp_path / "ca.crt"
    ca.write_bytes(serving.certificate.ca_pem)  # the public CA certificate only
    async with served(serving, FakeReviews()) as port:
        for host in ("127.0.0.1", "localhost"):
            async with httpx.AsyncClient(verify=_trust(serving.certificate.ca_pem)) as http:
                reply = await http.get(f"https://{host}:{port}/healthz")
            assert (reply.status_code, reply.text) == (200, "ok")
        result = await anyio.run_process(
            ["curl", "-sS", "--cacert", str(ca), f"https://127.0.0.1:{port}/livez"], check=False
        )
        assert result.stdout == b"ok", result.stderr
        # plain HTTP on the TLS port gets no HTTP answer
        with pytest.raises(httpx.HTTPError):
            async with httpx.AsyncClient() as http:
                await http.get(f"http://127.0.0.1:{port}/healthz", timeout=5)


async def test_metrics_need_a_token_the_cluster_allows() -> None:
    serving = Serving.build(ServingOptions(), "127.0.0.1")
    assert serving.certificate is not None
    reviews = FakeReviews()
    async with (
        served(serving, reviews) as port,
        httpx.AsyncClient(
            base_url=f"https://127.0.0.1:{port}", verify=_trust(serving.certificate.ca_pem)
        ) as http,
    ):
        ok = await http.get("/metrics", headers={"Authorization": f"Bearer {GOOD}"})
        assert ok.status_code == 200 and "ksched_test_total 1.0" in ok.text
        denied = await http.get("/metrics", headers={"Authorization": f"Bearer {OTHER}"})
        assert denied.status_code == 403
        assert denied.json()["message"] == 'forbidden: User "nobody" cannot get path "/metrics"'
        anonymous = await http.get("/metrics")
        assert anonymous.status_code == 403
        assert anonymous.json() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": 'forbidden: User "system:anonymous" cannot get path "/metrics"',
            "reason": "Forbidden",
            "details": {},
            "code": 403,
        }
        bad = await http.get("/metrics", headers={"Authorization": "Bearer no-such-token"})
        assert bad.status_code == 401 and bad.json()["reason"] == "Unauthorized"
        # health paths are always allowed, yet a refused token is refused there too
        assert (await http.get("/readyz")).text == "ok"
        assert (await http.head("/livez")).status_code == 200
        refused = await http.get("/healthz", headers={"Authorization": "Bearer no-such-token"})
        assert refused.status_code == 401
        # each token and each (user, verb, path) was reviewed once: the rest came from caches
        assert sorted(reviews.token_reviews) == sorted([GOOD, OTHER, "no-such-token"])
        again = await http.get("/metrics", headers={"Authorization": f"Bearer {GOOD}"})
        assert again.status_code == 200 and len(reviews.token_reviews) == 3
        assert reviews.access_reviews.count(("reader", "get", "/metrics")) == 1


async def test_client_certificates_authenticate_and_system_masters_needs_no_review(
    tmp_path: Path,
) -> None:
    ca = CertAuthority(tmp_path)
    options = ServingOptions(client_ca_file=str(ca.path))
    serving = Serving.build(options, "127.0.0.1")
    assert serving.certificate is not None
    server_ca = tmp_path / "server-ca.crt"
    server_ca.write_bytes(serving.certificate.ca_pem)
    admin, bob = ca.client("admin", "system:masters"), ca.client("bob", "devs")
    stranger = CertAuthority(tmp_path, "other-ca").client("mallory")
    reviews = FakeReviews()
    async with served(serving, reviews) as port:
        url = f"https://127.0.0.1:{port}/metrics"

        async def curl(pair: Any) -> tuple[int, bytes]:
            command = ["curl", "-sS", "--cacert", str(server_ca), url]
            if pair is not None:
                command += ["--cert", str(pair.cert), "--key", str(pair.key)]
            result = await anyio.run_process(command, check=False)
            return result.returncode, result.stdout

        code, body = await curl(admin)
        assert code == 0 and b"ksched_test_total 1.0" in body
        assert reviews.access_reviews == []  # system:masters: always allowed
        code, body = await curl(bob)
        assert json.loads(body)["message"] == 'forbidden: User "bob" cannot get path "/metrics"'
        assert reviews.access_reviews == [("bob", "get", "/metrics")]
        code, _ = await curl(stranger)  # a CA the server does not trust: no connection
        assert code != 0


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")
async def test_kubectl_reads_metrics_with_a_token(tmp_path: Path) -> None:
    serving = Serving.build(ServingOptions(), "127.0.0.1")
    assert serving.certificate is not None
    (tmp_path / "ca.crt").write_bytes(serving.certificate.ca_pem)
    (tmp_path / "empty-kubeconfig").write_text("")
    env = {**os.environ, "KUBECONFIG": str(tmp_path / "empty-kubeconfig")}
    async with served(serving, FakeReviews()) as port:
        base = [
            "kubectl",
            f"--server=https://127.0.0.1:{port}",
            f"--certificate-authority={tmp_path / 'ca.crt'}",
        ]
        ok = await anyio.run_process(
            [*base, f"--token={GOOD}", "get", "--raw", "/metrics"], check=False, env=env
        )
        assert ok.returncode == 0 and b"ksched_test_total 1.0" in ok.stdout, ok.stderr
        refused = await anyio.run_process(
            [*base, f"--token={OTHER}", "get", "--raw", "/metrics"], check=False, env=env
        )
        assert refused.returncode != 0 and b"Forbidden" in refused.stderr


async def test_plain_http_only_when_asked_for_with_the_same_checks() -> None:
    serving = Serving.build(ServingOptions(http=True), "127.0.0.1")
    assert serving.tls is None and serving.certificate is None
    async with (
        served(serving, FakeReviews()) as port,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http,
    ):
        assert (await http.get("/healthz")).text == "ok"
        assert (await http.get("/metrics")).status_code == 403
        reply = await http.get("/metrics", headers={"Authorization": f"Bearer {GOOD}"})
        assert reply.status_code == 200


def test_the_generated_key_never_touches_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def watch_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if any(flag in mode for flag in "wax+"):
            opened.append(str(file))
        return real_open(file, mode, *args, **kwargs)

    def watch_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            opened.append(str(path))
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", watch_open)
    monkeypatch.setattr(os, "open", watch_os_open)
    fds = open_fds()
    serving = Serving.build(ServingOptions(), "127.0.0.1")
    assert serving.tls is not None and opened == []
    assert open_fds() == fds  # the memory file that carried the key is closed
    assert "PRIVATE KEY" not in repr(serving.certificate)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--tls-cert-file", "/nonexistent/tls.crt", "--tls-private-key-file", "/nonexistent/k"],
         "--tls-cert-file /nonexistent/tls.crt"),
        (["--tls-cert-file", "/nonexistent/tls.crt"], "go together"),
        (["--client-ca-file", "/nonexistent/ca.crt"], "--client-ca-file /nonexistent/ca.crt"),
        (["--http", "--client-ca-file", "ca.crt"], "--http serves plain HTTP"),
        (["--authorization-always-allow-paths", "/a*b"], "--authorization-always-allow-paths"),
    ],
    ids=["missing-cert", "cert-without-key", "missing-client-ca", "http-with-tls", "bad-path"],
)  # fmt: skip
def test_bad_serving_flags_exit_2_naming_the_flag(
    flags: list[str], message: str, tmp_path: Path
) -> None:
    config = tmp_path / "served.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )
    result = subprocess.run(
        ["ksched", "extender", "serve", "--listen", "127.0.0.1:0", "--config", str(config), *flags],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"},
    )
    assert result.returncode == 2, result.stderr
    assert message in result.stderr

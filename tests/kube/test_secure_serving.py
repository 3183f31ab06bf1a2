"""The health and metrics port checked through a real kube-apiserver: ServiceAccount
tokens reviewed by TokenReview, /metrics authorized by SubjectAccessReview (a ClusterRole
with ``nonResourceURLs: [/metrics]`` allows one account, the other gets 403), the
reviews cached; curl and kubectl as the clients.

# k8s.io/apiserver plugin/pkg/authenticator/token/webhook, plugin/pkg/authorizer/webhook
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import anyio
import pytest
from prometheus_client import CollectorRegistry, Counter

from ksched.kube._delegated_auth import DelegatedAuth
from ksched.observability import (
    AccessReview,
    HealthServer,
    Serving,
    ServingOptions,
    TokenReview,
    UserInfo,
)

from ._plane import ControlPlane
from .conftest import Api, unique

pytestmark = pytest.mark.anyio


class Counted:
    """DelegatedAuth, counting the reviews that reach the API server."""

    def __init__(self, inner: DelegatedAuth) -> None:
        self.inner = inner
        self.tokens = 0
        self.access = 0

    async def review_token(self, token: str) -> TokenReview:
        self.tokens += 1
        return await self.inner.review_token(token)

    async def review_access(self, user: UserInfo, verb: str, path: str) -> AccessReview:
        self.access += 1
        return await self.inner.review_access(user, verb, path)


async def _account_token(api: Api, name: str) -> str:
    await api.client.request(
        "POST",
        f"/api/v1/namespaces/{api.ns}/serviceaccounts",
        body={"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}},
    )
    answer = await api.client.request(
        "POST",
        f"/api/v1/namespaces/{api.ns}/serviceaccounts/{name}/token",
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
              "spec": {"expirationSeconds": 600}},
    )  # fmt: skip
    return str(answer["status"]["token"])


async def _allow_metrics(api: Api, account: str) -> None:
    role = unique("ksched-metrics-reader")
    await api.client.request(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        body={"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
              "metadata": {"name": role},
              "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]},
    )  # fmt: skip
    await api.client.request(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        body={"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
              "metadata": {"name": role},
              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                          "name": role},
              "subjects": [{"kind": "ServiceAccount", "name": account,
                            "namespace": api.ns}]},
    )  # fmt: skip


async def test_service_account_tokens_and_metrics_rbac_through_the_api_server(
    api: Api, plane: ControlPlane, tmp_path: Path
) -> None:
    reader, nobody = await _account_token(api, "reader"), await _account_token(api, "nobody")
    await _allow_metrics(api, "reader")
    registry = CollectorRegistry()
    Counter("ksched_served_total", "A counter the test reads back.", registry=registry).inc()
    health = HealthServer(live={"ping": lambda: None}, registry=registry)
    serving = Serving.build(ServingOptions(), "127.0.0.1")
    assert serving.certificate is not None
    reviews = Counted(DelegatedAuth(api.client))
    serving.delegate(reviews)
    ca = tmp_path / "ca.crt"
    ca.write_bytes(serving.certificate.ca_pem)
    async with anyio.create_task_group() as tg:
        port = await tg.start(serving.serve, health.handle, "127.0.0.1", 0)

        async def curl(path: str, token: str | None = None) -> tuple[str, str]:
            command = ["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", "--cacert", str(ca)]
            if token is not None:
                command += ["-H", f"Authorization: Bearer {token}"]
            result = await anyio.run_process([*command, f"https://127.0.0.1:{port}{path}"])
            body, _, code = result.stdout.decode().rpartition("\n")
            return code, body

        code, body = await curl("/metrics", reader)
        assert code == "200" and "ksched_served_total 1.0" in body
        code, body = await curl("/metrics", nobody)
        assert code == "403"
        user = f"system:serviceaccount:{api.ns}:nobody"
        assert f'forbidden: User \\"{user}\\" cannot get path \\"/metrics\\"' in body
        assert (await curl("/metrics"))[0] == "403"  # anonymous
        assert (await curl("/metrics", "not-a-token"))[0] == "401"
        assert await curl("/healthz") == ("200", "ok")
        # the same token again within 10 s costs no review
        tokens, access = reviews.tokens, reviews.access
        for _ in range(5):
            assert (await curl("/metrics", reader))[0] == "200"
        assert (reviews.tokens, reviews.access) == (tokens, access)
        if shutil.which("kubectl"):
            (tmp_path / "empty").write_text("")
            result = await anyio.run_process(
                ["kubectl", f"--server=https://127.0.0.1:{port}",
                 f"--certificate-authority={ca}", f"--token={reader}", "get", "--raw", "/metrics"],
                env={**os.environ, "KUBECONFIG": str(tmp_path / "empty")},
            )  # fmt: skip
            assert b"ksched_served_total 1.0" in result.stdout
        tg.cancel_scope.cancel()

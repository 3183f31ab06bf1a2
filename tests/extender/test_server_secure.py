"""``ksched extender serve``'s port: HTTPS, and with cluster credentials ``bind``,
``preempt`` and ``/metrics`` refused to callers the cluster does not allow, before their
body is read; ``filter``, ``prioritize`` and the health endpoints open to all."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import attrs
import httpx
import pytest

from ksched.extender import node_json, pod_json
from ksched.extender.serving import EXTENDER_LIMITS, ExtenderServer, extender_serving
from ksched.observability import AccessReview, ServingOptions, TokenReview, UserInfo
from ksched.testing import make_node, make_pod

from .test_server import CONFIG

pytestmark = pytest.mark.anyio

SCHEDULER = UserInfo("system:kube-scheduler")


class Reviews:
    """The API server's answers: one token, the scheduler may post to bind."""

    async def review_token(self, token: str) -> TokenReview:
        ok = token == "scheduler-token"
        return TokenReview(ok, SCHEDULER if ok else None)

    async def review_access(self, user: UserInfo, verb: str, path: str) -> AccessReview:
        return AccessReview(
            user.name == SCHEDULER.name and (verb, path) == ("post", "/ksched/bind")
        )


@asynccontextmanager
async def served(*, credentials: bool, **limits: int) -> AsyncIterator[httpx.AsyncClient]:
    server = ExtenderServer(CONFIG, "/ksched")
    options = ServingOptions(limits=attrs.evolve(EXTENDER_LIMITS, **limits))
    serving = extender_serving(options, "127.0.0.1", server, credentials=credentials)
    serving.delegate(Reviews())
    assert serving.certificate is not None
    async with anyio.create_task_group() as tg:
        port = await tg.start(serving.serve, server.handle, "127.0.0.1", 0)
        verify = httpx.create_ssl_context(verify=False)
        verify.load_verify_locations(cadata=serving.certificate.ca_pem.decode())
        verify.check_hostname, verify.verify_mode = True, __import__("ssl").CERT_REQUIRED
        async with httpx.AsyncClient(base_url=f"https://127.0.0.1:{port}", verify=verify) as http:
            yield http
        tg.cancel_scope.cancel()


BIND = {"PodName": "p", "PodNamespace": "default", "PodUID": "u", "Node": "n1"}
FILTER = {
    "Pod": pod_json(make_pod("p").req(cpu="1").obj()),
    "Nodes": {"items": [node_json(make_node("n1").capacity(cpu="2", pods=10).obj())]},
}


async def test_with_credentials_bind_needs_the_clusters_leave() -> None:
    async with served(credentials=True) as http:
        anonymous = await http.post("/ksched/bind", json=BIND)
        assert anonymous.status_code == 403
        assert anonymous.json()["message"] == (
            'forbidden: User "system:anonymous" cannot post path "/ksched/bind"'
        )
        assert (await http.post("/ksched/preempt", json={})).status_code == 403
        assert (await http.get("/metrics")).status_code == 403
        bad = await http.post("/ksched/bind", json=BIND, headers={"Authorization": "Bearer x"})
        assert bad.status_code == 401
        allowed = await http.post(
            "/ksched/bind", json=BIND, headers={"Authorization": "Bearer scheduler-token"}
        )
        # admitted: the verb ran (and, with no binder in this test, says so)
        assert allowed.status_code == 200 and "no cluster to bind pod" in allowed.json()["Error"]
        # filter and the health endpoints are open
        reply = await http.post("/ksched/filter", json=FILTER)
        assert reply.status_code == 200 and reply.json()["Nodes"]["items"]
        assert (await http.get("/readyz")).text == "ok"


async def test_a_refused_bind_is_answered_before_its_body_is_read() -> None:
    async with served(credentials=True, max_body_bytes=1024) as http:
        big = b"{" + b" " * 100_000 + b"}"
        reply = await http.post("/ksched/bind", content=big)
        assert reply.status_code == 403  # not 413: refused on the head alone


async def test_without_credentials_nothing_is_refused_and_bodies_are_bounded() -> None:
    async with served(credentials=False, max_body_bytes=4096) as http:
        reply = await http.post("/ksched/bind", json=BIND)
        assert reply.status_code == 200 and "serve the extender with --kubeconfig" in reply.text
        assert (await http.get("/metrics")).status_code == 200
        big = {**FILTER, "padding": "x" * 5000}
        assert (await http.post("/ksched/filter", json=big)).status_code == 413
        assert (await http.post("/ksched/filter", json=FILTER)).status_code == 200

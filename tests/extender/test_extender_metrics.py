"""Extender metrics on both sides: the scheduler's calls
(scheduler_extender_request_duration_seconds) and ``ksched extender serve``'s requests,
health endpoints and readiness (a hung plugin makes the server not ready)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
import trio.testing

from ksched import InMemoryCluster, Scheduler, SchedulerMetrics
from ksched.config import ExtenderConfig, parse_config
from ksched.extender import ExtenderClient, ExtenderError, node_json, pod_json
from ksched.extender._server import ExtenderServer
from ksched.framework import Status
from ksched.observability import Request, serve_http
from ksched.scheduler import plugin_registry
from ksched.testing import make_node, make_pod

pytestmark = pytest.mark.anyio

SERVED = parse_config(
    {
        "profiles": [
            {
                "plugins": {
                    "multiPoint": {
                        "enabled": [
                            {"name": "PrioritySort"},
                            {"name": "DefaultBinder"},
                            {"name": "NodeResourcesFit"},
                        ],
                        "disabled": [{"name": "*"}],
                    }
                }
            }
        ]
    }
)


@asynccontextmanager
async def served(server: ExtenderServer) -> AsyncIterator[str]:
    async with anyio.create_task_group() as tg:
        port = await tg.start(serve_http, server.handle, "127.0.0.1", 0)
        yield f"http://127.0.0.1:{port}"
        tg.cancel_scope.cancel()


def histogram_count(metrics: SchedulerMetrics, **labels: str) -> float:
    got = metrics.registry.get_sample_value(
        "scheduler_extender_request_duration_seconds_count", labels
    )
    return 0.0 if got is None else got


async def test_the_scheduler_times_each_extender_call_by_verb_and_result() -> None:
    server = ExtenderServer(SERVED, "/ext")
    metrics = SchedulerMetrics()
    cluster = InMemoryCluster()
    for name, cpu in (("small", "4"), ("large", "8")):
        await cluster.add_node(make_node(name).capacity(cpu=cpu, memory="8Gi", pods=10).obj())
    async with served(server) as base:
        url = f"{base}/ext"
        config = parse_config(
            {"extenders": [{"urlPrefix": url, "filterVerb": "filter",
                            "prioritizeVerb": "prioritize", "weight": 1}]}
        )  # fmt: skip
        async with Scheduler.open(config, cluster, metrics=metrics):
            for name in ("a", "b"):
                await cluster.add_pod(make_pod(name).req(cpu="1").obj())
                await cluster.wait_bound(f"default/{name}", timeout=10)
    # the extender is gone now: a connection error, counted as such
    gone = ExtenderClient.new(ExtenderConfig(url_prefix=url, filter_verb="filter"))
    gone.metrics = metrics
    pod = make_pod("c").req(cpu="1").obj()
    with pytest.raises(ExtenderError):
        await gone.filter(pod, pod_json(pod), [make_node("small").obj()])
    await gone.aclose()

    # both nodes fit each pod, so each attempt asks filter, then prioritize (with one
    # feasible node upstream skips scoring, extenders included)
    assert histogram_count(metrics, extender=url, verb="filter", result="success") == 2
    assert histogram_count(metrics, extender=url, verb="prioritize", result="success") == 2
    assert histogram_count(metrics, extender=url, verb="filter", result="error") == 1
    # the server counted what it answered
    served_total = server.metrics.registry.get_sample_value(
        "scheduler_extender_server_requests_total", {"verb": "filter", "code": "200"}
    )
    assert served_total == 2


async def test_a_timed_out_call_is_recorded_as_timeout() -> None:
    async def slow(request: Request) -> Any:
        await anyio.sleep(30)

    metrics = SchedulerMetrics()
    async with anyio.create_task_group() as tg:
        port = await tg.start(serve_http, slow, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{port}"
        client = ExtenderClient.new(
            ExtenderConfig(url_prefix=url, filter_verb="filter", http_timeout=0.2)
        )
        client.metrics = metrics
        pod = make_pod("p").obj()
        with pytest.raises(ExtenderError, match=r"timed out after 0\.2s"):
            await client.filter(pod, pod_json(pod), [make_node("n").obj()])
        await client.aclose()
        tg.cancel_scope.cancel()
    assert histogram_count(metrics, extender=url, verb="filter", result="timeout") == 1
    seconds = metrics.registry.get_sample_value(
        "scheduler_extender_request_duration_seconds_sum",
        {"extender": url, "verb": "filter", "result": "timeout"},
    )
    assert seconds is not None and 0.2 <= seconds < 5


async def test_the_server_answers_health_and_metrics_beside_the_verbs() -> None:
    server = ExtenderServer(SERVED, "/ext")
    async with served(server) as base, httpx.AsyncClient() as http:
        pod = pod_json(make_pod("p").req(cpu="1").obj())
        nodes = {"items": [node_json(make_node("n").capacity(cpu="2").obj())]}
        assert (await http.post(f"{base}/ext/filter", json={"Pod": pod, "Nodes": nodes})).is_success
        assert (await http.post(f"{base}/ext/filter", content=b"{bad")).status_code == 400
        assert (await http.post(f"{base}/ext/nope", json={})).status_code == 404
        for path in ("/healthz", "/livez", "/readyz"):
            answer = await http.get(f"{base}{path}")
            assert (answer.status_code, answer.text) == (200, "ok")
        text = (await http.get(f"{base}/metrics")).text
    assert 'scheduler_extender_server_requests_total{code="200",verb="filter"} 1.0' in text
    assert 'scheduler_extender_server_requests_total{code="400",verb="filter"} 1.0' in text
    assert 'scheduler_extender_server_requests_total{code="404",verb="other"} 1.0' in text
    assert 'scheduler_extender_server_request_duration_seconds_count{verb="filter"} 2.0' in text


class Hang:
    """A Filter plugin that never answers."""

    name = "Hang"

    async def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        await anyio.sleep_forever()
        return None


@pytest.mark.parametrize(
    "anyio_backend", [("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})]
)
async def test_a_hung_request_makes_the_server_not_ready() -> None:
    registry = plugin_registry()
    registry["Hang"] = lambda args, handle: Hang()
    config = parse_config(
        {"profiles": [{"plugins": {"multiPoint": {"enabled": [
            {"name": "PrioritySort"}, {"name": "DefaultBinder"}, {"name": "Hang"}],
            "disabled": [{"name": "*"}]}}}]}
    )  # fmt: skip
    server = ExtenderServer(config, "", registry=registry, stall_seconds=60)
    body = {
        "Pod": pod_json(make_pod("p").obj()),
        "Nodes": {"items": [node_json(make_node("n").obj())]},
    }
    request = Request("POST", "/filter", "", {}, json.dumps(body).encode())
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.handle, request)
        await anyio.sleep(59)
        assert (await server.handle(Request("GET", "/readyz", "", {}, b""))).status == 200
        await anyio.sleep(2)
        answer = await server.handle(Request("GET", "/readyz", "", {}, b""))
        assert answer.status == 500
        assert b"[-]requests failed: a filter request has been running for 61s" in answer.body
        # alive all the same: liveness does not depend on one request
        assert (await server.handle(Request("GET", "/livez", "", {}, b""))).status == 200
        tg.cancel_scope.cancel()
    assert (await server.handle(Request("GET", "/readyz", "", {}, b""))).status == 200

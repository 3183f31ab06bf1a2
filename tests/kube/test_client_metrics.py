"""client-go's rest_client_* metrics of KubeClient, against the real kube-apiserver
(restclient/metrics.go names and buckets; rest/request.go: one duration per request, a
count per try, sizes of the request and of the final body)."""

from __future__ import annotations

import json

import httpx
import pytest
from prometheus_client import CollectorRegistry

from ksched import NotFoundError, RestClientMetrics
from ksched.kube import KubeClient, TokenBucket

from ._plane import ControlPlane
from .conftest import http_client, unique

pytestmark = pytest.mark.anyio


def sample(metrics: RestClientMetrics, name: str, **labels: str) -> float:
    got = metrics.registry.get_sample_value(name, labels)
    return 0.0 if got is None else got


async def test_requests_by_code_method_and_host(plane: ControlPlane) -> None:
    metrics = RestClientMetrics()
    host = httpx.URL(plane.url).netloc.decode()
    async with http_client(plane.url) as http:
        client = KubeClient(http, TokenBucket(0, 0), metrics=metrics)
        name = unique("metrics")
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        await client.request("POST", "/api/v1/namespaces", body=body)
        got = await client.request("GET", f"/api/v1/namespaces/{name}")
        with pytest.raises(NotFoundError):
            await client.request("GET", f"/api/v1/namespaces/{name}/pods/ghost")
        events = client.stream(
            "/api/v1/namespaces", {"watch": "1", "fieldSelector": f"metadata.name={name}"},
            timeout=10,
        )  # fmt: skip
        async for event in events:
            assert event["object"]["metadata"]["name"] == name
            break
        await events.aclose()  # type: ignore[attr-defined]  # typed AsyncIterator, an async generator

    total = "rest_client_requests_total"
    assert sample(metrics, total, code="201", method="POST", host=host) == 1
    assert sample(metrics, total, code="200", method="GET", host=host) == 2  # the GET, the watch
    assert sample(metrics, total, code="404", method="GET", host=host) == 1
    # one duration per request (the watch has none), each a few ms on loopback
    duration = "rest_client_request_duration_seconds"
    assert sample(metrics, f"{duration}_count", verb="GET", host=host) == 2
    assert sample(metrics, f"{duration}_count", verb="POST", host=host) == 1
    assert 0 < sample(metrics, f"{duration}_sum", verb="POST", host=host) < 5
    # the limiter is asked before every request and watch
    limiter = "rest_client_rate_limiter_duration_seconds_count"
    assert sample(metrics, limiter, verb="GET", host=host) == 3
    # sizes: the POST's body exactly; the GET's answer is the namespace's JSON
    sent = len(json.dumps(body).encode())
    assert sample(metrics, "rest_client_request_size_bytes_sum", verb="POST", host=host) == sent
    assert sample(metrics, "rest_client_response_size_bytes_bucket", verb="GET", host=host,
                  le="64.0") == 0  # fmt: skip
    assert (
        sample(metrics, "rest_client_response_size_bytes_sum", verb="GET", host=host)
        >= len(json.dumps(got)) - 10
    )
    assert sample(metrics, "rest_client_request_retries_total", code="404", verb="GET",
                  host=host) == 0  # fmt: skip


async def test_one_registry_for_the_scheduler_and_the_client() -> None:
    from ksched import SchedulerMetrics

    registry = CollectorRegistry()
    SchedulerMetrics(registry)
    metrics = RestClientMetrics(registry)
    metrics.attempt("200", "GET", "h:1", 10)
    assert (
        registry.get_sample_value(
            "rest_client_requests_total", {"code": "200", "method": "GET", "host": "h:1"}
        )
        == 1
    )
    # upstream's buckets
    assert (
        registry.get_sample_value(
            "rest_client_request_duration_seconds_bucket",
            {"verb": "GET", "host": "h:1", "le": "60.0"},
        )
        is None
    )  # no request finished: no series yet
    metrics.done("GET", "h:1", 0.03, 100)
    le = [
        s.labels["le"]
        for m in registry.collect()
        if m.name == "rest_client_request_duration_seconds"
        for s in m.samples
        if s.name.endswith("_bucket")
    ]
    assert le == ["0.005", "0.025", "0.1", "0.25", "0.5", "1.0", "2.0", "4.0", "8.0", "15.0",
                  "30.0", "60.0", "+Inf"]  # fmt: skip

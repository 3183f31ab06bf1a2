"""KubeClient pieces without a server: the token bucket, retries, kubeconfig, in-cluster."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import trio.testing

from ksched import ConfigError, RestClientMetrics
from ksched.kube import ApiError, KubeClient, TokenBucket, in_cluster_config, load_kubeconfig

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> tuple[str, dict[str, Any]]:
    return ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})


async def test_token_bucket_spends_burst_then_paces_at_qps() -> None:
    bucket = TokenBucket(qps=2.0, burst=3)
    times = []
    for _ in range(6):
        await bucket.acquire()
        times.append(anyio.current_time())
    assert times == [0.0, 0.0, 0.0, 0.5, 1.0, 1.5]


async def test_token_bucket_refills_while_idle_up_to_burst() -> None:
    bucket = TokenBucket(qps=10.0, burst=2)
    for _ in range(2):
        await bucket.acquire()
    await anyio.sleep(10)
    start = anyio.current_time()
    for _ in range(3):
        await bucket.acquire()
    assert anyio.current_time() - start == pytest.approx(0.1)


def _client(handler: Any, **options: Any) -> KubeClient:
    http = httpx.AsyncClient(base_url="http://kube", transport=httpx.MockTransport(handler))
    return KubeClient(http, TokenBucket(0, 0), **options)


async def test_retries_429_and_5xx_honouring_retry_after() -> None:
    answers = [
        httpx.Response(429, headers={"Retry-After": "2"}),
        httpx.Response(503),
        httpx.Response(200, json={"ok": True}),
    ]
    seen: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(anyio.current_time())
        return answers.pop(0)

    assert await _client(handler).request("GET", "/x") == {"ok": True}
    assert seen[1] - seen[0] == 2.0  # Retry-After
    assert len(seen) == 3


async def test_retries_and_connection_errors_in_the_rest_client_metrics() -> None:
    """A try per count with its code (``<error>`` without an answer), a retry labelled with
    the code that caused it, one duration per request spanning its retries."""
    answers: list[httpx.Response | Exception] = [
        httpx.Response(503, headers={"Retry-After": "1"}),
        httpx.ConnectError("refused"),
        httpx.Response(200, json={"ok": True}),
    ]

    def handler(request: httpx.Request) -> httpx.Response:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    metrics = RestClientMetrics()
    client = _client(handler, metrics=metrics, backoff=0.5)
    assert await client.request("PUT", "/x", body={"a": 1}) == {"ok": True}

    def value(name: str, **labels: str) -> float | None:
        return metrics.registry.get_sample_value(name, {"host": "kube", **labels})

    total = "rest_client_requests_total"
    assert value(total, code="503", method="PUT") == 1
    assert value(total, code="<error>", method="PUT") == 1
    assert value(total, code="200", method="PUT") == 1
    retries = "rest_client_request_retries_total"
    assert value(retries, code="503", verb="PUT") == 1
    assert value(retries, code="<error>", verb="PUT") == 1
    assert value("rest_client_request_duration_seconds_count", verb="PUT") == 1
    # 1 s of Retry-After, then the doubled backoff (1 s) jittered by 0.5-1.5: on the loop's clock
    seconds = value("rest_client_request_duration_seconds_sum", verb="PUT")
    assert seconds is not None and 1.5 <= seconds <= 2.5
    assert value("rest_client_request_size_bytes_count", verb="PUT") == 3
    assert value("rest_client_response_size_bytes_sum", verb="PUT") == len(b'{"ok":true}')


async def test_a_paced_client_records_its_rate_limiter_waits() -> None:
    metrics = RestClientMetrics()
    http = httpx.AsyncClient(
        base_url="http://kube", transport=httpx.MockTransport(lambda r: httpx.Response(200))
    )
    client = KubeClient(http, TokenBucket(qps=2.0, burst=1), metrics=metrics)
    for _ in range(3):
        await client.request("GET", "/x")
    labels = {"verb": "GET", "host": "kube"}
    waits = "rest_client_rate_limiter_duration_seconds"
    assert metrics.registry.get_sample_value(f"{waits}_count", labels) == 3
    assert metrics.registry.get_sample_value(f"{waits}_sum", labels) == pytest.approx(1.0)
    # a request without a body: no response size observed
    assert metrics.registry.get_sample_value("rest_client_response_size_bytes_count", labels) == 3


async def test_gives_up_after_max_retries_and_names_the_status() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={"reason": "InternalError", "message": "etcd down"})

    with pytest.raises(ApiError, match="500 InternalError: etcd down") as info:
        await _client(handler, max_retries=2).request("GET", "/x")
    assert info.value.status == 500


async def test_client_errors_are_not_retried() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(404, json={"reason": "NotFound", "message": 'pods "p" not found'})

    with pytest.raises(LookupError):
        await _client(handler).request("GET", "/x")
    assert calls == 1


def _kubeconfig(tmp: Path, user: dict[str, Any], cluster: dict[str, Any]) -> Path:
    path = tmp / "config"
    path.write_text(
        json.dumps(
            {
                "clusters": [{"name": "c", "cluster": cluster}],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return path


def test_kubeconfig_token_file_and_a_bad_inline_ca(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("s3cret\n")
    ca = base64.b64encode(b"-----BEGIN CERTIFICATE-----\n").decode()
    path = _kubeconfig(
        tmp_path,
        {"tokenFile": "token"},
        {"server": "https://10.0.0.1:6443/", "certificate-authority-data": ca},
    )
    # The inline CA stays in memory (no file written for it); a broken one fails at load.
    with pytest.raises(ConfigError, match=r"https://10\.0\.0\.1:6443: cannot set up TLS"):
        load_kubeconfig(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config", "token"]


@pytest.mark.parametrize(
    ("cluster", "message"),
    [
        ({}, "clusters[c].server: expected an http(s) URL, got None"),
        ({"server": "10.0.0.1"}, "clusters[c].server: expected an http(s) URL, got '10.0.0.1'"),
    ],
)
def test_kubeconfig_errors_name_the_file_and_field(
    tmp_path: Path, cluster: dict[str, Any], message: str
) -> None:
    path = _kubeconfig(tmp_path, {}, cluster)
    with pytest.raises(ConfigError, match=re.escape(f"{path}: {message}")):
        load_kubeconfig(path)


def test_in_cluster_config_reads_the_service_account(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "token").write_text("tok\n")
    (tmp_path / "ca.crt").write_text("ca")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    config = in_cluster_config(tmp_path)
    assert (config.server, config.token, config.ca_file) == (
        "https://10.96.0.1:443",
        "tok",
        str(tmp_path / "ca.crt"),
    )


def test_in_cluster_config_outside_a_cluster_says_what_to_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match="pass --kubeconfig"):
        in_cluster_config()

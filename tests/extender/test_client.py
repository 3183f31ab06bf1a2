"""The extender client in the scheduling and binding cycles, against small extenders on
loopback (real HTTP): filter, prioritize, bind, errors, ignorable, timeouts, malformed
replies. # pkg/scheduler/extender.go, schedule_one.go (findNodesThatPassExtenders,
prioritizeNodes, bind)"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from ksched import InMemoryCluster, Scheduler
from ksched.config import parse_config
from ksched.observability import Request, Response, serve_http
from ksched.testing import make_node, make_pod

pytestmark = pytest.mark.anyio

Reply = Callable[[str, dict[str, Any]], Any]


@asynccontextmanager
async def extender(reply: Reply, calls: list[tuple[str, Any]]) -> AsyncIterator[str]:
    """An extender answering ``reply(verb, body)`` (a Response passes through)."""

    async def handle(request: Request) -> Response:
        body = json.loads(request.body)
        verb = request.path.rsplit("/", 1)[-1]
        calls.append((verb, body))
        out = reply(verb, body)
        if isinstance(out, Response):
            return out
        if isinstance(out, float):  # a slow extender
            await anyio.sleep(out)
            out = {}
        return Response(200, json.dumps(out).encode(), "application/json")

    async with anyio.create_task_group() as tg:
        port = await tg.start(serve_http, handle, "127.0.0.1", 0)
        yield f"http://127.0.0.1:{port}/ext"
        tg.cancel_scope.cancel()


def only(node: str) -> Reply:
    def reply(verb: str, body: dict[str, Any]) -> Any:
        names = body["NodeNames"] or [n["metadata"]["name"] for n in body["Nodes"]["items"]]
        failed = {n: f"extender says no to {n}" for n in names if n != node}
        kept = [n for n in names if n == node]
        if body["NodeNames"] is not None:
            return {"NodeNames": kept, "FailedNodes": failed}
        items = [n for n in body["Nodes"]["items"] if n["metadata"]["name"] in kept]
        return {"Nodes": {"items": items}, "FailedNodes": failed}

    return reply


def config(url: str, **fields: Any) -> Any:
    return parse_config({"extenders": [{"urlPrefix": url, **fields}]})


async def cluster_with_nodes() -> InMemoryCluster:
    cluster = InMemoryCluster()
    for name in ("n1", "n2", "n3"):
        await cluster.add_node(make_node(name).capacity(cpu="4", memory="8Gi", pods=10).obj())
    return cluster


async def wait_failed(cluster: InMemoryCluster, key: str) -> dict[str, str]:
    with anyio.fail_after(10):
        while key not in cluster.conditions:
            await anyio.sleep(0.01)
    return dict(cluster.conditions[key])


@pytest.mark.parametrize("cache_capable", [False, True], ids=["Nodes", "NodeNames"])
async def test_filter_keeps_only_the_node_the_extender_allows(cache_capable: bool) -> None:
    calls: list[tuple[str, Any]] = []
    async with extender(only("n2"), calls) as url:
        cluster = await cluster_with_nodes()
        cfg = config(url, filterVerb="filter", nodeCacheCapable=cache_capable)
        async with Scheduler.open(cfg, cluster):
            for i in range(3):
                await cluster.add_pod(make_pod(f"p{i}").req(cpu="100m").obj())
            for i in range(3):
                assert (
                    await cluster.wait_bound(f"default/p{i}", timeout=10)
                ).spec.node_name == "n2"
    verb, body = calls[0]
    assert verb == "filter" and body["Pod"]["metadata"]["name"].startswith("p")
    assert body["Pod"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "100m"
    assert (body["NodeNames"] is not None) is cache_capable


async def test_failed_nodes_join_the_fit_error_and_unresolvable_ones_skip_preemption() -> None:
    def reply(verb: str, body: dict[str, Any]) -> Any:
        return {
            "NodeNames": [],
            "FailedNodes": {"n1": "no GPUs left"},
            "FailedAndUnresolvableNodes": {"n2": "wrong rack", "n3": "wrong rack"},
        }

    async with extender(reply, []) as url:
        cluster = await cluster_with_nodes()
        async with Scheduler.open(config(url, filterVerb="f", nodeCacheCapable=True), cluster):
            await cluster.add_pod(make_pod("p").req(cpu="100m").obj())
            condition = await wait_failed(cluster, "default/p")
    assert condition["reason"] == "Unschedulable"
    assert condition["message"].startswith("0/3 nodes are available: 1 no GPUs left, 2 wrong rack.")


async def test_prioritize_scores_times_weight_scaled_to_the_node_score_range() -> None:
    def reply(verb: str, body: dict[str, Any]) -> Any:
        return [{"Host": n, "Score": 10 if n == "n3" else 0} for n in body["NodeNames"]]

    calls: list[tuple[str, Any]] = []
    async with extender(reply, calls) as url:
        cluster = await cluster_with_nodes()
        cfg = config(url, prioritizeVerb="prioritize", weight=5, nodeCacheCapable=True)
        async with Scheduler.open(cfg, cluster):
            await cluster.add_pod(make_pod("p").req(cpu="100m").obj())
            assert (await cluster.wait_bound("default/p", timeout=10)).spec.node_name == "n3"
    assert [verb for verb, _ in calls] == ["prioritize"]


@pytest.mark.parametrize(
    ("reply", "ignorable", "fails"),
    [
        (lambda v, b: Response(500, b"boom"), False, "code 500"),
        (lambda v, b: Response(200, b"{not json", "application/json"), False, "malformed reply"),
        (lambda v, b: {"Error": "the extender is unhappy"}, False, "the extender is unhappy"),
        (lambda v, b: 2.0, False, "timed out after 0.2s"),
        (lambda v, b: Response(500, b"boom"), True, None),
        (lambda v, b: 2.0, True, None),
    ],
    ids=["500", "malformed", "error-field", "slow", "500-ignorable", "slow-ignorable"],
)
async def test_filter_errors_fail_the_attempt_unless_ignorable(
    reply: Reply, ignorable: bool, fails: str | None
) -> None:
    async with extender(reply, []) as url:
        cluster = await cluster_with_nodes()
        cfg = config(url, filterVerb="f", ignorable=ignorable, httpTimeout="200ms")
        async with Scheduler.open(cfg, cluster):
            await cluster.add_pod(make_pod("p").req(cpu="100m").obj())
            if fails is None:
                await cluster.wait_bound("default/p", timeout=10)
                return
            condition = await wait_failed(cluster, "default/p")
    assert condition["reason"] == "SchedulerError"
    assert fails in condition["message"]


async def test_a_binder_extender_binds_the_pods_it_manages() -> None:
    calls: list[tuple[str, Any]] = []
    bound: dict[str, str] = {}
    cluster = await cluster_with_nodes()

    def reply(verb: str, body: dict[str, Any]) -> Any:
        bound[body["PodName"]] = body["Node"]
        return {"Error": ""}

    async with extender(reply, calls) as url:
        cfg = config(url, bindVerb="bind", managedResources=[{"name": "example.com/gpu"}])
        async with Scheduler.open(cfg, cluster):
            await cluster.add_pod(make_pod("plain").req(cpu="100m").obj())
            await cluster.wait_bound("default/plain", timeout=10)  # DefaultBinder
            gpu = make_pod("gpu").req(cpu="100m").obj()
            container = gpu.spec.containers[0]
            import attrs

            gpu = attrs.evolve(
                gpu,
                spec=attrs.evolve(
                    gpu.spec,
                    containers=(attrs.evolve(container, limits={"example.com/gpu": 1}),),
                ),
            )
            await cluster.add_pod(gpu)
            with anyio.fail_after(10):
                while "gpu" not in bound:
                    await anyio.sleep(0.01)
    assert [verb for verb, _ in calls] == ["bind"]
    assert calls[0][1]["PodNamespace"] == "default" and calls[0][1]["PodUID"]


@pytest.mark.parametrize(
    ("given", "want"), [(None, 5.0), ("0s", 5.0), ("1500ms", 1.5), ("2m", 120.0)]
)
def test_http_timeout_defaults_to_upstreams_five_seconds(given: str | None, want: float) -> None:
    """pkg/scheduler/extender.go: DefaultExtenderTimeout (5 s) when httpTimeout is 0."""
    fields = {} if given is None else {"httpTimeout": given}
    (ext,) = config("http://127.0.0.1:1", **fields).extenders
    assert ext.http_timeout == want

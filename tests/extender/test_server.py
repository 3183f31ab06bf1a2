"""``ksched extender serve``'s server, called by ksched's own client over loopback HTTP,
and its answers to bad requests."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest

from ksched import InMemoryCluster, Scheduler
from ksched.config import ExtenderConfig, parse_config
from ksched.extender import ExtenderClient, node_json, pod_json
from ksched.extender._server import ExtenderServer
from ksched.observability import serve_http
from ksched.testing import make_node, make_pod

pytestmark = pytest.mark.anyio

# A profile whose only Filter is NodeResourcesFit and whose only Score is MostAllocated.
CONFIG = parse_config(
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
                },
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {"scoringStrategy": {"type": "MostAllocated"}},
                    }
                ],
            }
        ]
    }
)

NODES = [
    make_node("small").capacity(cpu="1", memory="4Gi", pods=10).obj(),
    make_node("medium").capacity(cpu="2", memory="4Gi", pods=10).obj(),
    make_node("large").capacity(cpu="8", memory="4Gi", pods=10).obj(),
]


@asynccontextmanager
async def served() -> AsyncIterator[str]:
    server = ExtenderServer(CONFIG, "/ksched")
    async with anyio.create_task_group() as tg:
        port = await tg.start(serve_http, server.handle, "127.0.0.1", 0)
        yield f"http://127.0.0.1:{port}/ksched"
        tg.cancel_scope.cancel()


async def test_filter_and_prioritize_through_the_client() -> None:
    async with served() as url, httpx.AsyncClient() as http:
        ext = ExtenderClient(
            ExtenderConfig(url_prefix=url, filter_verb="filter", prioritize_verb="prioritize",
                           weight=1),
            http,
        )  # fmt: skip
        pod = make_pod("p").req(cpu="1500m", memory="1Gi").obj()
        result = await ext.filter(pod, pod_json(pod), NODES)
        assert result.node_names == ("medium", "large")
        # 1.5 cpu is more than small has at all: unresolvable, preemption cannot help
        assert result.failed == {}
        assert result.failed_and_unresolvable == {"small": "Insufficient cpu"}
        scores = await ext.prioritize(pod, pod_json(pod), NODES[1:])
        # MostAllocated: medium is the fuller (1.5/2 cpu, 1/4 memory) -> the higher score
        assert scores["medium"] > scores["large"] and 0 <= scores["large"] <= 10


async def test_node_names_refer_to_nodes_sent_before() -> None:
    async with served() as url, httpx.AsyncClient() as http:
        full = ExtenderClient(ExtenderConfig(url_prefix=url, filter_verb="filter"), http)
        names = ExtenderClient(
            ExtenderConfig(url_prefix=url, filter_verb="filter", node_cache_capable=True), http
        )
        pod = make_pod("p").req(cpu="1500m").obj()
        await full.filter(pod, pod_json(pod), NODES)
        result = await names.filter(pod, pod_json(pod), NODES)
        assert result.node_names == ("medium", "large")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "malformed request"),
        (json.dumps({"NodeNames": ["small"]}).encode(), "Pod: required"),
        (
            json.dumps({"Pod": pod_json(make_pod("p").obj()), "NodeNames": ["ghost"]}).encode(),
            "unknown node(s) ghost",
        ),
    ],
    ids=["malformed", "no-pod", "unknown-node"],
)
async def test_bad_requests_get_400_with_the_error(body: bytes, message: str) -> None:
    async with served() as url, httpx.AsyncClient() as http:
        response = await http.post(f"{url}/filter", content=body)
        assert response.status_code == 400
        assert message in response.json()["Error"]
        # the server goes on
        pod = pod_json(make_pod("q").req(cpu="1").obj())
        ok = await http.post(
            f"{url}/filter", json={"Pod": pod, "Nodes": {"items": [node_json(NODES[2])]}}
        )
        assert (
            ok.status_code == 200 and ok.json()["Nodes"]["items"][0]["metadata"]["name"] == "large"
        )


async def test_keys_are_matched_without_case_and_preempt_accepts_the_victims() -> None:
    async with served() as url, httpx.AsyncClient() as http:
        pod = pod_json(make_pod("p").req(cpu="1500m").obj())
        nodes = {"items": [node_json(n) for n in NODES]}
        reply = await http.post(f"{url}/filter", json={"pod": pod, "nodes": nodes})
        assert reply.json()["FailedAndUnresolvableNodes"] == {"small": "Insufficient cpu"}
        victims = {"NodeNameToVictims": {"large": {"Pods": [{"metadata": {"uid": "u1"}}],
                                                   "NumPDBViolations": 1}}}  # fmt: skip
        reply = await http.post(f"{url}/preempt", json=victims)
        assert reply.json() == {
            "NodeNameToMetaVictims": {"large": {"Pods": [{"UID": "u1"}], "NumPDBViolations": 1}}
        }


async def test_a_ksched_scheduler_uses_the_server_as_its_extender() -> None:
    """Two ksched: one serves NodeResourcesFit as an extender, the other (with no Filter
    plugin of its own for cpu) calls it and so never places a pod where it does not fit."""
    async with served() as url:
        config = parse_config(
            {
                "extenders": [{"urlPrefix": url, "filterVerb": "filter"}],
                "profiles": [
                    {"plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}}}
                ],
            }
        )
        cluster = InMemoryCluster()
        for node in NODES:
            await cluster.add_node(node)
        async with Scheduler.open(config, cluster):
            await cluster.add_pod(make_pod("big").req(cpu="6").obj())
            assert (await cluster.wait_bound("default/big", timeout=10)).spec.node_name == "large"

"""What an extender costs: round trips per second to ``ksched extender serve``'s server
(filter; preempt with 16 candidate nodes of 4 victims each), and pods per second of a
scheduler calling 0, 1 or 2 extenders (filter and prioritize).

Both ends run in this process on loopback (asyncio), each request a real HTTP exchange;
``--tls`` serves HTTPS with a certificate made at start (the default of ``ksched extender
serve``), the client trusting it.

    python benchmarks/extender_roundtrip.py --nodes 500 --pods 300 [--tls]
"""

from __future__ import annotations

import argparse
import json
import platform
import ssl
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

from ksched import InMemoryCluster, Scheduler
from ksched.config import ExtenderConfig, parse_config
from ksched.extender import ExtenderClient, pod_json
from ksched.extender._server import ExtenderServer
from ksched.extender.serving import EXTENDER_LIMITS
from ksched.framework import NodeInfo
from ksched.observability import Serving, ServingOptions, serve_http
from ksched.testing import FakeSnapshot, make_node, make_pod

HERE = Path(__file__).resolve().parent
PREEMPT_NODES, VICTIMS_PER_NODE = 16, 4
SERVED = parse_config(
    {
        "profiles": [
            {
                "plugins": {
                    "multiPoint": {
                        "enabled": [
                            {"name": "PrioritySort"},
                            {"name": "DefaultBinder"},
                            {"name": "TaintToleration"},
                        ],
                        "disabled": [{"name": "*"}],
                    }
                }
            }
        ]
    }
)


async def measure(nodes: int, pods: int, calls: int, tls: bool = False) -> dict[str, Any]:
    node_objs = [make_node(f"n{i}").capacity(cpu="32", memory="64Gi", pods=200).obj()
                 for i in range(nodes)]  # fmt: skip
    server = ExtenderServer(SERVED, "/x")
    out: dict[str, Any] = {}
    async with anyio.create_task_group() as tg:
        verify: Any = True
        if tls:
            serving = Serving.build(ServingOptions(limits=EXTENDER_LIMITS), "127.0.0.1")
            assert serving.certificate is not None
            verify = ssl.create_default_context(cadata=serving.certificate.ca_pem.decode())
            port = await tg.start(serving.serve, server.handle, "127.0.0.1", 0)
        else:
            port = await tg.start(
                lambda task_status: serve_http(
                    server.handle, "127.0.0.1", 0, limits=EXTENDER_LIMITS, task_status=task_status
                )
            )
        url = f"{'https' if tls else 'http'}://127.0.0.1:{port}/x"
        async with httpx.AsyncClient(verify=verify) as http:
            for cache in (False, True):
                client = ExtenderClient(
                    ExtenderConfig(url_prefix=url, filter_verb="filter",
                                   node_cache_capable=cache), http)  # fmt: skip
                pod = make_pod("p").req(cpu="100m").obj()
                raw = pod_json(pod)
                await client.filter(pod, raw, node_objs)
                start = time.perf_counter()
                for _ in range(calls):
                    await client.filter(pod, raw, node_objs)
                took = time.perf_counter() - start
                key = "node_names" if cache else "nodes"
                out[f"filter_round_trips_per_s_{key}"] = calls / took
            infos = {
                node.name: NodeInfo.of(
                    node,
                    [
                        make_pod(f"v{j}").uid(f"{node.name}-v{j}").node(node.name).priority(1).obj()
                        for j in range(VICTIMS_PER_NODE)
                    ],
                )
                for node in node_objs[:PREEMPT_NODES]
            }
            victims = {name: (tuple(p.pod for p in info.pods), 0) for name, info in infos.items()}
            lister = FakeSnapshot(infos.values())  # preemption reads the answer against it
            preemptor = make_pod("high").priority(100).req(cpu="100m").obj()
            for cache in (False, True):
                client = ExtenderClient(
                    ExtenderConfig(url_prefix=url, preempt_verb="preempt",
                                   node_cache_capable=cache), http)  # fmt: skip
                await client.process_preemption(preemptor, victims, lister)
                start = time.perf_counter()
                for _ in range(calls):
                    await client.process_preemption(preemptor, victims, lister)
                took = time.perf_counter() - start
                key = "meta_victims" if cache else "victims"
                out[f"preempt_round_trips_per_s_{key}"] = calls / took
                out[f"preempt_ms_per_call_{key}"] = 1000 * took / calls
        for count in (0, 1, 2):
            extenders = [
                {"urlPrefix": url, "filterVerb": "filter", "prioritizeVerb": "prioritize",
                 "weight": 1, "nodeCacheCapable": True,
                 **({"tlsConfig": {"insecure": True}} if tls else {})}
            ] * count  # fmt: skip
            cluster = InMemoryCluster()
            for node in node_objs:
                await cluster.add_node(node)
            async with Scheduler.open(parse_config({"extenders": extenders}), cluster):
                start = time.perf_counter()
                for i in range(pods):
                    await cluster.add_pod(make_pod(f"p{count}-{i}").req(cpu="100m").obj())
                for i in range(pods):
                    await cluster.wait_bound(f"default/p{count}-{i}", timeout=600)
                took = time.perf_counter() - start
            out[f"pods_per_s_with_{count}_extenders"] = pods / took
            out[f"ms_per_pod_with_{count}_extenders"] = 1000 * took / pods
        tg.cancel_scope.cancel()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=300)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--tls", action="store_true", help="serve HTTPS")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "extender.json")
    args = parser.parse_args()
    result = anyio.run(measure, args.nodes, args.pods, args.calls, args.tls)
    result.update(nodes=args.nodes, pods=args.pods, tls=args.tls, python=platform.python_version())
    print(json.dumps(result, indent=2))
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()

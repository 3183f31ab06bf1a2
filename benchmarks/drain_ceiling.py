"""The ceiling of a drain: binds per second a bare client gets from this apiserver.

No scheduling: pod ``pod-i`` of namespace ``bench`` is bound to ``node-(i mod nodes)``
through ksched's own HTTP path (KubeClient over the pooled HTTP/1.1 keep-alive transport,
``--in-flight`` requests at once, no rate limit), as fast as the apiserver answers. Run by
benchmarks/kube_backlog.py as the ``ceiling`` scheduler, as its own process like the
schedulers it is compared with.

    python benchmarks/drain_ceiling.py --kubeconfig K --nodes 500 --pods 3000
"""

from __future__ import annotations

import argparse

import anyio

from ksched.kube import KubeClient, TokenBucket, load_kubeconfig
from ksched.kube._run import BINDING_IN_FLIGHT

NS = "bench"


async def drain(kubeconfig: str, nodes: int, pods: int, in_flight: int) -> None:
    config = load_kubeconfig(kubeconfig)
    async with config.http_client() as http:
        client = KubeClient(http, TokenBucket(0, 0), max_in_flight=in_flight)
        next_pod = iter(range(pods))

        async def binder() -> None:
            for i in next_pod:
                name, node = f"pod-{i}", f"node-{i % nodes}"
                body = {
                    "apiVersion": "v1",
                    "kind": "Binding",
                    "metadata": {"name": name, "namespace": NS},
                    "target": {"apiVersion": "v1", "kind": "Node", "name": node},
                }
                path = f"/api/v1/namespaces/{NS}/pods/{name}/binding"
                await client.request("POST", path, body=body)

        async with anyio.create_task_group() as tg:
            for _ in range(in_flight):
                tg.start_soon(binder)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--nodes", type=int, required=True)
    parser.add_argument("--pods", type=int, required=True)
    parser.add_argument(
        "--in-flight",
        type=int,
        default=BINDING_IN_FLIGHT,
        help=f"default: ksched run's binding client's {BINDING_IN_FLIGHT}",
    )
    args = parser.parse_args()
    anyio.run(drain, args.kubeconfig, args.nodes, args.pods, args.in_flight)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

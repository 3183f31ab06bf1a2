"""The real Go kube-scheduler (v1.24, ../shared/kube) calls ``ksched extender serve``'s
server through a real kube-apiserver: a pod whose extender filter allows one node lands on
that node, and the extender's prioritize answers are read. # pkg/scheduler/extender.go"""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from ksched.config import parse_config
from ksched.extender._server import ExtenderServer
from ksched.extender.serving import extender_serving
from ksched.framework import Code, CycleState, NodeInfo, Status
from ksched.observability import Request, Response, ServingOptions

from ._plane import ControlPlane, assets_dir, free_port
from .conftest import Api, unique

pytestmark = pytest.mark.anyio

ALLOWED = "extender-ok"


class OnlyLabelled:
    """A Filter plugin served to the Go scheduler: nodes labelled extender-ok=yes only."""

    name = "OnlyLabelled"

    @classmethod
    def new(cls, args: Any, handle: Any) -> OnlyLabelled:
        return cls()

    def filter(self, state: CycleState, pod: Any, node_info: NodeInfo) -> Status | None:
        if node_info.node.labels.get(ALLOWED) == "yes":
            return None
        return Status(Code.UNSCHEDULABLE, ("node(s) not labelled extender-ok=yes",))


def _go_config(path: Path, kubeconfig: Path, port: int, ca_pem: bytes) -> Path:
    path.write_text(
        f"""apiVersion: kubescheduler.config.k8s.io/v1beta3
kind: KubeSchedulerConfiguration
leaderElection: {{leaderElect: false}}
clientConnection: {{kubeconfig: {kubeconfig}, qps: 100, burst: 100}}
extenders:
- urlPrefix: https://127.0.0.1:{port}/ksched
  tlsConfig: {{caData: {base64.b64encode(ca_pem).decode()}}}
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 1
  nodeCacheCapable: false
  httpTimeout: 10s
"""
    )
    return path


async def test_the_go_scheduler_places_the_pod_where_the_extender_allows(
    api: Api, plane: ControlPlane, tmp_path: Path
) -> None:
    assets = assets_dir()
    assert assets is not None
    config = parse_config(
        {
            "profiles": [
                {
                    "plugins": {
                        "multiPoint": {
                            "enabled": [
                                {"name": "PrioritySort"},
                                {"name": "DefaultBinder"},
                                {"name": "OnlyLabelled"},
                            ],
                            "disabled": [{"name": "*"}],
                        }
                    }
                }
            ]
        }
    )
    server = ExtenderServer(config, "/ksched", registry={"OnlyLabelled": OnlyLabelled.new})
    nodes = [unique(f"{api.ns}-n") for _ in range(3)]
    for name in nodes:
        await api.create_node(name)
    allowed = nodes[1]
    await api.client.request(
        "PATCH",
        f"/api/v1/nodes/{allowed}",
        body={"metadata": {"labels": {ALLOWED: "yes"}}},
        content_type="application/merge-patch+json",
    )
    verbs: list[str] = []

    async def handle(request: Request) -> Response:
        verbs.append(request.path.rsplit("/", 1)[-1])
        return await server.handle(request)

    # HTTPS with the certificate made at start; the Go scheduler trusts its CA (caData)
    serving = extender_serving(ServingOptions(), "127.0.0.1", server, credentials=False)
    assert serving.certificate is not None
    async with anyio.create_task_group() as tg:
        port = await tg.start(serving.serve, handle, "127.0.0.1", 0)
        kubeconfig = plane.kubeconfig(tmp_path / "kubeconfig")
        go_config = _go_config(
            tmp_path / "scheduler.yaml", kubeconfig, port, serving.certificate.ca_pem
        )
        log = open(tmp_path / "kube-scheduler.log", "wb")  # noqa: SIM115  # the process owns it
        proc = subprocess.Popen(
            [
                str(assets / "kube-scheduler"),
                f"--config={go_config}",
                f"--secure-port={free_port()}",
                "--bind-address=127.0.0.1",
                f"--cert-dir={tmp_path / 'certs'}",
            ],
            stdout=log,
            stderr=log,
        )
        try:
            for i in range(3):
                await api.create_pod(f"p{i}", scheduler="default-scheduler")
            with anyio.fail_after(45):
                while True:
                    placed = [(await api.pod(f"p{i}"))["spec"].get("nodeName") for i in range(3)]
                    if all(placed):
                        break
                    await anyio.sleep(0.2)
            assert placed == [allowed] * 3
            assert verbs.count("filter") >= 3  # the Go scheduler asked the extender
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
            log.close()
            tg.cancel_scope.cancel()

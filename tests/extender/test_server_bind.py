"""``ksched extender serve``'s bind verb: ExtenderBindingArgs in, the profile's Bind
plugins run, ExtenderBindingResult out; called by ksched's own client over loopback HTTP.
# pkg/scheduler/extender.go (HTTPExtender.Bind), staging/src/k8s.io/kube-scheduler/
# extender/v1/types.go (ExtenderBindingArgs, ExtenderBindingResult)"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import pytest

from ksched import InMemoryCluster, Pod, Scheduler
from ksched.cli import main
from ksched.config import ExtenderConfig, SchedulerConfig, parse_config
from ksched.extender import ExtenderClient, ExtenderError
from ksched.extender._server import ExtenderServer, ServedCluster
from ksched.framework import CycleState, PluginFactory, Status
from ksched.observability import Request, Response, serve_http
from ksched.testing import FakeBind, make_node, make_pod

pytestmark = pytest.mark.anyio


def profile(*plugins: str) -> SchedulerConfig:
    enabled = [{"name": "PrioritySort"}, *({"name": p} for p in plugins)]
    multi = {"enabled": enabled, "disabled": [{"name": "*"}]}
    return parse_config({"profiles": [{"plugins": {"multiPoint": multi}}]})


SKIPS = FakeBind("Skips")
"""A Bind plugin that leaves the pod to the next one."""
RAISES = FakeBind("Raises", raises=RuntimeError("the bind plugin broke"))
"""A Bind plugin with a bug."""
REGISTRY: dict[str, PluginFactory] = {"Skips": SKIPS.new, "Raises": RAISES.new}


@asynccontextmanager
async def served(server: ExtenderServer, paths: list[str] | None = None) -> AsyncIterator[str]:
    """The server on 127.0.0.1; the paths it is asked go into ``paths``."""

    async def handle(request: Request) -> Response:
        if paths is not None:
            paths.append(request.path)
        return await server.handle(request)

    async with anyio.create_task_group() as tg:
        port = await tg.start(serve_http, handle, "127.0.0.1", 0)
        yield f"http://127.0.0.1:{port}/ksched"
        tg.cancel_scope.cancel()


async def test_a_ksched_scheduler_delegates_its_binds_to_the_server() -> None:
    """A scheduler whose extender has bindVerb: the served DefaultBinder binds the pod in
    the cluster the server binds in (here the scheduler's own)."""
    cluster = InMemoryCluster()
    await cluster.add_node(make_node("n1").capacity(cpu="2", memory="2Gi", pods=10).obj())
    server = ExtenderServer(profile("DefaultBinder"), "/ksched")
    assert isinstance(server.cluster, ServedCluster)
    server.cluster.binder = cluster
    binds: list[str] = []
    async with served(server, binds) as url:
        cfg = parse_config({"extenders": [{"urlPrefix": url, "bindVerb": "bind"}]})
        async with Scheduler.open(cfg, cluster):
            await cluster.add_pod(make_pod("p").req(cpu="1").obj())
            bound = await cluster.wait_bound("default/p", timeout=10)
    assert bound.spec.node_name == "n1"
    assert binds == ["/ksched/bind"]


@pytest.mark.parametrize(
    ("plugins", "error"),
    [
        (
            ("DefaultBinder",),
            'running "DefaultBinder" Bind plugin: KschedError: no cluster to bind pod '
            "default/p in: serve the extender with --kubeconfig",
        ),
        (("Skips",), "pod default/p: no bind plugin bound the pod"),
        (("Raises",), 'running "Raises" Bind plugin: RuntimeError: the bind plugin broke'),
    ],
    ids=["no-cluster", "all-skip", "plugin-raises"],
)
async def test_a_bind_that_cannot_happen_answers_its_error(
    plugins: tuple[str, ...], error: str
) -> None:
    server = ExtenderServer(profile(*plugins), "/ksched", registry=REGISTRY)
    async with served(server) as url, httpx.AsyncClient() as http:
        ext = ExtenderClient(ExtenderConfig(url_prefix=url, bind_verb="bind"), http)
        pod = make_pod("p").obj()
        with pytest.raises(ExtenderError) as info:
            await ext.bind(pod, "n1")
        assert str(info.value) == f"extender {url}: bind: {error}"
        # the server goes on: the same request, answered the same way
        raw = await http.post(
            f"{url}/bind",
            json={"PodName": "p", "PodNamespace": "default", "PodUID": pod.uid, "Node": "n1"},
        )
        assert raw.status_code == 200 and raw.json() == {"Error": error}


async def test_the_bind_plugins_see_the_pod_the_request_names() -> None:
    seen: list[tuple[str, str, str, str]] = []

    class Records:
        name = "Records"

        def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            seen.append((pod.namespace, pod.name, pod.uid, node_name))
            return None

    registry = {"Records": lambda args, handle: Records()}
    server = ExtenderServer(profile("Records"), "/ksched", registry=registry)
    async with served(server) as url, httpx.AsyncClient() as http:
        body = {"podname": "web-0", "PODNAMESPACE": "shop", "PodUID": "u-1", "Node": "n2"}
        reply = await http.post(f"{url}/bind", json=body)  # keys match without case
    assert reply.status_code == 200 and reply.json() == {"Error": ""}
    assert seen == [("shop", "web-0", "u-1", "n2")]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "malformed request"),
        (b"[]", "request: expected an object"),
        (b'{"PodNamespace": "default", "PodUID": "u", "Node": "n1"}', "PodName: required"),
        (b'{"PodName": "p", "PodNamespace": "default", "PodUID": "u"}', "Node: required"),
        (b'{"PodName": 7, "PodNamespace": "default", "Node": "n1"}', "PodName: required"),
    ],
    ids=["malformed", "not-an-object", "no-pod-name", "no-node", "name-not-a-string"],
)
async def test_bad_bind_requests_get_400_with_the_error(body: bytes, message: str) -> None:
    server = ExtenderServer(profile("DefaultBinder"), "/ksched")
    async with served(server) as url, httpx.AsyncClient() as http:
        response = await http.post(f"{url}/bind", content=body)
    assert response.status_code == 400
    assert message in response.json()["Error"]


def test_an_unreadable_kubeconfig_stops_serve_with_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "scheduler.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )
    missing = tmp_path / "no-such-kubeconfig"
    argv = ["extender", "serve", f"--config={config}", f"--kubeconfig={missing}"]
    assert main(argv) == 2
    assert f"{missing}: cannot read kubeconfig" in capsys.readouterr().err

"""A 409 on bind (another binder won the pod) is reported as kube-scheduler reports it:
the "Error scheduling pod; retrying" log line, a FailedScheduling Event whose note is
"binding rejected: running Bind plugin "DefaultBinder": <the API server's message>", and
scheduler_schedule_attempts_total{result="error"}."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from ksched import Scheduler, load_config
from ksched.api import Pod
from ksched.framework import CycleState, Handle
from ksched.kube import KubeClient, KubeCluster, TokenBucket
from ksched.observability import SchedulerMetrics

from ._plane import ControlPlane
from ._support import wait_until
from .conftest import Api, http_client

pytestmark = pytest.mark.anyio

_CONFIG = """
profiles:
- schedulerName: {name}
  plugins:
    preBind:
      enabled: [{{name: RivalBinder}}]
"""


class RivalBinder:
    """An async PreBind that lets another client bind ``contested`` to ``elsewhere``
    first, and waits until the watch shows it: ksched's own bind then meets a 409."""

    name = "RivalBinder"

    def __init__(self, api: Api, cluster: KubeCluster, contested: str, elsewhere: str) -> None:
        self.api, self.cluster = api, cluster
        self.contested, self.elsewhere = contested, elsewhere

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        if pod.name != self.contested:
            return
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace},
            "target": {"apiVersion": "v1", "kind": "Node", "name": self.elsewhere},
        }
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding"
        await self.api.client.request("POST", path, body=body)
        await wait_until(lambda: self._seen_bound(pod.key), 10)

    def _seen_bound(self, key: str) -> bool:
        current = self.cluster.get_pod(key)
        return current is not None and bool(current.spec.node_name)


async def test_a_conflict_on_bind_is_logged_evented_and_counted(
    plane: ControlPlane, api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    name = f"ksched-{api.ns}"
    await api.create_node(f"{api.ns}-a", cpu="2")
    await api.create_node(f"{api.ns}-b", cpu="2")
    # Only node a fits the contested pod for ksched; the rival binds it to node b.
    await api.create_pod("contested", scheduler=name, cpu="1500m")
    await api.create_node(f"{api.ns}-c", cpu="1")
    metrics = SchedulerMetrics()
    async with http_client(plane.url) as http:
        client = KubeClient(http, TokenBucket(0, 0))
        async with KubeCluster.open(client, scheduler_names=(name,)) as cluster:
            await cluster.wait_synced()
            rival = RivalBinder(api, cluster, "contested", f"{api.ns}-c")

            def factory(args: Any, handle: Handle) -> RivalBinder:
                return rival

            with caplog.at_level(logging.INFO, logger="ksched"):
                async with Scheduler.open(
                    load_config(_CONFIG.format(name=name)),
                    cluster=cluster,
                    registry={"RivalBinder": factory},
                    metrics=metrics,
                ):
                    await wait_until(lambda: _errors(metrics, name) == 1, 20)
                    await api.create_pod("after", scheduler=name, cpu="100m")
                    await wait_until(lambda: _scheduled(metrics, name) == 1, 20)
                    await anyio.sleep(0.5)  # no second attempt at the contested pod
                    assert _errors(metrics, name) == 1
            events = await _wait_events(api, "contested")
    contested = await api.pod("contested")
    assert contested["spec"]["nodeName"] == f"{api.ns}-c"  # the rival's binding stands
    upstream = (
        'binding rejected: running Bind plugin "DefaultBinder": Operation cannot be '
        f'fulfilled on pods/binding "contested": pod contested is already assigned to node '
        f'"{api.ns}-c"'
    )
    failed = [e for e in events if e["reason"] == "FailedScheduling"]
    assert [(e["type"], e["action"], e["note"]) for e in failed] == [
        ("Warning", "Scheduling", upstream)
    ]
    lines = [r for r in caplog.records if r.getMessage() == "Error scheduling pod; retrying"]
    assert len(lines) == 1 and lines[0].levelno == logging.ERROR
    assert getattr(lines[0], "kv", {}).get("err") == upstream


def _errors(metrics: SchedulerMetrics, profile: str) -> float:
    return _attempts(metrics, profile, "error")


def _scheduled(metrics: SchedulerMetrics, profile: str) -> float:
    return _attempts(metrics, profile, "scheduled")


def _attempts(metrics: SchedulerMetrics, profile: str, result: str) -> float:
    value = metrics.registry.get_sample_value(
        "scheduler_schedule_attempts_total", {"profile": profile, "result": result}
    )
    return value or 0.0


async def _wait_events(api: Api, pod: str) -> list[dict[str, Any]]:
    async def some() -> bool:
        return any(e["regarding"]["name"] == pod for e in await api.events())

    await wait_until(some, 10)
    return [e for e in await api.events() if e["regarding"]["name"] == pod]

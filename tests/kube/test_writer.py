"""The status and Event writer: coalescing, series aggregation, the bounded queue.

# client-go/tools/events/event_broadcaster.go (series, 6 min finish, 1000 queued)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anyio
import attrs
import httpx
import pytest
import trio.testing

from ksched import Pod
from ksched.kube import KubeClient, TokenBucket, Writer
from ksched.testing import make_pod

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> tuple[str, dict[str, Any]]:
    return ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})


@attrs.define
class Server:
    requests: list[tuple[str, str, Any]] = attrs.field(factory=list)
    pods: dict[str, Pod] = attrs.field(factory=dict)
    conditions: dict[str, Mapping[str, Any]] = attrs.field(factory=dict)

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        self.requests.append((request.method, request.url.path, body))
        return httpx.Response(201 if request.method == "POST" else 200, json=body or {})

    def writer(self, **options: Any) -> Writer:
        http = httpx.AsyncClient(base_url="http://k", transport=httpx.MockTransport(self.handle))
        client = KubeClient(http, TokenBucket(0, 0))
        return Writer(
            client,
            client,
            "host",
            lambda key: (self.pods.get(key), self.conditions.get(key)),
            **options,
        )


def _pod(name: str = "p") -> Pod:
    pod = make_pod(name).obj()
    return attrs.evolve(pod, metadata=attrs.evolve(pod.metadata, uid=f"uid-{name}"))


async def test_a_storm_of_failures_is_one_event_and_a_series() -> None:
    server = Server()
    writer = server.writer()
    pod = _pod()
    async with anyio.create_task_group() as tg:
        await tg.start(writer.serve)
        for i in range(50):
            writer.record_event(
                pod,
                None,
                "Warning",
                "FailedScheduling",
                "Scheduling",
                f"0/3 nodes are available (attempt {i})",
                controller="ksched",
            )
            await anyio.sleep(1)
        posts = [r for r in server.requests if r[0] == "POST"]
        patches = [r for r in server.requests if r[0] == "PATCH"]
        assert len(posts) == 1
        assert posts[0][2]["note"] == "0/3 nodes are available (attempt 0)"
        assert posts[0][2]["reportingController"] == "ksched"
        assert posts[0][2]["reportingInstance"] == "ksched-host"
        assert posts[0][2]["regarding"]["uid"] == "uid-p"
        assert [p[2]["series"]["count"] for p in patches] == [2]
        # The sweep runs every finishTime (6 min) and ends series unobserved that long.
        await anyio.sleep(6 * 60 - 50)  # t=360: last seen 311 s ago, still open
        assert len([r for r in server.requests if r[0] == "PATCH"]) == 1
        await anyio.sleep(6 * 60 + 1)  # the sweep at t=720 finished it with the final count
        patches = [r for r in server.requests if r[0] == "PATCH"]
        assert [p[2]["series"]["count"] for p in patches] == [2, 50]
        assert writer._series == {}
        tg.cancel_scope.cancel()


async def test_events_queue_is_bounded_and_drops_when_full() -> None:
    server = Server()
    writer = server.writer(max_queued_events=3)
    for i in range(5):  # the writer is not running: nothing drains the queue
        writer.record_event(
            _pod(f"p{i}"), None, "Normal", "Scheduled", "Binding", "n", controller="ksched"
        )
    assert writer.dropped_events == 2
    await writer.flush_once()
    assert len(server.requests) == 3


async def test_note_is_cut_to_1kb() -> None:
    writer = Server().writer()
    writer.record_event(
        _pod(), None, "Warning", "FailedScheduling", "Scheduling", "x" * 3000, controller="ksched"
    )
    series = next(iter(writer._series.values()))
    assert len(series.event["note"]) == 1024
    assert series.event["note"].endswith("x ...")


async def test_status_writes_coalesce_per_pod_and_skip_what_is_already_there() -> None:
    server = Server()
    pod = _pod()
    server.pods[pod.key] = pod
    writer = server.writer()
    first = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "a"}
    latest = {**first, "message": "b"}
    writer.update_pod_status(pod, None, first)
    writer.update_pod_status(pod, "n1", latest)
    await writer.flush_once()
    assert len(server.requests) == 1
    method, path, body = server.requests[0]
    assert (method, path) == ("PATCH", "/api/v1/namespaces/default/pods/p/status")
    assert body["status"]["nominatedNodeName"] == "n1"
    assert body["status"]["conditions"][0]["message"] == "b"
    # The watch now shows what was written: the same write again is skipped.
    server.conditions[pod.key] = latest
    server.pods[pod.key] = attrs.evolve(
        pod, status=attrs.evolve(pod.status, nominated_node_name="n1")
    )
    writer.update_pod_status(pod, "n1", latest)
    await writer.flush_once()
    assert len(server.requests) == 1


async def test_no_status_write_for_a_pod_bound_or_gone_meanwhile() -> None:
    server = Server()
    pod = _pod()
    writer = server.writer()
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "a"}
    writer.update_pod_status(pod, None, cond)  # gone from the watch cache
    await writer.flush_once()
    server.pods[pod.key] = attrs.evolve(pod, spec=attrs.evolve(pod.spec, node_name="n1"))
    writer.update_pod_status(pod, None, cond)  # bound meanwhile
    await writer.flush_once()
    assert server.requests == []

"""Reflector event handling, the bind conflict rule and health answers, without a server.

# client-go/tools/cache/reflector.go (bookmarks, 410 -> relist, Replace)
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
import trio.testing

from ksched import ClusterStore
from ksched.kube import (
    RESOURCES,
    ConflictError,
    HealthServer,
    KubeClient,
    KubeCluster,
    NotLeaderError,
    Reflector,
    TokenBucket,
)
from ksched.testing import make_pod

pytestmark = pytest.mark.anyio

POD = next(r for r in RESOURCES if r.kind == "Pod")


def _raw_pod(name: str, rv: str, node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if node:
        spec["nodeName"] = node
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"u-{name}", "resourceVersion": rv},
        "spec": spec,
    }


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def apply(self, kind: str, obj: Any, raw: Any) -> None:
        self.calls.append(("apply", obj.name))

    def remove(self, kind: str, key: str) -> None:
        self.calls.append(("remove", key))


def _reflector(pages: list[dict[str, Any]]) -> tuple[Reflector, Recorder, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=pages.pop(0))

    http = httpx.AsyncClient(base_url="http://k", transport=httpx.MockTransport(handler))
    rec = Recorder()
    return Reflector(KubeClient(http, TokenBucket(0, 0)), POD, rec.apply, rec.remove), rec, seen


async def test_list_pages_and_relist_replaces() -> None:
    pages = [
        {"items": [_raw_pod("a", "1")], "metadata": {"continue": "tok"}},
        {"items": [_raw_pod("b", "2")], "metadata": {"resourceVersion": "5"}},
        {"items": [_raw_pod("b", "2"), _raw_pod("c", "7")], "metadata": {"resourceVersion": "9"}},
    ]
    reflector, rec, seen = _reflector(pages)
    await reflector.list()
    assert rec.calls == [("apply", "a"), ("apply", "b")]
    assert reflector.resource_version == "5"
    assert seen[0].url.params["fieldSelector"] == "status.phase!=Succeeded,status.phase!=Failed"
    assert seen[1].url.params["continue"] == "tok"
    rec.calls.clear()
    await reflector.list()  # a relist: a vanished, b unchanged, c new
    assert rec.calls == [("remove", "ns/a"), ("apply", "c")]
    assert reflector.resource_version == "9"


async def test_watch_events_bookmarks_and_410() -> None:
    reflector, rec, _ = _reflector([])
    reflector._handle({"type": "ADDED", "object": _raw_pod("a", "10")})
    reflector._handle({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "15"}}})
    assert reflector.resource_version == "15"
    reflector._handle({"type": "MODIFIED", "object": _raw_pod("a", "16", node="n1")})
    reflector._handle({"type": "DELETED", "object": _raw_pod("a", "17", node="n1")})
    assert rec.calls == [("apply", "a"), ("apply", "a"), ("remove", "ns/a")]
    with pytest.raises(Exception, match="too old"):
        reflector._handle(
            {
                "type": "ERROR",
                "object": {
                    "code": 410,
                    "reason": "Expired",
                    "message": "too old resource version: 5 (10)",
                },
            }
        )


async def test_a_malformed_object_is_skipped_not_fatal() -> None:
    reflector, rec, _ = _reflector([])
    bad = _raw_pod("bad", "3")
    bad["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "lots"}}
    reflector._handle({"type": "ADDED", "object": bad})
    reflector._handle({"type": "ADDED", "object": _raw_pod("good", "4")})
    assert rec.calls == [("apply", "good")]


async def test_an_object_the_api_server_should_have_refused_is_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Validation as kube-apiserver's guards the watch input too: requests above limits
    are logged and skipped; a field ksched does not know is not an error here."""
    reflector, rec, _ = _reflector([])
    over = _raw_pod("over", "3")
    over["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "2"},
        "limits": {"cpu": "1"},
    }
    newer = _raw_pod("newer", "4")
    newer["spec"]["someFutureField"] = True
    with caplog.at_level("WARNING", logger="ksched.kube"):
        reflector._handle({"type": "ADDED", "object": over})
        reflector._handle({"type": "MODIFIED", "object": over})
        reflector._handle({"type": "ADDED", "object": newer})
    assert rec.calls == [("apply", "newer")]
    skipped = [r for r in caplog.records if "skipping Pod ns/over" in r.getMessage()]
    assert (
        len(skipped) == 1 and "must be less than or equal to cpu limit" in skipped[0].getMessage()
    )


def _store(answers: dict[tuple[str, str], httpx.Response]) -> KubeCluster:
    def handler(request: httpx.Request) -> httpx.Response:
        return answers[(request.method, request.url.path)]

    http = httpx.AsyncClient(base_url="http://k", transport=httpx.MockTransport(handler))
    return KubeCluster(KubeClient(http, TokenBucket(0, 0)), KubeClient(http, TokenBucket(0, 0)))


@pytest.mark.parametrize(("bound_to", "ok"), [("n1", True), ("n2", False)])
async def test_bind_conflict_is_success_only_if_the_pod_is_bound_to_our_node(
    bound_to: str, ok: bool
) -> None:
    pod = make_pod("p").obj()
    path = "/api/v1/namespaces/default/pods/p"
    current = {"metadata": {"uid": pod.metadata.uid}, "spec": {"nodeName": bound_to}}
    store = _store(
        {
            ("POST", f"{path}/binding"): httpx.Response(409, json={"reason": "Conflict"}),
            ("GET", path): httpx.Response(200, content=json.dumps(current).encode()),
        }
    )
    if ok:
        await store.bind(pod, "n1")
        assert store.binds == 1
    else:
        with pytest.raises(ConflictError):
            await store.bind(pod, "n1")


async def test_bind_missing_pod_is_not_found() -> None:
    store = _store(
        {
            ("POST", "/api/v1/namespaces/default/pods/p/binding"): httpx.Response(404, json={}),
        }
    )
    with pytest.raises(LookupError):
        await store.bind(make_pod("p").obj(), "n1")


async def test_health_endpoints() -> None:
    synced = False
    health = HealthServer(
        live={"ping": lambda: None},
        ready={"sched-handler-sync": lambda: None if synced else "caches not synced"},
    )
    async with anyio.create_task_group() as tg:
        port = await tg.start(health.serve, "127.0.0.1", 0)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            assert (await http.get("/healthz")).text == "ok"
            ready = await http.get("/readyz")
            assert ready.status_code == 500
            assert "[-]sched-handler-sync failed: caches not synced" in ready.text
            synced = True
            assert (await http.get("/readyz")).status_code == 200
            assert (await http.get("/nope")).status_code == 404
        tg.cancel_scope.cancel()


@pytest.mark.parametrize(
    "anyio_backend", [("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})]
)
async def test_watches_closing_at_once_back_off_instead_of_spinning() -> None:
    watches = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal watches
        if request.url.params.get("watch"):
            watches += 1
            return httpx.Response(200, content=b"")
        return httpx.Response(200, json={"items": [], "metadata": {"resourceVersion": "3"}})

    http = httpx.AsyncClient(base_url="http://k", transport=httpx.MockTransport(handler))
    rec = Recorder()
    reflector = Reflector(KubeClient(http, TokenBucket(0, 0)), POD, rec.apply, rec.remove)
    with anyio.move_on_after(60):
        await reflector.run()
    # 0.8 s doubling (jittered up to 2x) to 30 s: a handful of attempts in a minute.
    assert 3 <= watches <= 7
    assert reflector.lists == 1


@pytest.mark.parametrize(
    "anyio_backend", [("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})]
)
async def test_leadership_is_checked_after_the_rate_limit_wait_right_before_the_post() -> None:
    posts: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        posts.append(request.url.path)
        return httpx.Response(201, json={})

    http = httpx.AsyncClient(base_url="http://k", transport=httpx.MockTransport(handler))
    leading = True
    client = KubeClient(http, TokenBucket(qps=1.0, burst=1))
    store = KubeCluster(client, client, may_write=lambda: leading)
    await store.bind(make_pod("a").obj(), "n1")  # spends the only token
    async with anyio.create_task_group() as tg:

        async def lose_lease() -> None:
            nonlocal leading
            await anyio.sleep(0.5)  # while the next bind waits for its token
            leading = False

        tg.start_soon(lose_lease)
        with pytest.raises(NotLeaderError):
            await store.bind(make_pod("b").obj(), "n1")
    assert posts == ["/api/v1/namespaces/default/pods/a/binding"]
    assert anyio.current_time() == 1.0


def test_kube_cluster_is_a_cluster_store() -> None:
    store: ClusterStore = _store({})  # mypy checks the protocol; the engine needs no more
    assert store.nodes() == [] and store.get_pod("default/p") is None

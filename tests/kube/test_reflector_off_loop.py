"""A large watch event or list page is read in a worker thread while the loop goes on;
small ones on the loop; either way the store sees the events one by one, in order."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

import anyio
import anyio.from_thread
import httpx
import pytest

from ksched.kube import RESOURCES, KubeClient, Reflector, TokenBucket
from ksched.kube._reflector import OFF_LOOP_BYTES

pytestmark = pytest.mark.anyio

POD = next(r for r in RESOURCES if r.kind == "Pod")


def _pod(name: str, rv: str, padding: int = 0) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"u-{name}"}
    meta["resourceVersion"] = rv
    if padding:
        meta["annotations"] = {"pad": "x" * padding}
    return {"metadata": meta, "spec": {"containers": [{"name": "c"}]}}


class ThreadNoting(Reflector):
    """Notes the thread each object is read in; a large one also asks the loop to run a
    callback while it is being read (which only a free loop can do)."""

    read_in: dict[str, int]
    loop_ran_during: list[str]

    def _convert(self, raw: Mapping[str, Any]) -> Any | None:
        name = raw["metadata"]["name"]
        self.read_in[name] = threading.get_ident()
        if name.startswith("big"):
            anyio.from_thread.run_sync(self.loop_ran_during.append, name)
        return super()._convert(raw)


def _reflector(handler: Any) -> tuple[ThreadNoting, list[tuple[str, str]]]:
    calls: list[tuple[str, str]] = []
    http = httpx.AsyncClient(base_url="http://k", transport=httpx.MockTransport(handler))
    reflector = ThreadNoting(
        KubeClient(http, TokenBucket(0, 0)),
        POD,
        lambda kind, obj, raw: calls.append(("apply", obj.name)),
        lambda kind, key: calls.append(("remove", key)),
    )
    reflector.read_in, reflector.loop_ran_during = {}, []
    return reflector, calls


async def test_a_large_watch_event_is_read_off_the_loop_and_applied_in_order() -> None:
    events = [
        {"type": "ADDED", "object": _pod("a", "2")},
        {"type": "ADDED", "object": _pod("big", "3", padding=OFF_LOOP_BYTES)},
        {"type": "DELETED", "object": _pod("a", "4")},
        {"type": "MODIFIED", "object": _pod("b", "5")},
    ]
    body = b"".join(json.dumps(e).encode() + b"\n" for e in events)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body)

    reflector, calls = _reflector(handler)
    await reflector.watch()
    loop_thread = threading.get_ident()
    assert reflector.read_in["big"] != loop_thread
    assert reflector.read_in["a"] == reflector.read_in["b"] == loop_thread
    assert reflector.loop_ran_during == ["big"]
    assert calls == [("apply", "a"), ("apply", "big"), ("remove", "ns/a"), ("apply", "b")]
    assert reflector.resource_version == "5"
    assert reflector.watch_events == 4


async def test_a_large_list_page_is_read_off_the_loop() -> None:
    pages = [
        {"items": [_pod("a", "1")], "metadata": {"continue": "tok"}},
        {
            "items": [_pod("big", "2", padding=OFF_LOOP_BYTES), _pod("b", "3")],
            "metadata": {"resourceVersion": "7"},
        },
    ]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=pages.pop(0))

    reflector, calls = _reflector(handler)
    await reflector.list()
    loop_thread = threading.get_ident()
    assert reflector.read_in["a"] == loop_thread
    assert reflector.read_in["big"] == reflector.read_in["b"] != loop_thread
    assert reflector.loop_ran_during == ["big"]
    assert calls == [("apply", "a"), ("apply", "big"), ("apply", "b")]
    assert reflector.resource_version == "7"


async def test_a_large_event_that_does_not_read_is_skipped_off_the_loop() -> None:
    bad = _pod("big-bad", "3", padding=OFF_LOOP_BYTES)
    bad["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "lots"}}
    events = [{"type": "ADDED", "object": bad}, {"type": "ADDED", "object": _pod("a", "4")}]
    body = b"".join(json.dumps(e).encode() + b"\n" for e in events)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body)

    reflector, calls = _reflector(handler)
    await reflector.watch()
    assert calls == [("apply", "a")]
    assert reflector.resource_version == "4"


async def test_an_integer_beyond_64_bits_decodes_as_the_standard_library_reads_it() -> None:
    odd = _pod("a", "2")
    odd["metadata"]["x-unknown"] = 2**80  # a field ksched does not know, too wide for orjson
    big = _pod("big", "3", padding=OFF_LOOP_BYTES)
    big["metadata"]["x-unknown"] = -(2**70)
    events = [{"type": "ADDED", "object": odd}, {"type": "ADDED", "object": big}]
    body = b"".join(json.dumps(e).encode() + b"\n" for e in events)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body)

    reflector, calls = _reflector(handler)
    await reflector.watch()
    assert calls == [("apply", "a"), ("apply", "big")]

"""Extenders with a ``preemptVerb`` trim the preemption candidates: DefaultPreemption's
callExtenders against small extenders on loopback (real HTTP), then the whole Scheduler.
# pkg/scheduler/framework/preemption/preemption.go (callExtenders; preemption_test.go
# TestCallExtenders), pkg/scheduler/extender.go (ProcessPreemption, convertToVictims,
# convertPodUIDToPod, convertToMetaVictims)"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import pytest

from ksched import InMemoryCluster, Scheduler
from ksched.api import Pod
from ksched.config import parse_config
from ksched.extender import ExtenderClient
from ksched.extender._server import ExtenderServer
from ksched.framework import Code, NodeInfo
from ksched.observability import Request, Response, serve_http
from ksched.plugins.default_preemption._candidates import Candidate, Victims
from ksched.plugins.default_preemption._extenders import call_extenders
from ksched.testing import FakeSnapshot, make_node, make_pod

pytestmark = pytest.mark.anyio

Reply = Callable[[dict[str, Any]], Any]


@asynccontextmanager
async def extender(reply: Reply, calls: list[dict[str, Any]]) -> AsyncIterator[str]:
    """An extender on 127.0.0.1 answering ``reply(body)``; a Response or a delay
    (float, seconds) passes through."""

    async def handle(request: Request) -> Response:
        body = json.loads(request.body)
        calls.append(body)
        out = reply(body)
        if isinstance(out, Response):
            return out
        if isinstance(out, float):
            await anyio.sleep(out)
            out = {}
        return Response(200, json.dumps(out).encode(), "application/json")

    async with anyio.create_task_group() as tg:
        port = await tg.start(serve_http, handle, "127.0.0.1", 0)
        yield f"http://127.0.0.1:{port}/ext"
        tg.cancel_scope.cancel()


def as_meta(body: dict[str, Any]) -> dict[str, Any]:
    """The request's victims by UID, whichever form they came in."""
    if body.get("NodeNameToMetaVictims") is not None:
        return dict(body["NodeNameToMetaVictims"])
    return {
        node: {
            "Pods": [{"UID": p["metadata"]["uid"]} for p in v["Pods"]],
            "NumPDBViolations": v["NumPDBViolations"],
        }
        for node, v in body["NodeNameToVictims"].items()
    }


def echo(body: dict[str, Any]) -> Any:
    return {"NodeNameToMetaVictims": as_meta(body)}


def no_victims(body: dict[str, Any]) -> Any:
    return {"NodeNameToMetaVictims": {n: {"Pods": []} for n in as_meta(body)}}


def fails(body: dict[str, Any]) -> Any:
    return Response(500, b"extender preempt error")


PREEMPTOR = make_pod("preemptor").uid("preemptor").priority(1000).obj()
VICTIM = make_pod("victim").uid("victim").node("node1").priority(100).obj()
OTHER = make_pod("other").uid("other").node("node1").priority(100).obj()
ON_NODE2 = make_pod("victim2").uid("victim2").node("node2").priority(100).obj()


def snapshot() -> FakeSnapshot:
    node1 = NodeInfo.of(make_node("node1").obj(), [VICTIM, OTHER])
    node2 = NodeInfo.of(make_node("node2").obj(), [ON_NODE2])
    node3 = NodeInfo.of(make_node("node3").obj(), [])
    return FakeSnapshot([node1, node2, node3])


def candidates(*pairs: tuple[str, Sequence[Pod]]) -> list[Candidate]:
    return [Candidate(name, Victims(tuple(pods))) for name, pods in pairs]


def named(found: Sequence[Candidate]) -> list[tuple[str, list[str]]]:
    return [(c.name, [p.name for p in c.victims.pods]) for c in found]


async def clients(
    stack: AsyncExitStack, specs: Sequence[tuple[Reply, dict[str, Any]]], calls: list[Any]
) -> list[ExtenderClient]:
    out = []
    for reply, fields in specs:
        url = await stack.enter_async_context(extender(reply, calls))
        (cfg,) = parse_config({"extenders": [{"urlPrefix": url, **fields}]}).extenders
        client = ExtenderClient.new(cfg)
        stack.push_async_callback(client.aclose)
        out.append(client)
    return out


PREEMPT = {"preemptVerb": "preempt"}

# preemption_test.go TestCallExtenders, each fake extender an HTTP one: "returns no
# victims" answers node1 with no pods; "returns error" answers 500.
CALL_EXTENDERS = [
    ("no extenders", [], [("node1", [VICTIM])], None, [("node1", ["victim"])]),
    (
        "one extender supports preemption",
        [(echo, PREEMPT)],
        [("node1", [VICTIM])],
        None,
        [("node1", ["victim"])],
    ),
    (
        "one extender with return no victims",
        [(no_victims, PREEMPT)],
        [("node1", [VICTIM])],
        'expected at least one victim pod on node "node1"',
        [],
    ),
    (
        "one extender does not support preemption",
        [(fails, {"filterVerb": "filter"})],
        [("node1", [VICTIM])],
        None,
        [("node1", ["victim"])],
    ),
    (
        "one extender with no return victims and is ignorable",
        [(no_victims, {**PREEMPT, "ignorable": True})],
        [("node1", [VICTIM])],
        None,
        [],
    ),
    (
        "one extender returns error and is ignorable",
        [(fails, {**PREEMPT, "ignorable": True})],
        [("node1", [VICTIM])],
        None,
        [("node1", ["victim"])],
    ),
    (
        "one extender returns error and is not ignorable",
        [(fails, PREEMPT)],
        [("node1", [VICTIM])],
        "failed preempt with extender at URL",
        [],
    ),
    ("one extender with empty victims input", [(fails, PREEMPT)], [], None, []),
]


@pytest.mark.parametrize(
    ("specs", "given", "error", "want"),
    [row[1:] for row in CALL_EXTENDERS],
    ids=[row[0] for row in CALL_EXTENDERS],
)
async def test_call_extenders(
    specs: list[tuple[Reply, dict[str, Any]]],
    given: list[tuple[str, list[Pod]]],
    error: str | None,
    want: list[tuple[str, list[str]]],
) -> None:
    calls: list[Any] = []
    async with AsyncExitStack() as stack:
        exts = await clients(stack, specs, calls)
        found, status = await call_extenders(exts, PREEMPTOR, candidates(*given), snapshot())
    if error is None:
        assert status is None
        assert named(found) == want
    else:
        assert status is not None and status.code is Code.ERROR
        assert error in status.message
    if not given or not any(fields.get("preemptVerb") for _, fields in specs):
        assert calls == []  # nothing to trim, or nobody to ask: no request at all


@pytest.mark.parametrize("cache_capable", [False, True], ids=["NodeNameToVictims", "Meta"])
async def test_victims_go_out_whole_or_by_uid_and_come_back_by_uid(cache_capable: bool) -> None:
    calls: list[Any] = []
    async with AsyncExitStack() as stack:
        (ext,) = await clients(
            stack, [(echo, {**PREEMPT, "nodeCacheCapable": cache_capable})], calls
        )
        given = [Candidate("node1", Victims((VICTIM, OTHER), 1))]
        found, status = await call_extenders([ext], PREEMPTOR, given, snapshot())
    assert status is None and found == given  # the same pods, read back from the snapshot
    (body,) = calls
    assert body["Pod"]["metadata"]["name"] == "preemptor"
    if cache_capable:
        assert body["NodeNameToMetaVictims"] == {
            "node1": {"Pods": [{"UID": "victim"}, {"UID": "other"}], "NumPDBViolations": 1}
        }
        assert "NodeNameToVictims" not in body
    else:
        sent = body["NodeNameToVictims"]["node1"]
        assert [p["metadata"]["uid"] for p in sent["Pods"]] == ["victim", "other"]
        assert sent["Pods"][0]["spec"]["nodeName"] == "node1"
        assert sent["NumPDBViolations"] == 1
        assert "NodeNameToMetaVictims" not in body


async def test_the_extender_trims_nodes_and_victims_and_the_next_one_sees_its_answer() -> None:
    def first(body: dict[str, Any]) -> Any:  # node2 goes; node1 keeps only "victim"
        return {"NodeNameToMetaVictims": {"node1": {"Pods": [{"UID": "victim"}]}}}

    calls: list[Any] = []
    async with AsyncExitStack() as stack:
        exts = await clients(stack, [(first, PREEMPT), (echo, PREEMPT)], calls)
        given = candidates(("node1", [VICTIM, OTHER]), ("node2", [ON_NODE2]))
        found, status = await call_extenders(exts, PREEMPTOR, given, snapshot())
    assert status is None
    assert named(found) == [("node1", ["victim"])]
    assert as_meta(calls[1]) == {"node1": {"Pods": [{"UID": "victim"}], "NumPDBViolations": 0}}


async def test_once_no_node_is_left_the_other_extenders_are_not_asked() -> None:
    calls: list[Any] = []
    async with AsyncExitStack() as stack:
        empty: dict[str, Any] = {"NodeNameToMetaVictims": {}}
        exts = await clients(stack, [(lambda b: empty, PREEMPT), (echo, PREEMPT)], calls)
        found, status = await call_extenders(
            exts, PREEMPTOR, candidates(("node1", [VICTIM])), snapshot()
        )
    assert status is None and found == [] and len(calls) == 1


async def test_an_extender_not_interested_in_the_pod_is_not_asked() -> None:
    calls: list[Any] = []
    fields = {**PREEMPT, "managedResources": [{"name": "example.com/gpu"}]}
    async with AsyncExitStack() as stack:
        exts = await clients(stack, [(fails, fields)], calls)
        given = candidates(("node1", [VICTIM]))
        found, status = await call_extenders(exts, PREEMPTOR, given, snapshot())
    assert status is None and found == given and calls == []


async def test_a_node_of_the_snapshot_the_extender_adds_becomes_a_candidate() -> None:
    """Upstream's convertToVictims reads any node of the snapshot, candidate or not."""

    def add_node2(body: dict[str, Any]) -> Any:
        return {
            "NodeNameToMetaVictims": {
                **as_meta(body),
                "node2": {"Pods": [{"UID": "victim2"}], "NumPDBViolations": 0},
            }
        }

    async with AsyncExitStack() as stack:
        exts = await clients(stack, [(add_node2, PREEMPT)], [])
        found, status = await call_extenders(
            exts, PREEMPTOR, candidates(("node1", [VICTIM])), snapshot()
        )
    assert status is None
    assert named(found) == [("node1", ["victim"]), ("node2", ["victim2"])]


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (
            {"NodeNameToMetaVictims": {"node9": {"Pods": [{"UID": "victim"}]}}},
            'preempt: nodeinfo not found for node name "node9"',
        ),
        (
            {"NodeNameToMetaVictims": {"node1": {"Pods": [{"UID": "victim2"}]}}},
            "claims to preempt pod (UID: &{victim2}) on node: node1, "
            "but the pod is not found on that node",
        ),
        ({"NodeNameToMetaVictims": ["node1"]}, "preempt: malformed reply"),
        (0.5, "preempt: timed out after 0.1s"),
    ],
    ids=["unknown-node", "pod-not-on-node", "malformed", "slow"],
)
async def test_a_reply_the_snapshot_cannot_read_fails_the_attempt_unless_ignorable(
    answer: Any, error: str
) -> None:
    for ignorable in (False, True):
        fields = {**PREEMPT, "ignorable": ignorable, "httpTimeout": "100ms"}
        async with AsyncExitStack() as stack:
            exts = await clients(stack, [(lambda b: answer, fields)], [])
            given = candidates(("node1", [VICTIM]))
            found, status = await call_extenders(exts, PREEMPTOR, given, snapshot())
        if ignorable:
            assert status is None and found == given
        else:
            assert status is not None and status.code is Code.ERROR
            assert error in status.message


# ---- the whole scheduler ----------------------------------------------------------------


async def full_cluster() -> InMemoryCluster:
    """Two one-cpu nodes, each full with a low-priority pod; on its own, preemption would
    pick n1 (its victim has the lower priority)."""
    cluster = InMemoryCluster()
    for name, priority in (("n1", 1), ("n2", 5)):
        await cluster.add_node(make_node(name).capacity(cpu="1", memory="1Gi", pods=10).obj())
        low = make_pod(f"low-{name}").node(name).priority(priority).req(cpu="1").obj()
        await cluster.add_pod(low)
    return cluster


async def test_the_scheduler_preempts_only_where_the_extender_lets_it() -> None:
    def keep_n2(body: dict[str, Any]) -> Any:
        return {"NodeNameToMetaVictims": {"n2": as_meta(body)["n2"]}}

    calls: list[Any] = []
    async with extender(keep_n2, calls) as url:
        cluster = await full_cluster()
        cfg = parse_config({"extenders": [{"urlPrefix": url, "preemptVerb": "preempt"}]})
        async with Scheduler.open(cfg, cluster):
            await cluster.add_pod(make_pod("high").priority(100).req(cpu="1").obj())
            bound = await cluster.wait_bound("default/high", timeout=10)
    assert bound.spec.node_name == "n2"
    assert cluster.evicted == ["default/low-n2"]
    assert sorted(as_meta(calls[0])) == ["n1", "n2"]  # both nodes were candidates


async def test_a_failing_extender_fails_the_preemption_with_its_error() -> None:
    async with extender(fails, []) as url:
        cluster = await full_cluster()
        cfg = parse_config({"extenders": [{"urlPrefix": url, "preemptVerb": "preempt"}]})
        async with Scheduler.open(cfg, cluster):
            await cluster.add_pod(make_pod("high").priority(100).req(cpu="1").obj())
            with anyio.fail_after(10):
                while "default/high" not in cluster.conditions:
                    await anyio.sleep(0.01)
            condition = dict(cluster.conditions["default/high"])
    assert cluster.evicted == []
    assert "preemption: extender" in condition["message"]
    assert "failed preempt with extender at URL" in condition["message"]


@pytest.mark.parametrize("cache_capable", [False, True], ids=["NodeNameToVictims", "Meta"])
async def test_ksched_extender_serve_as_the_preempt_extender_lets_the_victims_stand(
    cache_capable: bool,
) -> None:
    """ksched's client against ksched's server: the served preempt verb keeps every
    candidate, so preemption picks as it would alone (n1, the lower-priority victim)."""
    server = ExtenderServer(parse_config({}), "/ksched")
    async with anyio.create_task_group() as tg:
        port = await tg.start(serve_http, server.handle, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{port}/ksched"
        cluster = await full_cluster()
        fields = {"preemptVerb": "preempt", "nodeCacheCapable": cache_capable}
        cfg = parse_config({"extenders": [{"urlPrefix": url, **fields}]})
        async with Scheduler.open(cfg, cluster):
            await cluster.add_pod(make_pod("high").priority(100).req(cpu="1").obj())
            bound = await cluster.wait_bound("default/high", timeout=10)
        tg.cancel_scope.cancel()
    assert bound.spec.node_name == "n1"
    assert cluster.evicted == ["default/low-n1"]

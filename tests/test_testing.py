"""ksched.testing: the fakes are the protocols (mypy checks the assignments below), run
through a real Scheduler, and FakeHandle answers as the engine's Handle does."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence

import anyio
import pytest
from trio.testing import MockClock

from ksched import InMemoryCluster, Pod, Scheduler
from ksched.api import Namespace
from ksched.config import PluginRef, PluginSet, Profile, SchedulerConfig
from ksched.framework import (
    BindPlugin,
    Code,
    CycleState,
    FilterPlugin,
    Handle,
    NodeInfo,
    PermitPlugin,
    PluginFactory,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    SharedLister,
    Status,
)
from ksched.framework.runtime import Framework, WaitingPods
from ksched.testing import (
    ERR_REASON_FAKE,
    Call,
    FakeAsyncBind,
    FakeAsyncFilter,
    FakeAsyncPermit,
    FakeAsyncPreBind,
    FakeAsyncScore,
    FakeBind,
    FakeFilter,
    FakeHandle,
    FakePermit,
    FakePostBind,
    FakePostFilter,
    FakePreBind,
    FakePreEnqueue,
    FakePreFilter,
    FakePreScore,
    FakeQueueSort,
    FakeReserve,
    FakeScore,
    FakeSnapshot,
    make_node,
    make_pod,
)

MOCK_CLOCK = pytest.mark.parametrize(
    "anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})]
)


def test_the_fakes_are_the_protocols() -> None:
    """Each assignment is checked by ``mypy --strict``; at run time each fake has the
    method of its point."""
    handle: Handle = FakeHandle()
    snapshot: SharedLister = FakeSnapshot()
    pre_enqueue: PreEnqueuePlugin = FakePreEnqueue()
    queue_sort: QueueSortPlugin = FakeQueueSort()
    pre_filter: PreFilterPlugin = FakePreFilter()
    filters: list[FilterPlugin] = [FakeFilter(), FakeAsyncFilter()]
    post_filter: PostFilterPlugin = FakePostFilter()
    pre_score: PreScorePlugin = FakePreScore()
    scores: list[ScorePlugin] = [FakeScore(), FakeAsyncScore()]
    reserve: ReservePlugin = FakeReserve()
    permits: list[PermitPlugin] = [FakePermit(), FakeAsyncPermit()]
    pre_binds: list[PreBindPlugin] = [FakePreBind(), FakeAsyncPreBind()]
    binds: list[BindPlugin] = [FakeBind(), FakeAsyncBind()]
    post_bind: PostBindPlugin = FakePostBind()
    factory: PluginFactory = FakeFilter().new
    assert callable(handle.now) and snapshot.list() == [] and callable(factory)
    by_method: dict[str, Sequence[object]] = {
        "pre_enqueue": [pre_enqueue],
        "less": [queue_sort],
        "pre_filter": [pre_filter],
        "filter": filters,
        "post_filter": [post_filter],
        "pre_score": [pre_score],
        "score": scores,
        "reserve": [reserve],
        "unreserve": [reserve],
        "permit": permits,
        "pre_bind": pre_binds,
        "bind": binds,
        "post_bind": [post_bind],
    }
    for method, plugins in by_method.items():
        assert all(callable(getattr(p, method, None)) for p in plugins), method


def test_importing_the_kit_needs_no_test_runner() -> None:
    code = "import sys; sys.modules['pytest'] = None; import ksched.testing; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# ---- through a real Scheduler --------------------------------------------------------------


def _profile(*names: str) -> SchedulerConfig:
    refs = tuple(PluginRef(n) for n in (*names, "DefaultBinder"))
    return SchedulerConfig(profiles=(Profile(plugins={"multiPoint": PluginSet(enabled=refs)}),))


async def _until(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    with anyio.fail_after(timeout):
        while not cond():
            await anyio.sleep(0.005)


@pytest.mark.anyio
@pytest.mark.parametrize("plain", [True, False], ids=["def", "async-def"])
async def test_a_profile_of_fakes_schedules_a_pod_point_by_point(plain: bool) -> None:
    log: list[Call] = []
    no_n1 = {"n1": Code.UNSCHEDULABLE}
    fakes = [
        FakeQueueSort(),
        FakePreEnqueue(log=log),
        FakePreFilter(log=log),
        FakeFilter(log=log, status_for=no_n1)
        if plain
        else FakeAsyncFilter("FakeFilter", log=log, status_for=no_n1),
        FakePreScore(log=log),
        FakeScore(log=log, scores={"n3": 10})
        if plain
        else FakeAsyncScore("FakeScore", log=log, scores={"n3": 10}),
        FakeReserve(log=log),
        FakePermit(log=log) if plain else FakeAsyncPermit("FakePermit", log=log),
        FakePreBind(log=log) if plain else FakeAsyncPreBind("FakePreBind", log=log),
        FakeBind(log=log) if plain else FakeAsyncBind("FakeBind", log=log),
        FakePostBind(log=log),
    ]
    cluster = InMemoryCluster()
    for name in ("n1", "n2", "n3"):
        await cluster.add_node(make_node(name).capacity(cpu="4", memory="8Gi", pods=110).obj())
    registry = {f.name: f.new for f in fakes}
    async with Scheduler.open(_profile(*registry), cluster, registry=registry):
        await cluster.add_pod(make_pod("p").obj())
        pod = await cluster.wait_bound("default/p", timeout=10)
        await _until(lambda: any(c.point == "post_bind" for c in log))
    assert pod.spec.node_name == "n3"  # n1 filtered out, n3 scored highest
    points = [c.point for c in log]
    assert [p for p in points if p not in ("filter", "score")] == [
        "pre_enqueue", "pre_filter", "pre_score", "reserve", "permit", "pre_bind_pre_flight",
        "pre_bind", "bind", "post_bind",
    ]  # fmt: skip
    # Filter on every node between PreFilter and PreScore, Score on the feasible ones after
    assert points[2:5] == ["filter"] * 3 and points[6:8] == ["score"] * 2
    assert sorted(c.node for c in log if c.point == "filter") == ["n1", "n2", "n3"]
    assert sorted(c.node for c in log if c.point == "score") == ["n2", "n3"]
    assert {c.pod.name for c in log} == {"p"}
    assert all(c.node == "n3" for c in log if c.point in ("reserve", "permit", "post_bind"))


@MOCK_CLOCK
@pytest.mark.anyio
async def test_a_fake_permit_holds_the_pod_until_its_timeout_then_it_is_unreserved() -> None:
    reserve, permit = FakeReserve(), FakePermit(wait=30.0)
    cluster = InMemoryCluster()
    await cluster.add_node(make_node("n1").capacity(cpu="4", memory="8Gi", pods=110).obj())
    registry = {"FakeQueueSort": FakeQueueSort().new, "FakeReserve": reserve.new}
    registry["FakePermit"] = permit.new
    async with Scheduler.open(_profile(*registry), cluster, registry=registry):
        await cluster.add_pod(make_pod("p").obj())
        await _until(lambda: permit.handle.get_waiting_pod("default/p") is not None)
        waiting = permit.handle.get_waiting_pod("default/p")
        assert waiting is not None and waiting.pending_plugins == ["FakePermit"]
        await _until(lambda: reserve.count("unreserve", "p") == 1, timeout=100.0)
    [permitted] = permit.calls_at("permit")
    [unreserved] = reserve.calls_at("unreserve")
    assert permitted.at is not None and unreserved.at == permitted.at + 30.0


def test_a_fake_needs_new_before_its_handle_is_read() -> None:
    fake = FakePermit()
    with pytest.raises(RuntimeError, match="FakePermit: not built by a scheduler"):
        fake.handle  # noqa: B018
    handle = FakeHandle()
    assert fake.new(None, handle) is fake and fake.handle is handle


# ---- the fakes' answers ------------------------------------------------------------------


def test_fake_filter_answers_per_node_with_upstreams_reason_for_a_bare_code() -> None:
    """fake_plugins.go FakeFilterPlugin: a node -> code map, "injecting failure for pod"."""
    pod, state = make_pod("web").obj(), CycleState()
    n1, n2 = (NodeInfo.of(make_node(n).obj()) for n in ("n1", "n2"))
    fake = FakeFilter(status_for={"n1": Code.UNSCHEDULABLE_AND_UNRESOLVABLE})
    assert fake.filter(state, pod, n1) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("injecting failure for pod web",)
    )
    assert ERR_REASON_FAKE.format(pod="web") == "injecting failure for pod web"
    assert fake.filter(state, pod, n2) is None
    by_function = FakeFilter(status_for=lambda p, n: Status(Code.UNSCHEDULABLE, (n.name,)))
    assert by_function.filter(state, pod, n2) == Status(Code.UNSCHEDULABLE, ("n2",))
    assert [c.node for c in fake.calls] == ["n1", "n2"] and fake.count("filter", "web") == 2


def test_a_call_compares_without_its_time() -> None:
    pod = make_pod("p").obj()
    fake = FakeReserve("R", raises=RuntimeError("broken"))
    with pytest.raises(RuntimeError, match="broken"):
        fake.reserve(CycleState(), pod, "n1")
    assert fake.calls == [Call("R", "reserve", pod, "n1")]  # recorded, then raised
    assert fake.calls[0].at is None  # no event loop was running
    assert fake.count("reserve", "default/p") == fake.count("reserve", "p") == 1


def test_fake_permit_and_score_answers() -> None:
    pod, state = make_pod("p").obj(), CycleState()
    assert FakePermit(wait=5).permit(state, pod, "n1") == Status.wait(5)
    turned_down = Status(Code.UNSCHEDULABLE, ("no",))
    assert FakePermit(status=turned_down).permit(state, pod, "n1") == turned_down
    chooser = FakePermit(wait=5, status_for=lambda p: None)
    assert chooser.permit(state, pod, "n1") is None
    doubled = FakeScore(scores={"n1": 30}, default=7, normalize=_double)
    infos = [NodeInfo.of(make_node(n).obj()) for n in ("n1", "n2")]
    scores = {i.name: doubled.score(state, pod, i) for i in infos}
    assert scores == {"n1": 30, "n2": 7}
    ext = doubled.score_extensions()
    assert ext is not None and ext.normalize_score(state, pod, scores) is None
    assert scores == {"n1": 60, "n2": 14}
    assert FakeScore().score_extensions() is None
    assert FakeBind().bind(state, pod, "n1") == Status(Code.SKIP)  # the next binder binds


def _double(scores: dict[str, int]) -> None:
    for name in scores:
        scores[name] *= 2


# ---- FakeHandle ---------------------------------------------------------------------------


def test_nodes_hold_the_pods_bound_to_them() -> None:
    anti = make_pod("anti").node("n1").pod_affinity("zone", {"app": "x"}, anti=True).obj()
    handle = FakeHandle(
        nodes=[make_node("n1").obj(), NodeInfo.of(make_node("n2").obj())],
        pods=[anti, make_pod("b").node("n1").obj(), make_pod("c").node("n9").obj()],
    )
    n1 = handle.snapshot.get("n1")
    assert n1 is not None and [p.pod.name for p in n1.pods] == ["anti", "b"]
    assert [i.name for i in handle.snapshot.list()] == ["n1", "n2"]
    assert [i.name for i in handle.snapshot.have_pods_with_required_anti_affinity()] == ["n1"]
    assert handle.snapshot.get("n9") is None and handle.snapshot.pod_index is None


def test_namespace_labels_come_from_the_mapping_then_the_cluster() -> None:
    ns = Namespace(name="team-b", labels={"team": "b"})
    handle = FakeHandle([ns], namespaces={"team-a": {"team": "a"}})
    assert handle.namespace_labels("team-a") == {"team": "a"}
    assert handle.namespace_labels("team-b") == {"team": "b"}
    assert handle.namespace_labels("nobody") is None


def test_what_a_plugin_does_through_the_handle_is_recorded() -> None:
    handle = FakeHandle(now=100.0, seed=3)
    victim, preemptor = make_pod("victim").obj(), make_pod("preemptor").obj()
    handle.record_event(victim, "Preempted", "by preemptor", related=preemptor)
    handle.activate([victim])
    waiting = handle.add_waiting_pod(victim, "n1", {"Coscheduling": 200.0})
    assert list(handle.iterate_waiting_pods()) == [waiting]
    assert handle.reject_waiting_pod(victim.uid, "DefaultPreemption", "preempted")
    assert not handle.reject_waiting_pod("nobody", "DefaultPreemption", "preempted")
    [event] = handle.events
    assert (event.regarding, event.related, event.reason, event.type) == (
        "default/victim", "default/preemptor", "Preempted", "Normal",
    )  # fmt: skip
    assert handle.activated == [victim]
    assert waiting.verdict == Status(Code.UNSCHEDULABLE, ("preempted",), "DefaultPreemption")
    assert handle.get_waiting_pod(victim.uid) is None
    assert [r[0] for r in handle.rejected] == [victim.uid, "nobody"]
    assert handle.now() == 100.0 and handle.rng.random() == FakeHandle(seed=3).rng.random()


def test_plugins_are_shown_at_the_points_of_their_methods() -> None:
    sync_filter, async_filter, pre = FakeFilter("F"), FakeAsyncFilter("A"), FakePreFilter("P")
    handle = FakeHandle(plugins=[pre, sync_filter])
    assert [n for n, _ in handle.plugins_at("filter")] == ["F"]
    assert [n for n, _ in handle.plugins_at("preFilter")] == ["P"]
    assert handle.plugins_at("bind") == [] and handle.plugins_at("nonsense") == []
    assert not handle.filters_wait
    assert FakeHandle(plugins=[sync_filter, async_filter]).filters_wait
    assert not handle.pre_filter_extensions_active(CycleState())
    assert FakeHandle(extensions_active=True).pre_filter_extensions_active(CycleState())


def _framework(filters: Sequence[FilterPlugin]) -> Framework:
    return Framework(
        profile_name="test",
        plugins={p.name: p for p in filters},
        points={"filter": [p.name for p in filters]},
        weights={},
        percentage_of_nodes_to_score=None,
        parallelism=1,
        waiting_pods=WaitingPods(),
    )


def _room_for_one(pod: Pod, node_info: NodeInfo) -> Status | None:
    return Status(Code.UNSCHEDULABLE, ("full",)) if node_info.pods else None


@pytest.mark.anyio
@pytest.mark.parametrize(
    "nominated_priority", [None, 5, 10, 20], ids=["none", "lower", "equal", "higher"]
)
async def test_filter_with_nominated_pods_is_the_frameworks(nominated_priority: int | None) -> None:
    """framework.go RunFilterPluginsWithNominatedPods: a first pass with the nominated pods
    of higher or equal priority added, then one without; the Framework's answer."""
    pod = make_pod("p").priority(10).obj()
    nominated = [] if nominated_priority is None else [
        make_pod("nom").priority(nominated_priority).nominated("n1").obj()
    ]  # fmt: skip
    fake = FakeFilter(status_for=_room_for_one)
    handle = FakeHandle(nodes=[make_node("n1").obj()], nominated={"n1": nominated})
    handle.filters = [fake]
    node_info = handle.snapshot.list()[0]
    got = await handle.run_filter_plugins_with_nominated_pods(CycleState(), pod, node_info)
    want = await _framework([fake]).run_filter_with_nominated_pods(
        CycleState(), pod, node_info, handle.nominated_pods_for_node("n1")
    )
    assert got == want
    blocked = nominated_priority is not None and nominated_priority >= 10
    assert got == (
        Status(Code.UNSCHEDULABLE, ("full",), "FakeFilter") if blocked else Status(Code.SUCCESS)
    )
    assert node_info.pods == []  # the first pass ran on a copy


@pytest.mark.anyio
async def test_a_filter_that_raises_is_an_error_naming_it() -> None:
    handle = FakeHandle(filters=[FakeFilter("Boom", raises=KeyError("x"))])
    info = NodeInfo.of(make_node("n1").obj())
    status = await handle.run_filter_plugins_with_nominated_pods(
        CycleState(), make_pod("p").obj(), info
    )
    assert status.code is Code.ERROR and status.plugin == "Boom"
    assert status.message == "running \"Boom\" Filter plugin: KeyError: 'x'"

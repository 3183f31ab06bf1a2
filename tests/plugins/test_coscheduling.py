"""Coscheduling: scheduler-plugins pkg/coscheduling coscheduling_test.go and core/core_test.go."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from ksched._errors import ConfigError
from ksched.api import ObjectMeta, Pod, PodGroup
from ksched.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    NodeToStatus,
    PodInfo,
    QueuedPodInfo,
    Status,
    WaitingPod,
)
from ksched.plugins.coscheduling import (
    LIVELOCK_FAILURES,
    POD_GROUP_LABEL,
    Coscheduling,
    CoschedulingArgs,
    check_cluster_resource,
)
from ksched.simulate import parse_scenario, run_scenario
from ksched.testing import FakeHandle, make_node, make_pod

CLOCK = 100.0
"""The handle's clock where a test does not set it."""


def hold(handle: FakeHandle, pod: Pod) -> WaitingPod:
    """``pod`` waits at Permit on "node" for Coscheduling."""
    return handle.add_waiting_pod(pod, "node", {"Coscheduling": 1e9})


def group(
    name: str,
    namespace: str = "ns",
    *,
    min_member: int = 1,
    created: float = 0.0,
    min_resources: dict[str, int] | None = None,
    timeout: int | None = None,
) -> PodGroup:
    return PodGroup(
        metadata=ObjectMeta(name=name, namespace=namespace, creation_timestamp=created),
        min_member=min_member,
        min_resources=min_resources or {},
        schedule_timeout_seconds=timeout,
    )


def member(name: str, pg: str, namespace: str = "ns", **kw: Any) -> Pod:
    builder = make_pod(name, namespace).uid(name).label(POD_GROUP_LABEL, pg)
    if kw.get("gated"):
        builder = builder.scheduling_gates("example-gate")
    if kw.get("node"):
        builder = builder.node(kw["node"])
    if kw.get("cpu"):
        builder = builder.req(cpu=kw["cpu"])
    return builder.obj()


def plugin(handle: FakeHandle, args: dict[str, Any] | None = None) -> Coscheduling:
    return Coscheduling.new(args, handle)


def queued(pod: Pod, initial: float | None = None) -> QueuedPodInfo:
    return QueuedPodInfo(PodInfo.of(pod), initial_attempt_timestamp=initial)


# ---- args ------------------------------------------------------------------------------


def test_args_defaults() -> None:
    assert CoschedulingArgs.from_dict(None) == CoschedulingArgs(
        permit_waiting_time_seconds=60, pod_group_backoff_seconds=0, pod_group_reject_percentage=10
    )


ARG_ERRORS = [
    ("negative permitWaitingTimeSeconds", {"permitWaitingTimeSeconds": -1},
     "Coscheduling: args.permitWaitingTimeSeconds: Invalid value: -1: must be greater than 0"),
    ("negative podGroupBackoffSeconds", {"podGroupBackoffSeconds": -1},
     "Coscheduling: args.podGroupBackoffSeconds: Invalid value: -1: must be greater than 0"),
    ("podGroupRejectPercentage above 100", {"podGroupRejectPercentage": 101},
     "must be between 0 and 100"),
    ("podGroupRejectPercentage below 0", {"podGroupRejectPercentage": -1},
     "podGroupRejectPercentage: Invalid value: -1: must be between 0 and 100"),
    ("unknown field", {"permitWaitingTime": 3}, 'unknown field "permitWaitingTime"'),
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "want"), [r[1:] for r in ARG_ERRORS], ids=[r[0] for r in ARG_ERRORS]
)
def test_args_validation(args: dict[str, Any], want: str) -> None:
    with pytest.raises(ConfigError, match=want):
        plugin(FakeHandle(now=CLOCK), args)


# ---- QueueSort: coscheduling_test.go TestLess ------------------------------------------

LOW, HIGH = 10, 100
NOW = 1000.0


def _p(name: str, ns: str, prio: int, pg: str = "") -> Pod:
    b = make_pod(name, ns).uid(name).priority(prio)
    if pg:
        b = b.label(POD_GROUP_LABEL, pg)
    return b.obj()


LESS = [
    ("p1.priority less than p2.priority",
     _p("p1", "ns1", LOW), None, _p("p2", "ns2", HIGH), None, [], False),
    ("p1.priority greater than p2.priority",
     _p("p1", "ns1", HIGH), None, _p("p2", "ns2", LOW), None, [], True),
    ("equal priority. p1 is added to schedulingQ earlier than p2",
     _p("p1", "ns1", HIGH), NOW + 1, _p("p2", "ns2", HIGH), NOW + 2, [], True),
    ("equal priority. p2 is added to schedulingQ earlier than p1",
     _p("p1", "ns1", HIGH), NOW + 2, _p("p2", "ns2", HIGH), NOW + 1, [], False),
    ("p1.priority less than p2.priority, p1 belongs to pg1",
     _p("p1", "ns1", LOW, "pg1"), None, _p("p2", "ns2", HIGH), None,
     [group("pg1", "ns1")], False),
    ("p1.priority greater than p2.priority, p1 belongs to pg1",
     _p("p1", "ns1", HIGH, "pg1"), None, _p("p2", "ns2", LOW), None,
     [group("pg1", "ns1")], True),
    ("equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1",
     _p("p1", "ns1", HIGH, "pg1"), NOW + 1, _p("p2", "ns2", HIGH), NOW + 2,
     [group("pg1", "ns1", created=NOW + 1)], True),
    ("equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg1",
     _p("p1", "ns1", HIGH, "pg1"), NOW + 2, _p("p2", "ns2", HIGH), NOW + 1,
     [group("pg1", "ns1", created=NOW + 2)], False),
    ("p1.priority less than p2.priority, p1 belongs to pg1 and p2 belongs to pg2",
     _p("p1", "ns1", LOW, "pg1"), None, _p("p2", "ns2", HIGH, "pg2"), None,
     [group("pg1", "ns1", created=NOW + 1), group("pg2", "ns2", created=NOW + 2)], False),
    ("p1.priority greater than p2.priority, p1 belongs to pg1 and and p2 belongs to pg2",
     _p("p1", "ns1", HIGH, "pg1"), None, _p("p2", "ns2", LOW, "pg1"), None,
     [group("pg1", "ns1", created=NOW + 1), group("pg2", "ns2", created=NOW + 2)], True),
    ("equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1 and p2 "
     "belongs to pg2",
     _p("p1", "ns1", HIGH, "pg1"), NOW + 1, _p("p2", "ns2", HIGH, "pg2"), NOW + 2,
     [group("pg1", "ns1", created=NOW + 1), group("pg2", "ns2", created=NOW + 2)], True),
    ("equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg2 and p2 "
     "belongs to pg1",
     _p("p1", "ns", LOW, "pg2"), NOW + 1, _p("p2", "ns", HIGH, "pg1"), NOW + 2,
     [group("pg1", "ns", created=NOW + 1), group("pg2", "ns", created=NOW + 2)], False),
    ("equal priority and creation time, p1 belongs pg1 and p2 belong to pg2",
     _p("p1", "ns1", HIGH, "pg2"), NOW + 1, _p("p2", "ns2", HIGH, "pg2"), NOW + 1,
     [group("pg1", "ns1", created=NOW + 1), group("pg2", "ns2", created=NOW + 2)], True),
    ("equal priority and creation time, and p2 belong to pg2",
     _p("p1", "ns1", HIGH), NOW + 1, _p("p2", "ns2", HIGH, "pg2"), NOW + 1,
     [group("pg2", "ns2", created=NOW + 2)], True),
]  # fmt: skip


@pytest.mark.parametrize(("p1", "t1", "p2", "t2", "pgs", "want"), [r[1:] for r in LESS],
                         ids=[r[0] for r in LESS])  # fmt: skip
def test_less(
    p1: Pod, t1: float | None, p2: Pod, t2: float | None, pgs: list[PodGroup], want: bool
) -> None:
    # Each PodGroup reaches the scheduler when it is created: the plugin orders groups
    # by when it saw them, on the loop's clock (upstream compares creation timestamps
    # with queue timestamps on one wall clock).
    handle = FakeHandle(now=CLOCK)
    pl = plugin(handle)
    for pg in pgs:
        handle.clock = pg.metadata.creation_timestamp or 0.0
        handle.cluster.apply(pg)
    assert pl.less(queued(p1, t1), queued(p2, t2)) is want


def test_less_groups_present_at_start_keep_creation_order() -> None:
    """Groups the plugin finds at start keep the gaps between their creationTimestamps
    (wall-clock seconds since the epoch), the newest placed at the loop's now."""
    older = group("older", "ns", created=1_700_000_005.0)
    newer = group("newer", "ns", created=1_700_000_007.0)
    handle = FakeHandle([newer, older], now=CLOCK)
    pl = plugin(handle)  # the loop's clock reads 100
    a = queued(_p("a", "ns", HIGH, "newer"), 99.0)  # queued after "older" was made (98)
    b = queued(_p("b", "ns", HIGH, "older"), 99.5)
    plain = queued(_p("c", "ns", HIGH), 98.5)
    assert pl.less(b, plain) and pl.less(plain, a)  # older: 98, plain: 98.5, newer: 100
    assert not pl.less(a, b)


def test_close_unsubscribes_from_the_cluster() -> None:
    handle = FakeHandle(now=CLOCK)
    pl = plugin(handle)
    handle.cluster.apply(_p("m1", "ns", HIGH, "pg"))
    pl.close()
    handle.cluster.apply(_p("m2", "ns", HIGH, "pg"))
    assert [p.name for p in pl._siblings(_p("m3", "ns", HIGH, "pg"))] == ["m1"]


def test_less_after_schedule_failure() -> None:
    """TestLessAfterScheduleFailure: a failed group sorts by its failure time until cleared."""
    handle = FakeHandle(now=CLOCK)
    handle.clock = NOW - 20
    pl = plugin(handle)
    for created, name in ((NOW - 10, "pg1"), (NOW - 5, "pg2")):
        handle.clock = created  # each group reaches the plugin when it is created
        handle.cluster.apply(group(name, min_member=3, created=created))
    handle.clock = NOW
    p1, p2 = queued(_p("p1", "ns", HIGH, "pg1"), NOW), queued(_p("p2", "ns", HIGH, "pg2"), NOW)
    assert pl.less(p1, p2)
    pl.post_filter(CycleState(), p1.pod, NodeToStatus())  # MarkPodGroupScheduleFailure
    assert not pl.less(p1, p2)
    assert pl.less(p2, p1)
    handle.cluster.apply(group("pg1", min_member=1, created=NOW - 10))
    assert pl.permit(CycleState(), p1.pod, "node") is None  # quorum clears the failure
    assert pl.less(p1, p2)


# ---- PreFilter: core_test.go TestPreFilter ---------------------------------------------


def _nodes(cpu: str, *pods: Pod) -> list[NodeInfo]:
    infos = []
    for name in ("node-a", "node-b"):
        node = make_node(name).capacity(cpu=cpu, pods=32).obj()
        infos.append(NodeInfo.of(node, [p for p in pods if p.spec.node_name == name]))
    return infos


PRE_FILTER = [
    ("pod does not belong to any pg", make_pod("p").obj(),
     [member("p1", "pg1"), member("p2", "pg2")], [group("pg1"), group("pg2")], None),
    ("pod belongs to a non-existent pg", member("p", "pg-non-existent"), [], [group("pg1")], None),
    ("pod count less than minMember", member("p", "pg1"), [member("pg2-1", "pg2")],
     [group("pg1", min_member=2), group("pg2", min_member=2)],
     "pre-filter pod p cannot find enough sibling pods, current pods number: 1, "
     "minMember of group: 2"),
    ("pod count equal minMember", member("p1a", "pg1"),
     [member("p1b", "pg1"), member("p1c", "pg1")],
     [group("pg1", min_member=2), group("pg2", min_member=2)], None),
    ("pod count more than minMember", member("p1a", "pg1"),
     [member("p1b", "pg1"), member("p1c", "pg1")],
     [group("pg1", min_member=2), group("pg2", min_member=2)], None),
    ("gated pods but still meeting quorum (minMember < replicas)", member("p1a", "pg1"),
     [member("p1b", "pg1"), member("p1c", "pg1", gated=True)], [group("pg1", min_member=2)], None),
    ("gated pods push group below quorum", member("p1a", "pg1"),
     [member("p1b", "pg1", gated=True), member("p1c", "pg1")], [group("pg1", min_member=3)],
     "pre-filter pod p1a cannot proceed due to gated pods in the same PodGroup"),
    ("all sibling pods are gated", member("p1a", "pg1"),
     [member("p1b", "pg1", gated=True), member("p1c", "pg1", gated=True)],
     [group("pg1", min_member=2)],
     "pre-filter pod p1a cannot proceed due to gated pods in the same PodGroup"),
    ("cluster's resource satisfies minResource", member("p1a", "pg1"),
     [member("p1b", "pg1"), member("p1c", "pg1")],
     [group("pg1", min_member=2, min_resources={"cpu": 6000})], None),
    ("cluster's resource cannot satisfy minResource", member("p1a", "pg1"),
     [member("p1b", "pg1"), member("p1c", "pg1")],
     [group("pg1", min_member=2, min_resources={"cpu": 10000})], "resource gap: map[cpu:2]"),
]  # fmt: skip


@pytest.mark.parametrize(("pod", "pending", "pgs", "want"), [r[1:] for r in PRE_FILTER],
                         ids=[r[0] for r in PRE_FILTER])  # fmt: skip
def test_pre_filter(pod: Pod, pending: list[Pod], pgs: list[PodGroup], want: str | None) -> None:
    pl = plugin(FakeHandle([*pgs, *pending, pod], now=CLOCK))
    got = pl.pre_filter(CycleState(), pod, _nodes("4"))
    expected = None if want is None else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want,))
    assert got == expected


def test_pre_filter_group_backoff() -> None:
    """TestPodGroupBackoffTime: with podGroupBackoffSeconds, PostFilter turns the group away."""
    pods = [member(f"pod{i}", "pg1", cpu="1") for i in (1, 2, 3)]
    handle = FakeHandle([group("pg1", min_member=3), *pods], now=CLOCK)
    pl = plugin(handle, {"podGroupBackoffSeconds": 1})
    _, status = pl.post_filter(CycleState(), pods[0], NodeToStatus())
    assert status is not None and status.code is Code.UNSCHEDULABLE
    want = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("podGroup ns/pg1 failed recently",))
    assert pl.pre_filter(CycleState(), pods[1], _nodes("4")) == want
    handle.clock += 1
    assert pl.pre_filter(CycleState(), pods[1], _nodes("4")) is None


# ---- core_test.go TestCheckClusterResource ---------------------------------------------

CLUSTER_RESOURCE = [
    ("Cluster resource enough", [make_pod("p1", "ns").uid("p1").node("node-a").req(cpu="2").obj()],
     True),
    ("Cluster resource not enough",
     [make_pod("p1", "ns").uid("p1").node("node-a").req(cpu="2").obj(),
      make_pod("p2", "ns").uid("p2").node("node-b").req(cpu="1").obj()], False),
    ("Cluster resource enough as p1's resource needs to be excluded from minResources",
     [member("p1", "pg1", node="node-a", cpu="2"),
      make_pod("p2", "ns").uid("p2").node("node-b").req(cpu="1").obj()], True),
]  # fmt: skip


@pytest.mark.parametrize(("pods", "want"), [r[1:] for r in CLUSTER_RESOURCE],
                         ids=[r[0] for r in CLUSTER_RESOURCE])  # fmt: skip
def test_check_cluster_resource(pods: list[Pod], want: bool) -> None:
    got = check_cluster_resource(_nodes("3", *pods), {"cpu": 4000}, "ns/pg1")
    assert (got is None) is want


# ---- Permit: core_test.go / coscheduling_test.go TestPermit ----------------------------

PERMIT = [
    ("pod does not belong to any pg", make_pod("p").obj(), [], None),
    ("pod specifies a non-existent pg", member("p", "pg-non-existent"), [],
     Status(Code.UNSCHEDULABLE, ("PodGroup not found",))),
    ("pod belongs to a pg that doesn't have quorum", member("p", "pg1"),
     [group("pg1", min_member=2)], Status.wait(60)),
    ("pod belongs to a pg that have quorum satisfied", member("p", "pg2"),
     [group("pg2", min_member=1)], None),
]  # fmt: skip


@pytest.mark.parametrize(("pod", "pgs", "want"), [r[1:] for r in PERMIT],
                         ids=[r[0] for r in PERMIT])  # fmt: skip
def test_permit(pod: Pod, pgs: list[PodGroup], want: Status | None) -> None:
    pl = plugin(FakeHandle([*pgs, pod], now=CLOCK))
    assert pl.permit(CycleState(), pod, "node") == want


def test_permit_quorum_allows_waiting_siblings_and_activates_once() -> None:
    pods = [member(f"p{i}", "pg1") for i in (1, 2, 3)]
    other = member("q", "pg2")
    handle = FakeHandle([group("pg1", min_member=3, timeout=10), group("pg2", min_member=5),
                         *pods, other], now=CLOCK)  # fmt: skip
    pl = plugin(handle)
    assert pl.permit(CycleState(), pods[0], "node") == Status.wait(10)
    assert sorted(p.name for p in handle.activated) == ["p2", "p3"]
    w1 = hold(handle, pods[0])
    assert pl.permit(CycleState(), pods[1], "node") == Status.wait(10)
    # only the first member activates
    assert sorted(p.name for p in handle.activated) == ["p2", "p3"]
    w2 = hold(handle, pods[1])
    wq = hold(handle, other)
    assert pl.permit(CycleState(), pods[2], "node") is None
    assert w1.verdict == Status(Code.SUCCESS, plugin="Coscheduling")
    assert w2.verdict is not None and w2.verdict.is_success
    assert wq.verdict is None


def test_permit_wait_time_precedence() -> None:
    """util.GetWaitTimeDuration: group timeout, else args, else 60 s."""
    pod = member("p", "pg1")
    pl = plugin(
        FakeHandle([group("pg1", min_member=2), pod], now=CLOCK), {"permitWaitingTimeSeconds": 7}
    )
    assert pl.permit(CycleState(), pod, "node") == Status.wait(7)
    pod = member("p", "pg1")
    pl = plugin(
        FakeHandle([group("pg1", min_member=2), pod], now=CLOCK), {"permitWaitingTimeSeconds": 0}
    )
    assert pl.permit(CycleState(), pod, "node") == Status.wait(60)


# ---- PostFilter: coscheduling_test.go TestPostFilter / TestPostFilterRejectThreshold ----


def test_post_filter_pod_without_group() -> None:
    pl = plugin(FakeHandle(now=CLOCK))
    _, status = pl.post_filter(CycleState(), make_pod("p").obj(), NodeToStatus())
    assert status == Status(Code.UNSCHEDULABLE, ("can not find pod group",))


def test_post_filter_enough_pods_assigned_do_not_reject_all() -> None:
    assigned = [member(f"p{i}", "pg", node="node") for i in (1, 2)]
    pod = member("p", "pg")
    handle = FakeHandle([group("pg", min_member=1), *assigned, pod], now=CLOCK)
    pl = plugin(handle)
    waiting = hold(handle, member("w", "pg"))
    _, status = pl.post_filter(CycleState(), pod, NodeToStatus())
    assert status == Status(Code.UNSCHEDULABLE)
    assert waiting.verdict is None


def test_post_filter_pod_failed_at_filter_phase_reject_all_pods() -> None:
    pod = member("p", "pg1")
    handle = FakeHandle([group("pg1", min_member=4), pod], now=CLOCK)
    pl = plugin(handle)
    sibling = hold(handle, member("s", "pg1"))
    stranger = hold(handle, member("x", "pg1", namespace="other"))
    _, status = pl.post_filter(CycleState(), pod, NodeToStatus())
    assert status == Status(
        Code.UNSCHEDULABLE,
        ("PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter",),
    )
    assert sibling.verdict == Status(
        Code.UNSCHEDULABLE, ("optimistic rejection in PostFilter",), plugin="Coscheduling"
    )
    assert stranger.verdict is None


REJECT_THRESHOLD = [
    ("default 10%: 9/10 assigned (10% gap) → no rejection", 10, 9, False),
    ("default 10%: 8/10 assigned (20% gap) → rejection", 10, 8, True),
    ("0%: 9/10 assigned (10% gap) → rejection (always reject)", 0, 9, True),
    ("100%: 0/10 assigned (100% gap) → no rejection (never reject)", 100, 0, False),
    ("50%: 6/10 assigned (40% gap) → no rejection", 50, 6, False),
    ("50%: 4/10 assigned (60% gap) → rejection", 50, 4, True),
]


@pytest.mark.parametrize(("percentage", "assigned", "rejected"), [r[1:] for r in REJECT_THRESHOLD],
                         ids=[r[0] for r in REJECT_THRESHOLD])  # fmt: skip
def test_post_filter_reject_threshold(percentage: int, assigned: int, rejected: bool) -> None:
    pods = [member(f"assigned-{i}", "pg1", node="node") for i in range(assigned)]
    pod = member("p", "pg1")
    handle = FakeHandle([*pods, pod, group("pg1", min_member=10)], now=CLOCK)
    pl = plugin(handle, {"podGroupRejectPercentage": percentage})
    _, status = pl.post_filter(CycleState(), pod, NodeToStatus())
    want = Status(Code.UNSCHEDULABLE)
    if rejected:
        want = Status(
            Code.UNSCHEDULABLE,
            ("PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter",),
        )
    assert status == want


# ---- Unreserve, events, reports -------------------------------------------------------


def test_unreserve_rejects_waiting_siblings() -> None:
    pods = [member(f"p{i}", "pg1") for i in (1, 2)]
    handle = FakeHandle([group("pg1", min_member=3), *pods], now=CLOCK)
    pl = plugin(handle)
    assert pl.permit(CycleState(), pods[0], "node") == Status.wait(60)
    sibling = hold(handle, pods[1])
    pl.unreserve(CycleState(), pods[0], "node")
    assert sibling.verdict == Status(
        Code.UNSCHEDULABLE, ("rejection in Unreserve",), plugin="Coscheduling"
    )
    assert pl.group_statuses()["ns/pg1"]["phase"] == "Unschedulable"


def test_events_to_register() -> None:
    events = plugin(FakeHandle(now=CLOCK)).events_to_register()
    assert [(e.event, e.hint) for e in events] == [
        (ClusterEvent(EventResource.POD, ActionType.ADD), None),
        (ClusterEvent(EventResource.POD_GROUP, ActionType.ADD | ActionType.UPDATE), None),
    ]


def test_group_statuses() -> None:
    pods = [member("p1", "pg1", node="node"), member("p2", "pg1")]
    handle = FakeHandle([group("pg1", min_member=3), group("pg2", min_member=1), *pods], now=CLOCK)
    pl = plugin(handle)
    hold(handle, pods[1])
    assert pl.group_statuses() == {
        "ns/pg1": {"phase": "Scheduling", "bound": 1, "waiting": 1, "lastFailure": None},
        "ns/pg2": {"phase": "Pending", "bound": 0, "waiting": 0, "lastFailure": None},
    }


LIVELOCK = """
apiVersion: ksched/v1alpha1
kind: Scenario
metadata: {name: gang-never-fits}
config:
  apiVersion: kubescheduler.config.k8s.io/v1
  kind: KubeSchedulerConfiguration
  profiles:
    - schedulerName: default-scheduler
      plugins:
        multiPoint:
          enabled: [{name: Coscheduling}, {name: NodeResourcesFit}, {name: DefaultBinder}]
          disabled: [{name: "*"}]
objects:
  - {apiVersion: v1, kind: Node, metadata: {name: n1},
     status: {allocatable: {cpu: "3", memory: 8Gi, pods: "32"}}}
  - {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {name: pg},
     spec: {minMember: 4}}
"""


def test_gang_that_never_fits_settles() -> None:
    """Upstream retries such a gang forever (each failure re-activates the siblings); ksched
    backs it off after a few failed attempts, so the run settles with nothing held."""
    data = yaml.safe_load(LIVELOCK)
    for i in range(1, 5):
        data["objects"].append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"a{i}", "labels": {POD_GROUP_LABEL: "pg"}},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
        })  # fmt: skip
    events: list[Any] = []
    report = run_scenario(parse_scenario(data), on_event=events.append)
    assert report["settled"] is True
    rejections = [
        e for e in events if e.kind == "Unschedulable" and "even after PostFilter" in str(e)
    ]
    assert len([e for e in rejections if "Insufficient cpu" in str(e)]) == LIVELOCK_FAILURES
    assert "failed recently" in str(events[-1])
    assert all(e.kind != "Bound" for e in events)

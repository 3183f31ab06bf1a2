"""Replaying a trace on the simulated clock: arrivals and deletions at their recorded
times, pods of other schedulers where the recording put them, --follow-recorded's
judgement of each decision, and the report's metrics."""

from __future__ import annotations

from typing import Any

import pytest

from ksched import load_config
from ksched.api import KubeObject, read_object
from ksched.replay import UsageTracker, agreement, compare_reports, percentiles, replay
from ksched.trace import Op, Trace, TraceEvent, TraceHeader

MOST_ALLOCATED = load_config(
    """
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
"""
)


def node(name: str, cpu: str = "4", memory: str = "8Gi", **labels: str) -> KubeObject:
    return read_object(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
        }
    )


def pod(name: str, cpu: str = "1", scheduler: str = "default-scheduler", **spec: Any) -> KubeObject:
    return read_object(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {
                "schedulerName": scheduler,
                "containers": [
                    {"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}
                ],
                **spec,
            },
        }
    )


def create(t: float, obj: KubeObject) -> TraceEvent:
    key = f"default/{obj.metadata.name}"  # type: ignore[union-attr]
    return TraceEvent(t=t, op=Op.CREATE, object=obj, kind="Pod", key=key)


def bind(t: float, name: str, node_name: str, scheduler: str = "default-scheduler") -> TraceEvent:
    return TraceEvent(
        t=t, op=Op.BIND, kind="Pod", key=f"default/{name}", node=node_name, scheduler=scheduler
    )


def delete(t: float, name: str) -> TraceEvent:
    return TraceEvent(t=t, op=Op.DELETE, kind="Pod", key=f"default/{name}")


def trace(initial: list[KubeObject], events: list[TraceEvent], end: float = 60.0) -> Trace:
    return Trace(TraceHeader(source="test"), initial, [*events, TraceEvent(t=end, op=Op.END)])


def by_pod(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["pod"].split("/")[1]: p for p in report["pods"]}


def test_a_deletion_at_its_recorded_time_frees_room_for_a_waiting_pod() -> None:
    """One node holds one pod: b arrives at 2 s and waits for a's deletion at 5 s."""
    report = replay(
        trace(
            [node("n1", cpu="1")],
            [
                create(1.0, pod("a")),
                bind(1.2, "a", "n1"),
                create(2.0, pod("b")),
                delete(5.0, "a"),
                bind(5.3, "b", "n1"),
            ],
        )
    )
    pods = by_pod(report)
    assert (pods["a"]["bound"], pods["a"]["deleted"]) == (1.0, 5.0)
    assert pods["b"]["bound"] == 5.0  # at the deletion (its backoff ran out at 3 s)
    assert report["timeToSchedule"]["replayed"]["max"] == 3.0
    assert report["timeToSchedule"]["recorded"] == percentiles([0.2, 3.3])
    assert report["agreement"] == agreement(2, 2)
    assert report["summary"]["duration"] == 60.0


def test_pods_of_other_schedulers_stay_where_and_when_they_were_bound() -> None:
    report = replay(
        trace(
            [node("n1"), node("n2")],
            [
                create(1.0, pod("batch", cpu="3", scheduler="volcano")),
                bind(4.0, "batch", "n2", "volcano"),
                create(5.0, pod("web", cpu="2")),
                bind(5.1, "web", "n1"),
            ],
        )
    )
    pods = by_pod(report)
    assert pods["batch"]["ours"] is False
    assert (pods["batch"]["node"], pods["batch"]["bound"]) == ("n2", 4.0)
    assert pods["web"]["node"] == "n1"  # n2 holds the other scheduler's 3 cpu
    assert report["summary"]["ours"] == 1


def test_a_pod_that_fits_nowhere_is_pending_with_its_reason() -> None:
    report = replay(trace([node("n1")], [create(1.0, pod("huge", cpu="64"))]))
    assert report["pending"]["pods"] == ["default/huge"]
    (reason,) = report["pending"]["byReason"]
    assert reason.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    huge = by_pod(report)["huge"]
    assert huge["phase"] == "Unschedulable"
    assert huge["explanation"]["rejected"] == {"NodeResourcesFit: Insufficient cpu": 1}


def test_another_configuration_places_pods_elsewhere_and_the_comparison_says_so() -> None:
    """LeastAllocated spreads (each pod to the emptier node, n1 a little larger so that
    no tie is drawn); MostAllocated packs them on one node."""
    events = [create(1.0 + i, pod(f"p{i}")) for i in range(4)]
    events += [bind(1.5 + i, f"p{i}", "n1" if i % 2 == 0 else "n2") for i in range(4)]
    events.sort(key=lambda e: e.t)
    nodes = [node("n1", cpu="5"), node("n2")]
    least = replay(trace(nodes, list(events)))
    most = replay(trace(nodes, list(events)), MOST_ALLOCATED, config_name="most")
    assert least["agreement"]["agreed"] == 4
    assert [p["node"] for p in least["pods"]] == ["n1", "n2", "n1", "n2"]
    assert [p["node"] for p in most["pods"]] == ["n1"] * 4  # packed (balance breaks 112:111)
    diff = compare_reports(least, most)
    assert diff["samePlacement"] + len(diff["moved"]) == 4
    assert len(diff["moved"]) == 2
    assert diff["aggregate"]["agreement.ratio"] == {"a": 1.0, "b": 0.5, "delta": -0.5}


def test_follow_recorded_judges_each_decision_against_the_best_scored_nodes() -> None:
    """n2 (8 cpu) scores higher than n1 (4 cpu) for the first pod under LeastAllocated;
    a recording that chose n1 disagrees and the report says why, plugin by plugin."""
    events = [
        create(1.0, pod("a")),
        bind(1.1, "a", "n1"),
        create(2.0, pod("b")),
        bind(2.1, "b", "n2"),
        create(3.0, pod("c", nodeSelector={"pool": "x"})),
        bind(3.1, "c", "n1"),
    ]
    report = replay(
        trace([node("n1"), node("n2", cpu="8", pool="x")], events), follow_recorded=True
    )
    pods = by_pod(report)
    assert report["agreement"] == agreement(3, 1)
    assert [pods[n]["node"] for n in "abc"] == ["n1", "n2", "n1"]  # placed as recorded
    a = pods["a"]["decision"]
    assert a["agreed"] is False and a["choice"] == ["n2"]
    assert a["scores"]["n1"]["NodeResourcesFit"] < a["scores"]["n2"]["NodeResourcesFit"]
    assert a["scores"]["n1"]["total"] < a["bestTotal"] == a["scores"]["n2"]["total"]
    assert a["weights"]["TaintToleration"] == 3
    assert pods["b"]["decision"]["agreed"] is True
    c = pods["c"]["decision"]
    assert c["reason"] == (
        "recorded node infeasible: NodeAffinity: node(s) didn't match Pod's node affinity/selector"
    )


def test_follow_recorded_counts_a_tie_only_when_the_recorded_node_is_among_the_best() -> None:
    events = [create(1.0, pod("a")), bind(1.1, "a", "n2")]
    report = replay(trace([node("n1"), node("n2")], events), follow_recorded=True)
    decision = by_pod(report)["a"]["decision"]
    assert decision["agreed"] is True
    assert (decision["choiceSize"], decision["choice"]) == (2, ["n1", "n2"])


def test_replays_are_the_same_run_after_run() -> None:
    events = [create(1.0 + 0.1 * i, pod(f"p{i}", cpu="500m")) for i in range(30)]
    nodes = [node(f"n{i}") for i in range(5)]
    first = replay(trace(nodes, list(events)), seed=3)
    second = replay(trace(nodes, list(events)), seed=3)
    assert [p["node"] for p in first["pods"]] == [p["node"] for p in second["pods"]]


def test_percentiles_are_nearest_rank() -> None:
    values = list(range(1, 101))
    assert percentiles(values) == {
        "count": 100,
        "p50": 50,
        "p90": 90,
        "p99": 99,
        "max": 100,
        "mean": 50.5,
    }
    assert percentiles([]) == {"count": 0}


def test_fragmentation_is_the_free_share_where_the_median_pod_no_longer_fits() -> None:
    """Two 4-cpu nodes; pods of 1 cpu: n1 holds 3.5 cpu (0.5 free, too little for a
    1-cpu pod), n2 holds 1 (3 free): a seventh of the free cpu is stranded."""
    usage = UsageTracker()
    n1, n2 = node("n1"), node("n2")
    usage.on_change("Node", None, n1)
    usage.on_change("Node", None, n2)
    placed = [
        ("a", "n1", "1"),
        ("b", "n1", "1"),
        ("c", "n1", "1"),
        ("d", "n1", "500m"),
        ("e", "n2", "1"),
    ]
    for name, where, cpu in placed:
        usage.on_change("Pod", None, pod(name, cpu=cpu, nodeName=where))
    point = usage.point()
    assert point["cpu"] == pytest.approx(100 * 4.5 / 8, abs=1e-3)
    assert point["fragmentationCpu"] == pytest.approx(100 * 0.5 / 3.5, abs=1e-3)


def test_samples_stay_few_on_a_long_trace() -> None:
    usage = UsageTracker(max_samples=50)
    for i in range(10_000):
        usage.sample(float(i))
    assert len(usage.samples) <= 51
    times = [s[0] for s in usage.samples]
    assert times == sorted(times) and times[0] == 0.0 and times[-1] >= 9_000


def test_a_preemption_in_the_replay_is_reported_with_its_victim() -> None:
    """One 1-cpu node: a low-priority pod holds it when a high-priority one arrives;
    ksched's DefaultPreemption evicts the first (the recording had two nodes' room)."""
    high = read_object(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        }
    )
    events = [create(1.0, pod("low")), create(2.0, pod("urgent", priorityClassName="high"))]
    report = replay(trace([high, node("n1", cpu="1")], events))
    pods = by_pod(report)
    assert report["preemptions"] == [{"victim": "default/low", "node": "n1", "t": 2.0}]
    assert report["summary"]["preemptions"] == 1
    assert (pods["low"]["phase"], pods["low"]["evicted"]) == ("Evicted", 2.0)
    assert (pods["urgent"]["phase"], pods["urgent"]["node"]) == ("Bound", "n1")


def test_mean_utilization_is_over_trace_time() -> None:
    """Empty for 1 s, then half full for 9 s: the mean is 45 %, not the samples' 25 %."""
    usage = UsageTracker()
    usage.samples = [[0.0, 0.0, 0, 0, 0, 0], [1.0, 50.0, 0, 0, 0, 0], [10.0, 50.0, 0, 0, 0, 0]]
    assert usage.summary()["mean"]["cpu"] == 45.0


def test_follow_recorded_judges_a_burst_in_the_recorded_queue_order() -> None:
    """a arrives before b; the Go scheduler decides a (n1, the larger) then b (n2, as n1
    now holds a), but b's binding reaches the watch first. Judged in watch order b would
    disagree (n1 is best on an empty cluster); judged in queue order both agree."""
    events = [
        create(1.0, pod("a")),
        create(1.01, pod("b")),
        bind(1.02, "b", "n2"),
        bind(1.03, "a", "n1"),
    ]
    report = replay(trace([node("n1", cpu="5"), node("n2")], events), follow_recorded=True)
    assert report["agreement"] == agreement(2, 2)
    # a deletion between the two bindings ends the burst: b is judged before a
    cut = [*events[:3], delete(1.025, "gone"), events[3]]
    gone = create(0.5, pod("gone", cpu="100m"))
    report = replay(trace([node("n1", cpu="5"), node("n2")], [gone, *cut]), follow_recorded=True)
    assert by_pod(report)["b"]["decision"]["agreed"] is False

"""What ``run_scenario`` reports beyond placements: per-node usage, the event timeline
(with simulated times), score weights in ``explain``, the plot history, and the options
that trim the report for large scenarios."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from ksched.simulate import parse_scenario, run_scenario

NODES = """
  - {apiVersion: v1, kind: Node, metadata: {name: n1},
     status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}}
  - {apiVersion: v1, kind: Node, metadata: {name: n2},
     status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}}
"""

BASIC = f"""
apiVersion: ksched/v1alpha1
kind: Scenario
metadata: {{name: basic}}
config:
  apiVersion: kubescheduler.config.k8s.io/v1
  kind: KubeSchedulerConfiguration
  percentageOfNodesToScore: 100
  profiles:
    - schedulerName: default-scheduler
      plugins:
        multiPoint:
          enabled:
            - {{name: PrioritySort}}
            - {{name: NodeResourcesFit, weight: 3}}
            - {{name: NodeResourcesBalancedAllocation, weight: 1}}
            - {{name: DefaultBinder}}
          disabled: [{{name: "*"}}]
objects:
{NODES}
  - {{apiVersion: v1, kind: Pod, metadata: {{name: running}},
     spec: {{nodeName: n1, containers: [{{name: c, resources: {{requests: {{cpu: 500m,
     memory: 1Gi}}}}}}]}}}}
  - {{apiVersion: v1, kind: Pod, metadata: {{name: web}},
     spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "1", memory: 1Gi}}}}}}]}}}}
  - {{apiVersion: v1, kind: Pod, metadata: {{name: huge}},
     spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "16"}}}}}}]}}}}
steps:
  - settle: {{}}
  - advance: 30s
  - delete: [{{kind: Pod, name: running}}]
"""


def run(text: str, **options: Any) -> dict[str, Any]:
    return run_scenario(parse_scenario(yaml.safe_load(text)), **options)


def test_nodes_report_requested_and_allocatable() -> None:
    report = run(BASIC)
    # web (1 cpu, 1Gi) lands on n2: LeastAllocated prefers the emptier, bigger node.
    assert report["pods"]["default/web"]["node"] == "n2"
    assert report["nodes"] == {
        # "running" was deleted by the last step: n1 is empty again.
        "n1": {
            "requested": {"cpu": 0.0, "memory": 0, "pods": 0},
            "allocatable": {"cpu": 2.0, "memory": 4 << 30, "pods": 10},
        },
        "n2": {
            "requested": {"cpu": 1.0, "memory": 1 << 30, "pods": 1},
            "allocatable": {"cpu": 4.0, "memory": 8 << 30, "pods": 10},
        },
    }


def test_events_have_simulated_times_and_run_events() -> None:
    report = run(BASIC)
    events = [(e["time"], e["kind"], e["pod"]) for e in report["events"]]
    assert (0.0, "Bound", "default/web") in events
    assert (0.0, "Unschedulable", "default/huge") in events
    # The delete step happened after settle + 30 s of simulated time.
    assert (30.0, "Deleted", "default/running") in events
    deleted = next(e for e in report["events"] if e["kind"] == "Deleted")
    assert deleted["details"] == {"node": "n1"}
    times = [e["time"] for e in report["events"]]
    assert times == sorted(times)


def test_explain_carries_the_weights_of_the_scoring_plugins() -> None:
    entry = run(BASIC, explain=True)["explain"]["default/web"]
    assert entry["weights"] == {"NodeResourcesFit": 3, "NodeResourcesBalancedAllocation": 1}
    for node, scores in entry["scores"].items():
        total = sum(scores[p] * w for p, w in entry["weights"].items())
        assert scores["total"] == total, node
    assert entry["selected"] == "n2"


def test_explain_options() -> None:
    assert run(BASIC)["explain"] == {}
    assert run(BASIC, explain=False)["explain"] == {}
    assert set(run(BASIC, explain=True)["explain"]) == {"default/web", "default/huge"}
    only = run(BASIC, explain=["default/huge"])["explain"]
    assert set(only) == {"default/huge"}
    assert only["default/huge"]["filter"]["n1"]["reasons"] == ["Insufficient cpu"]
    with pytest.raises(TypeError, match="not a str"):
        run(BASIC, explain="default/huge")


def test_events_and_history_are_optional() -> None:
    report = run(BASIC, events=False)
    assert "events" not in report and "history" not in report
    history = run(BASIC, history=True)["history"]
    assert history["allocatable"]["n2"] == {"cpu": 4.0, "memory": 8 << 30, "pods": 10}
    # [time, node, cpu, memory, pods] after each change: running added, web bound,
    # running deleted at t=30 s.
    assert history["usage"] == [
        [0.0, "n1", 0.5, 1 << 30, 1],
        [0.0, "n2", 1.0, 1 << 30, 1],
        [30.0, "n1", 0.0, 0, 0],
    ]
    assert history["bound"] == [[0.0, 1]]


def test_usage_is_the_same_with_and_without_history() -> None:
    # Without history the usage is read from the cluster at the end; with it, it is kept
    # from every change: the two agree, the deletion at t=30 s included.
    plain = run(BASIC, events=False)
    with_history = run(BASIC, events=False, history=True)
    assert plain["nodes"] == with_history["nodes"]
    assert list(plain["nodes"]) == ["n1", "n2"]


def test_without_a_reader_the_engine_makes_no_events() -> None:
    import trio
    import trio.testing

    from ksched.simulate._runner import _Run

    scenario = parse_scenario(yaml.safe_load(BASIC))

    async def main() -> None:
        quiet = _Run(scenario, 0, None, events=False)
        assert quiet.scheduler.observer.on_event is None
        seen: list[Any] = []
        watched = _Run(scenario, 0, seen.append, events=False)
        assert watched.scheduler.observer.on_event is not None
        assert _Run(scenario, 0, None, events=True).scheduler.observer.on_event is not None
        assert _Run(scenario, 0, None, events=False, history=True).scheduler.observer.on_event

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


PREEMPTION = f"""
apiVersion: ksched/v1alpha1
kind: Scenario
metadata: {{name: preempt}}
objects:
  - {{apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {{name: high}}, value: 1000}}
{NODES}
  - {{apiVersion: v1, kind: Pod, metadata: {{name: low-1}},
     spec: {{nodeName: n1, containers: [{{name: c, resources: {{requests: {{cpu: "2"}}}}}}]}}}}
  - {{apiVersion: v1, kind: Pod, metadata: {{name: low-2}},
     spec: {{nodeName: n2, containers: [{{name: c, resources: {{requests: {{cpu: "4"}}}}}}]}}}}
  - {{apiVersion: v1, kind: Pod, metadata: {{name: vip}},
     spec: {{priorityClassName: high,
            containers: [{{name: c, resources: {{requests: {{cpu: "2"}}}}}}]}}}}
"""


def test_preemption_events() -> None:
    report = run(PREEMPTION)
    kinds = [(e["kind"], e["pod"]) for e in report["events"]]
    preempted = [pod for kind, pod in kinds if kind == "Preempted"]
    assert len(preempted) == 1
    assert report["evicted"] == preempted
    assert ("Nominated", "default/vip") in kinds
    # The order a person reads: a victim is evicted, vip fails and is nominated, then bound.
    order = [k for k, pod in kinds if pod == "default/vip" or k == "Preempted"]
    assert order == [
        "Queued",
        "Attempted",
        "Preempted",
        "Unschedulable",
        "Nominated",
        "Attempted",
        "Bound",
    ]
    nominated = next(e for e in report["events"] if e["kind"] == "Nominated")
    assert nominated["details"] == {"node": "n2"}


GANG = """
apiVersion: ksched/v1alpha1
kind: Scenario
metadata: {name: gang-timeout}
config:
  apiVersion: kubescheduler.config.k8s.io/v1
  kind: KubeSchedulerConfiguration
  profiles:
    - schedulerName: default-scheduler
      plugins:
        multiPoint:
          enabled: [{name: Coscheduling}, {name: NodeResourcesFit}, {name: NodeAffinity},
                    {name: DefaultBinder}]
          disabled: [{name: "*"}]
      pluginConfig:
        - name: Coscheduling
          args: {permitWaitingTimeSeconds: 60, podGroupRejectPercentage: 100}
objects:
  - {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {zone: a}},
     status: {allocatable: {cpu: "2", memory: 8Gi, pods: "32"}}}
  - {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {name: pg},
     spec: {minMember: 3, scheduleTimeoutSeconds: 10}}
  - {apiVersion: v1, kind: Pod, metadata: {name: p1, labels: {scheduling.x-k8s.io/pod-group: pg}},
     spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  - {apiVersion: v1, kind: Pod, metadata: {name: p2, labels: {scheduling.x-k8s.io/pod-group: pg}},
     spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  - {apiVersion: v1, kind: Pod, metadata: {name: p3, labels: {scheduling.x-k8s.io/pod-group: pg}},
     spec: {nodeSelector: {zone: b}, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
steps:
  - advance: 11s
"""


@pytest.mark.parametrize("pod", ["default/p1", "default/p2"])
def test_permit_wait_and_timeout_events(pod: str) -> None:
    events = [e for e in run(GANG)["events"] if e["pod"] == pod]
    kinds = [(e["time"], e["kind"]) for e in events]
    assert (0.0, "WaitingOnPermit") in kinds
    # scheduleTimeoutSeconds: 10 ends the wait at t=10 s of simulated time.
    rejected = next(e for e in events if e["kind"] == "PermitRejected")
    assert rejected["time"] == 10.0
    assert "rejected due to timeout after waiting 10s" in rejected["details"]["message"]


PORT_POD = """
  - {{apiVersion: v1, kind: Pod, metadata: {{name: {name}}},
     spec: {{containers: [{{name: c, ports: [{{containerPort: 80, hostPort: 80}}],
                           resources: {{requests: {{cpu: "1"}}}}}}]}}}}"""
PORT_NODE = """
  - {{apiVersion: v1, kind: Node, metadata: {{name: {name}}},
     status: {{allocatable: {{cpu: "{cpu}", memory: 8Gi, pods: "110"}}}}}}"""
ONE_POD_PER_NODE = (
    """
apiVersion: ksched/v1alpha1
kind: Scenario
metadata: {name: one-pod-per-node}
config:
  apiVersion: kubescheduler.config.k8s.io/v1
  kind: KubeSchedulerConfiguration
  profiles:
  - schedulerName: default-scheduler
    pluginConfig:
    - name: PodTopologySpread
      args: {defaultingType: List, defaultConstraints: []}
objects:"""
    + "".join(PORT_NODE.format(name=f"n{i}", cpu=2 + 2 * i) for i in (1, 2, 3))
    + "".join(PORT_POD.format(name=f"gpu-{i}") for i in range(3))
)


@pytest.mark.parametrize("batching", [True, False])
def test_explain_marks_pods_placed_on_a_batching_hint(batching: bool) -> None:
    """Equal pods, one per node (host port 80): the second and third take the first pod's
    ranking (n3 > n2 > n1 by free cpu) without a Score pass."""
    report = run(ONE_POD_PER_NODE, opportunistic_batching=batching, explain=True)
    placed = {k: v["node"] for k, v in report["pods"].items()}
    assert placed == {"default/gpu-0": "n3", "default/gpu-1": "n2", "default/gpu-2": "n1"}
    hinted = {k: v.get("hinted", False) for k, v in report["explain"].items()}
    assert hinted == {"default/gpu-0": False, "default/gpu-1": batching, "default/gpu-2": batching}
    if batching:
        assert report["explain"]["default/gpu-1"]["scores"] == {}
        assert list(report["explain"]["default/gpu-1"]["filter"]) == ["n2"]

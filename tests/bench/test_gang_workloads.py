"""scheduler_perf's gangscheduling workloads: PodGroups by createAny, waitForPodGroups,
createPods' templateParams and countMultiplierParam, and the GangScheduling gate."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from ksched.bench import plans
from ksched.bench._errors import WorkloadError
from ksched.bench._ops import _config, run_plan
from ksched.bench._workload import CreatePods, WaitForPodGroups

GANG = (
    Path(__file__).parents[2]
    / "benchmarks"
    / "workloads"
    / "gangscheduling"
    / "performance-config.yaml"
)


def test_gang_workload_plans_its_pods_per_group() -> None:
    [p] = plans(str(GANG), "GangScheduling/100Nodes_10Gangs")
    [wait] = [op for op in p.ops if isinstance(op, WaitForPodGroups)]
    [pods] = [op for op in p.ops if isinstance(op, CreatePods)]
    assert (wait.namespace, wait.count) == ("gang-0", 10)
    assert (pods.count, dict(pods.template_params)) == (30, {"podsPerGroup": 3})
    assert not p.notes  # GangScheduling and GenericWorkload are honoured, not ignored
    config = _config(p)
    assert config is not None
    [profile] = config.profiles
    assert "GangScheduling" in {ref.name for ref in profile.plugins["multiPoint"].enabled}


@pytest.mark.anyio
async def test_gangs_schedule_every_member() -> None:
    [p] = plans(str(GANG), "GangScheduling/10Nodes_3Gangs")
    result = await run_plan(p)
    assert (result.nodes, result.measured_pods) == (10, 9)


def test_wait_for_pod_groups_fails_when_groups_are_missing(tmp_path: Path) -> None:
    path = tmp_path / "missing.yaml"
    path.write_text(
        """
- name: Missing
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: waitForPodGroups
    namespace: gang-0
    count: 2
  - opcode: createPods
    count: 1
    collectMetrics: true
  workloads:
  - name: one
"""
    )
    [p] = plans(str(path), "Missing/one")
    with pytest.raises(WorkloadError, match="0/2 PodGroups in namespace gang-0"):
        anyio.run(run_plan, p)


def test_template_params_name_defined_params(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text(
        """
- name: Params
  workloadTemplate:
  - opcode: createPods
    count: 1
    countMultiplierParam: $times
    templateParams: {size: $nope}
  workloads:
  - name: one
    params: {times: 2}
"""
    )
    with pytest.raises(WorkloadError, match="parameter nope is undefined"):
        plans(str(path), "Params/one")


def test_threshold_on_another_metric_is_not_a_throughput_threshold() -> None:
    [p] = plans(str(GANG), "GangScheduling/5000Nodes_1000Gangs_3000Pods")
    assert p.workload.threshold is None
    assert p.workload.other_threshold == (
        "scheduler_podgroup_scheduling_attempt_duration_seconds",
        8.0,
    )
    assert any("threshold 8 on scheduler_podgroup" in note for note in p.notes)

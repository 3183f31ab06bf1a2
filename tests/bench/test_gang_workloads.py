"""scheduler_perf's gangscheduling workloads: PodGroups by createAny, waitForPodGroups,
createPods' templateParams and countMultiplierParam, and the GangScheduling gate."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from ksched.bench import plans
from ksched.bench._errors import WorkloadError
from ksched.bench._ops import _config, run_plan
from ksched.bench._report import to_json
from ksched.bench._testcase import MetricThreshold
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
    assert p.workload.metric_threshold == MetricThreshold(
        name="scheduler_podgroup_scheduling_attempt_duration_seconds",
        value=8.0,
        labels={"result": "scheduled"},
        data_bucket="Average",
        expect_lower=True,
    )
    assert not p.notes  # ksched records the metric: compared, not noted as skipped


def _gang_file(tmp_path: Path, selector: str, threshold: float = 8) -> Path:
    text = GANG.read_text()
    head = text[: text.index("  workloads:")]
    shutil.copytree(GANG.parent / "templates", tmp_path / "templates")
    path = tmp_path / "gang.yaml"
    path.write_text(
        head
        + f"""  workloads:
  - name: small
    threshold: {threshold}
    thresholdMetricSelector:
{selector}
    params:
      initNodes: 20
      initPodGroups: 6
      podsPerGroup: 3
"""
    )
    return path


@pytest.mark.anyio
async def test_pod_group_attempt_duration_is_measured_against_the_threshold(
    tmp_path: Path,
) -> None:
    path = _gang_file(
        tmp_path,
        """      name: scheduler_podgroup_scheduling_attempt_duration_seconds
      labels:
        result: scheduled
      dataBucket: Average
      expectLower: true""",
        threshold=1000,
    )
    [p] = plans(str(path), "GangScheduling/small")
    result = await run_plan(p)
    assert result.measured_pods == 18
    assert result.metric_threshold is not None and result.metric_data is not None
    average = result.metric_data["Average"]
    # six gangs, each placed in one pod-group cycle: a real duration, well under 1 s
    assert 0 < average < 1000
    assert result.metric_data["Perc50"] <= result.metric_data["Perc99"]
    out = to_json(result)
    assert out["thresholdMetric"]["threshold"] == 1000
    assert out["thresholdMetric"]["data"]["Average"] == pytest.approx(average, abs=1e-3)


def test_metric_selector_needs_a_data_bucket(tmp_path: Path) -> None:
    path = _gang_file(
        tmp_path,
        """      name: scheduler_podgroup_scheduling_attempt_duration_seconds
      expectLower: true""",
    )
    with pytest.raises(WorkloadError, match="dataBucket should be set for metric"):
        plans(str(path), "GangScheduling/small")


def test_a_metric_ksched_does_not_record_is_noted(tmp_path: Path) -> None:
    path = _gang_file(
        tmp_path,
        """      name: scheduler_something_else_seconds
      dataBucket: Perc99""",
    )
    [p] = plans(str(path), "GangScheduling/small")
    assert any("ksched does not record that metric" in note for note in p.notes)

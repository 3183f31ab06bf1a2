"""scheduler_perf's DRA workloads: createResourceDriver, claim templates and shared claims."""

from __future__ import annotations

from pathlib import Path

import pytest

from ksched.bench import plans
from ksched.bench._dra import CreateResourceDriver, resource_slices
from ksched.bench._errors import WorkloadError
from ksched.bench._ops import run_plan
from ksched.testing import make_node

DRA = Path(__file__).parents[2] / "benchmarks" / "workloads" / "dra" / "performance-config.yaml"


def test_resource_driver_publishes_a_slice_per_matching_node() -> None:
    op = CreateResourceDriver(
        index=2,
        driver="test-driver.cdi.k8s.io",
        nodes="scheduler-perf-dra-*",
        max_claims_per_node=3,
    )
    nodes = [
        make_node(n).obj() for n in ("scheduler-perf-dra-0", "other-0", "scheduler-perf-dra-1")
    ]
    slices = resource_slices(op, nodes)
    assert [(s.name, s.node_name, s.pool.name) for s in slices] == [
        ("scheduler-perf-dra-0", "scheduler-perf-dra-0", "scheduler-perf-dra-0"),
        ("scheduler-perf-dra-1", "scheduler-perf-dra-1", "scheduler-perf-dra-1"),
    ]
    assert [d.name for d in slices[0].devices] == ["instance-0", "instance-1", "instance-2"]
    assert slices[0].devices[2].attributes["dra.example.com/numa"].value == 2


@pytest.mark.anyio
@pytest.mark.parametrize(
    "name", ["SchedulingWithResourceClaimTemplate/fast", "SchedulingWithResourceClaim/fast"]
)
async def test_fast_workloads_schedule_every_measured_pod(name: str) -> None:
    [p] = plans(str(DRA), name)
    assert any(isinstance(op, CreateResourceDriver) for op in p.ops)
    result = await run_plan(p)
    assert (result.nodes, result.measured_pods) == (2, 10)
    assert result.attempts == 10


def test_device_binding_condition_ops_are_named(tmp_path: Path) -> None:
    path = tmp_path / "conditions.yaml"
    path.write_text(
        """
- name: Conditions
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: updateDeviceConditions
    namespace: test
  workloads:
  - name: one
"""
    )
    with pytest.raises(WorkloadError, match="DRA device binding conditions are not implemented"):
        plans(str(path), "Conditions/one")

"""scheduler_perf's DRA op: createResourceDriver publishes devices for matching nodes.

# test/integration/scheduler_perf/dra.go: createResourceDriverOp (driverName, nodes as a
# filepath.Match glob over node names, maxClaimsPerNode[Param]) and resourceSlice: one
# ResourceSlice per node, named after it, pool = node, one slice per pool, devices
# instance-0..N-1 with attributes model "A100", family "GPU", driverVersion 1.2.3,
# dra.example.com/numa = i and capacity memory 1Gi.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import Any

import attrs

from ..api import Device, DeviceAttribute, Node, ObjectMeta, ResourcePool, ResourceSlice, SemVer
from ._errors import WorkloadError

__all__ = ["CreateResourceDriver", "parse_resource_driver", "resource_slices"]

FIELDS = {"opcode", "driverName", "nodes", "maxClaimsPerNode", "maxClaimsPerNodeParam"}


@attrs.frozen(kw_only=True)
class CreateResourceDriver:
    index: int
    driver: str
    nodes: str
    max_claims_per_node: int


def parse_resource_driver(
    op: Mapping[str, Any], index: int, where: str, param: Callable[[str, str], Any]
) -> CreateResourceDriver:
    """The op from its fields; ``param(ref, where)`` resolves ``$name`` references."""
    driver = str(op.get("driverName") or "")
    if not driver:
        raise WorkloadError(f"{where}: DriverName must be set")
    nodes = str(op.get("nodes") or "")
    if not nodes:
        raise WorkloadError(f"{where}: Nodes must be set")
    raw = op.get("maxClaimsPerNode", 0)
    if op.get("maxClaimsPerNodeParam"):
        raw = param(str(op["maxClaimsPerNodeParam"]), where)
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        raise WorkloadError(f"{where}: invalid MaxClaimsPerNode {raw!r}")
    return CreateResourceDriver(index=index, driver=driver, nodes=nodes, max_claims_per_node=raw)


def _device(i: int) -> Device:
    return Device(
        name=f"instance-{i}",
        attributes={
            "model": DeviceAttribute("A100"),
            "family": DeviceAttribute("GPU"),
            "driverVersion": DeviceAttribute(SemVer("1.2.3")),
            "dra.example.com/numa": DeviceAttribute(i),
        },
        capacity={"memory": Fraction(1024**3)},
    )


def resource_slices(op: CreateResourceDriver, nodes: Iterable[Node]) -> list[ResourceSlice]:
    """One slice per node whose name matches ``op.nodes``."""
    devices = tuple(_device(i) for i in range(op.max_claims_per_node))
    return [
        ResourceSlice(
            metadata=ObjectMeta(name=node.name, namespace=""),
            driver=op.driver,
            pool=ResourcePool(name=node.name, generation=0, resource_slice_count=1),
            node_name=node.name,
            devices=devices,
        )
        for node in nodes
        if fnmatch.fnmatchcase(node.name, op.nodes)
    ]

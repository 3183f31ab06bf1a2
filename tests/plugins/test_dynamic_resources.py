"""DynamicResources: upstream allocator_testing.go (TestAllocator) and
dynamicresources_test.go (TestPlugin), with upstream case names as ids."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import pytest

from ksched.api import (
    AllocationResult,
    Device,
    DeviceAttribute,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodResourceClaim,
    PodResourceClaimStatus,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourcePool,
    ResourceSlice,
    SemVer,
    compile_selector,
)
from ksched.framework import Code, CycleState, NodeInfo, NodeToStatus, QueueingHint, Status
from ksched.plugins.dynamic_resources import AllocationError, Allocator, DynamicResources
from ksched.testing import FakeHandle, make_node, make_pod

GI = 1024**3
NODE1, NODE2 = "node-1", "node-2"
CLASS_A, CLASS_B = "class-a", "class-b"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"

# ---- builders shaped like allocator_testing.go's ------------------------------------


def node(name: str, region: str) -> Node:
    return make_node(name).label("region", region).label("planet", "earth").obj()


def klass(name: str, driver: str, *selectors: str) -> DeviceClass:
    return DeviceClass(
        metadata=ObjectMeta(name=name, namespace=""),
        selectors=(f'device.driver == "{driver}"', *selectors),
    )


def device(name: str, memory: str | None = None, **attributes: Any) -> Device:
    attrs = {
        k: DeviceAttribute(SemVer(v[1:]) if isinstance(v, str) and v.startswith("v") else v)
        for k, v in attributes.items()
    }
    capacity = {"memory": Fraction(int(memory.removesuffix("Gi")) * GI)} if memory else {}
    return Device(name=name, attributes=attrs, capacity=capacity)


def slice_(
    name: str,
    where: str | bool | NodeSelector,
    pool: str,
    driver: str,
    *devices: Device,
    generation: int = 0,
    count: int = 1,
) -> ResourceSlice:
    return ResourceSlice(
        metadata=ObjectMeta(name=name, namespace=""),
        driver=driver,
        pool=ResourcePool(name=pool, generation=generation, resource_slice_count=count),
        node_name=where if isinstance(where, str) else None,
        all_nodes=where is True,
        node_selector=where if isinstance(where, NodeSelector) else None,
        devices=devices or (device("device-1"),),
    )


def request(
    name: str, cls: str, count: int = 1, *selectors: str, mode: str = "ExactCount"
) -> DeviceRequest:
    return DeviceRequest(
        name=name, device_class_name=cls, count=count, selectors=selectors, allocation_mode=mode
    )


def prioritized(name: str, *subs: DeviceSubRequest) -> DeviceRequest:
    return DeviceRequest(name=name, first_available=subs)


def sub(name: str, cls: str, count: int = 1, *selectors: str) -> DeviceSubRequest:
    return DeviceSubRequest(name=name, device_class_name=cls, count=count, selectors=selectors)


def claim(
    name: str,
    *requests: DeviceRequest,
    constraints: Sequence[DeviceConstraint] = (),
    namespace: str = "default",
    uid: str = "",
) -> ResourceClaim:
    return ResourceClaim(
        metadata=ObjectMeta(name=name, namespace=namespace, uid=uid),
        spec=ResourceClaimSpec(requests=requests, constraints=tuple(constraints)),
    )


def label_selector(key: str, *values: str) -> NodeSelector:
    req = NodeSelectorRequirement(key=key, operator="In", values=values)
    return NodeSelector(terms=(NodeSelectorTerm(match_expressions=(req,)),))


def local(node_name: str) -> NodeSelector:
    req = NodeSelectorRequirement(key="metadata.name", operator="In", values=(node_name,))
    return NodeSelector(terms=(NodeSelectorTerm(match_fields=(req,)),))


def result(selector: NodeSelector | None, *devices: tuple[str, str, str, str]) -> AllocationResult:
    return AllocationResult(
        devices=tuple(
            DeviceRequestAllocationResult(request=r, driver=d, pool=p, device=n)
            for r, d, p, n in devices
        ),
        node_selector=selector,
    )


def allocated(name: str, *devices: tuple[str, str, str, str]) -> ResourceClaim:
    c = claim(name, request("req-0", CLASS_A))
    return ResourceClaim(
        metadata=c.metadata,
        spec=c.spec,
        status=ResourceClaimStatus(allocation=result(None, *devices)),
    )


def mem(q: str) -> str:
    return f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{q}")) >= 0'


def matcher(expression: str, dev: Device, driver: str) -> bool:
    return compile_selector(expression).matches(dev, driver)


# ---- TestAllocator --------------------------------------------------------------------

ClassesSlices = tuple[Sequence[DeviceClass], Sequence[ResourceSlice]]
A = (klass(CLASS_A, DRIVER_A),)
AB = (klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B))


def _memory_slice(*devices: tuple[str, str]) -> ResourceSlice:
    return slice_("slice-1", NODE1, "pool-1", DRIVER_A, *(device(n, m) for n, m in devices))


def _attr_slice(attr: str, a: Any, b: Any) -> ResourceSlice:
    return slice_(
        "slice-1",
        NODE1,
        "pool-1",
        DRIVER_A,
        device("device-1", **{attr: a}),
        device("device-2", **{attr: b}),
    )


ALL4: dict[str, Any] = dict(
    driverVersion="v1.0.0", numa=1, stringAttribute="stringAttributeValue", boolAttribute=True
)

ALLOCATOR_CASES: list[tuple[str, Any]] = [
    ("empty", dict(claims=[], classes=(), slices=(), want=[])),
    (
        "simple",
        dict(
            claims=[claim("claim-0", request("req-0", CLASS_A))],
            classes=A,
            slices=[slice_("slice-1", NODE1, "pool-1", DRIVER_A)],
            want=[result(local(NODE1), ("req-0", DRIVER_A, "pool-1", "device-1"))],
        ),
    ),
    (
        "other-node",
        dict(
            claims=[claim("claim-0", request("req-0", CLASS_A))],
            classes=A,
            slices=[
                slice_("slice-1", NODE1, "pool-1", DRIVER_B),
                slice_("slice-2", NODE2, "pool-2", DRIVER_A),
            ],
            node=node(NODE2, "region-2"),
            want=[result(local(NODE2), ("req-0", DRIVER_A, "pool-2", "device-1"))],
        ),
    ),
    (
        "small-and-large",
        dict(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", CLASS_A, 1, mem("1Gi")),
                    request("req-1", CLASS_A, 1, mem("2Gi")),
                )
            ],
            classes=A,
            slices=[_memory_slice(("device-1", "1Gi"), ("device-2", "2Gi"))],
            want=[
                result(
                    local(NODE1),
                    ("req-0", DRIVER_A, "pool-1", "device-1"),
                    ("req-1", DRIVER_A, "pool-1", "device-2"),
                )
            ],
        ),
    ),
    (
        "small-and-large-backtrack-requests",
        dict(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", CLASS_A, 1, mem("1Gi")),
                    request("req-1", CLASS_A, 1, mem("2Gi")),
                )
            ],
            classes=A,
            slices=[_memory_slice(("device-2", "2Gi"), ("device-1", "1Gi"))],
            want=[
                result(
                    local(NODE1),
                    ("req-0", DRIVER_A, "pool-1", "device-1"),
                    ("req-1", DRIVER_A, "pool-1", "device-2"),
                )
            ],
        ),
    ),
    (
        "small-and-large-backtrack-claims",
        dict(
            claims=[
                claim("claim-0", request("req-0", CLASS_A, 1, mem("1Gi"))),
                claim("claim-1", request("req-1", CLASS_A, 1, mem("2Gi"))),
            ],
            classes=A,
            slices=[_memory_slice(("device-2", "2Gi"), ("device-1", "1Gi"))],
            want=[
                result(local(NODE1), ("req-0", DRIVER_A, "pool-1", "device-1")),
                result(local(NODE1), ("req-1", DRIVER_A, "pool-1", "device-2")),
            ],
        ),
    ),
    (
        "devices-split-across-different-slices",
        dict(
            claims=[claim("claim-0", request("req-0", CLASS_A, 2))],
            classes=A,
            slices=[
                slice_("slice-1", NODE1, "pool-1", DRIVER_A),
                slice_("slice-2", NODE1, "pool-2", DRIVER_A),
            ],
            want=[
                result(
                    local(NODE1),
                    ("req-0", DRIVER_A, "pool-1", "device-1"),
                    ("req-0", DRIVER_A, "pool-2", "device-1"),
                )
            ],
        ),
    ),
    (
        "obsolete-slice",
        dict(
            claims=[claim("claim-0", request("req-0", CLASS_A))],
            classes=A,
            slices=[
                slice_("slice-1-obsolete", NODE1, "pool-1", DRIVER_A, device("old")),
                slice_("slice-1", NODE1, "pool-1", DRIVER_A, generation=1),
            ],
            want=[result(local(NODE1), ("req-0", DRIVER_A, "pool-1", "device-1"))],
        ),
    ),
    (
        "no-slices",
        dict(claims=[claim("claim-0", request("req-0", CLASS_A))], classes=A, slices=[], want=None),
    ),
    (
        "not-enough-suitable-devices",
        dict(
            claims=[
                claim("claim-0", request("req-0", CLASS_A)),
                claim("claim-0", request("req-1", CLASS_A)),
            ],
            classes=A,
            slices=[slice_("slice-1", NODE1, "pool-1", DRIVER_A)],
            want=None,
        ),
    ),
    (
        "no-classes",
        dict(
            claims=[claim("claim-0", request("req-0", CLASS_A))],
            classes=(),
            slices=[slice_("slice-1", NODE1, "pool-1", DRIVER_A)],
            error="could not retrieve device class class-a",
        ),
    ),
    (
        "unknown-class",
        dict(
            claims=[claim("claim-0", request("req-0", "unknown-class"))],
            classes=A,
            slices=[slice_("slice-1", NODE1, "pool-1", DRIVER_A)],
            error="could not retrieve device class unknown-class",
        ),
    ),
    (
        "no-claims-to-allocate",
        dict(claims=[], classes=A, slices=[slice_("slice-1", NODE1, "pool-1", DRIVER_A)], want=[]),
    ),
    (
        "all-devices",
        dict(
            claims=[claim("claim-0", request("req-0", CLASS_A, mode="All"))],
            classes=A,
            slices=[slice_("slice-1", NODE1, "pool-1", DRIVER_A)],
            want=[result(local(NODE1), ("req-0", DRIVER_A, "pool-1", "device-1"))],
        ),
    ),
    (
        "all-devices-of-the-incomplete-pool",
        dict(
            claims=[claim("claim-0", request("req-0", CLASS_A, mode="All"))],
            classes=A,
            slices=[slice_("slice-1", NODE1, "pool-1", DRIVER_A, count=2)],
            error=(
                "claim default/claim-0, request req-0: asks for all devices, but resource pool "
                "driver-a/pool-1 is currently being updated"
            ),
        ),
    ),
    (
        "network-attached-device",
        dict(
            claims=[claim("claim-0", request("req-0", CLASS_A))],
            classes=A,
            slices=[slice_("slice-1", label_selector("region", "region-1"), "pool-1", DRIVER_A)],
            want=[
                result(
                    label_selector("region", "region-1"), ("req-0", DRIVER_A, "pool-1", "device-1")
                )
            ],
        ),
    ),
    (
        "unsuccessful-allocation-network-attached-device",
        dict(
            claims=[claim("claim-0", request("req-0", CLASS_A))],
            classes=A,
            slices=[slice_("slice-1", label_selector("region", "region-1"), "pool-1", DRIVER_A)],
            node=node(NODE2, "region-2"),
            want=None,
        ),
    ),
    (
        "many-network-attached-devices",
        dict(
            claims=[claim("claim-0", request("req-0", CLASS_A, 4))],
            classes=A,
            slices=[
                slice_("slice-1", label_selector("region", "region-1"), "pool-1", DRIVER_A),
                slice_("slice-1", True, "pool-2", DRIVER_A),
                slice_("slice-1", label_selector("planet", "earth"), "pool-3", DRIVER_A),
                slice_("slice-1", local(NODE1), "pool-4", DRIVER_A),
            ],
            want=[
                AllocationResult(
                    devices=result(
                        None,
                        ("req-0", DRIVER_A, "pool-1", "device-1"),
                        ("req-0", DRIVER_A, "pool-2", "device-1"),
                        ("req-0", DRIVER_A, "pool-3", "device-1"),
                        ("req-0", DRIVER_A, "pool-4", "device-1"),
                    ).devices,
                    node_selector=NodeSelector(
                        terms=(
                            NodeSelectorTerm(
                                match_expressions=(
                                    label_selector("region", "region-1")
                                    .terms[0]
                                    .match_expressions[0],
                                    label_selector("planet", "earth").terms[0].match_expressions[0],
                                ),
                                match_fields=local(NODE1).terms[0].match_fields,
                            ),
                        )
                    ),
                )
            ],
        ),
    ),
    (
        "local-and-network-attached-devices",
        dict(
            claims=[claim("claim-0", request("req-0", CLASS_A, 2))],
            classes=A,
            slices=[
                slice_("slice-1", label_selector("region", "region-1"), "pool-1", DRIVER_A),
                slice_("slice-1", NODE1, "pool-2", DRIVER_A),
            ],
            want=[
                result(
                    local(NODE1),
                    ("req-0", DRIVER_A, "pool-1", "device-1"),
                    ("req-0", DRIVER_A, "pool-2", "device-1"),
                )
            ],
        ),
    ),
    (
        "several-different-drivers",
        dict(
            claims=[
                claim("claim-0", request("req-0", CLASS_A)),
                claim("claim-0", request("req-0", CLASS_B)),
            ],
            classes=AB,
            slices=[
                slice_(
                    "slice-1", NODE1, "pool-1", DRIVER_A, device("device-1"), device("device-2")
                ),
                slice_("slice-1", NODE1, "pool-1", DRIVER_B),
            ],
            want=[
                result(local(NODE1), ("req-0", DRIVER_A, "pool-1", "device-1")),
                result(local(NODE1), ("req-0", DRIVER_B, "pool-1", "device-1")),
            ],
        ),
    ),
    (
        "already-allocated-devices",
        dict(
            claims=[claim("claim-0", request("req-0", CLASS_A))],
            allocated=[
                allocated(
                    "claim-0",
                    ("req-0", DRIVER_A, "pool-1", "device-1"),
                    ("req-1", DRIVER_A, "pool-1", "device-2"),
                )
            ],
            classes=A,
            slices=[slice_("slice-1", NODE1, "pool-1", DRIVER_A)],
            want=None,
        ),
    ),
    (
        "with-constraint",
        dict(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", CLASS_A),
                    request("req-1", CLASS_A),
                    constraints=[
                        DeviceConstraint(match_attribute=a)
                        for a in ("numa", "driverVersion", "stringAttribute", "boolAttribute")
                    ],
                )
            ],
            classes=A,
            slices=[
                slice_(
                    "slice-1",
                    NODE1,
                    "pool-1",
                    DRIVER_A,
                    device("device-1", **ALL4),
                    device("device-2", **ALL4),
                )
            ],
            want=[
                result(
                    local(NODE1),
                    ("req-0", DRIVER_A, "pool-1", "device-1"),
                    ("req-1", DRIVER_A, "pool-1", "device-2"),
                )
            ],
        ),
    ),
    (
        "with-constraint-non-existent-attribute",
        dict(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", CLASS_A),
                    constraints=[DeviceConstraint(match_attribute="NonExistentAttribute")],
                )
            ],
            classes=A,
            slices=[slice_("slice-1", NODE1, "pool-1", DRIVER_A)],
            want=None,
        ),
    ),
    *[
        (
            f"with-constraint-not-matching-{kind}-attribute",
            dict(
                claims=[
                    claim(
                        "claim-0",
                        request("req-0", CLASS_A, 3),
                        constraints=[DeviceConstraint(match_attribute=attr)],
                    )
                ],
                classes=AB,
                slices=[_attr_slice(attr, a, b)],
                want=None,
            ),
        )
        for kind, attr, a, b in [
            ("int", "numa", 1, 2),
            ("version", "driverVersion", "v1.0.0", "v2.0.0"),
            ("string", "stringAttribute", "stringAttributeValue", "stringAttributeValue2"),
            ("bool", "boolAttribute", True, False),
        ]
    ],
    (
        "invalid-CEL-one-device",
        dict(
            claims=[claim("claim-0", request("req-0", CLASS_A, 1, "noSuchVar"))],
            classes=A,
            slices=[slice_("slice-1", NODE1, "pool-1", DRIVER_A)],
            error="undeclared reference",
        ),
    ),
    (
        "invalid-CEL-one-device-class",
        dict(
            claims=[claim("claim-0", request("req-0", CLASS_A))],
            classes=(
                DeviceClass(
                    metadata=ObjectMeta(name=CLASS_A, namespace=""), selectors=("noSuchVar",)
                ),
            ),
            slices=[slice_("slice-1", NODE1, "pool-1", DRIVER_A)],
            error="undeclared reference",
        ),
    ),
    (
        "too-many-devices-single-request",
        dict(
            claims=[claim("claim-0", request("req-0", CLASS_A, 500))],
            classes=A,
            slices=[],
            error="exceeds the claim limit",
        ),
    ),
    (
        "too-many-devices-total",
        dict(
            claims=[claim("claim-0", request("req-0", CLASS_A, 32), request("req-1", CLASS_A, 1))],
            classes=A,
            slices=[
                slice_(
                    "slice-1",
                    NODE1,
                    "pool-1",
                    DRIVER_A,
                    *(device(f"device-{i}") for i in range(33)),
                )
            ],
            error="exceeds the claim limit",
        ),
    ),
    (
        "prioritized-list-first-unavailable",
        dict(
            claims=[
                claim(
                    "claim-0",
                    prioritized("req-0", sub("subReq-0", CLASS_B), sub("subReq-1", CLASS_A)),
                )
            ],
            classes=AB,
            slices=[slice_("slice-1", NODE1, "pool-1", DRIVER_A)],
            want=[result(local(NODE1), ("req-0/subReq-1", DRIVER_A, "pool-1", "device-1"))],
        ),
    ),
    (
        "prioritized-list-non-available",
        dict(
            claims=[
                claim(
                    "claim-0",
                    prioritized("req-0", sub("subReq-0", CLASS_B, 2), sub("subReq-1", CLASS_A, 2)),
                )
            ],
            classes=AB,
            slices=[
                slice_("slice-1", NODE1, "pool-1", DRIVER_A),
                slice_("slice-2", NODE1, "pool-2", DRIVER_B),
            ],
            want=None,
        ),
    ),
    (
        "prioritized-list-subrequests-with-expressions",
        dict(
            claims=[
                claim(
                    "claim-0",
                    request("req-0", CLASS_A, 1, mem("1Gi")),
                    prioritized(
                        "req-1",
                        sub("subReq-0", CLASS_A, 1, mem("4Gi")),
                        sub("subReq-1", CLASS_A, 2, mem("2Gi")),
                    ),
                )
            ],
            classes=A,
            slices=[_memory_slice(("device-1", "2Gi"), ("device-2", "2Gi"), ("device-3", "1Gi"))],
            want=[
                result(
                    local(NODE1),
                    ("req-0", DRIVER_A, "pool-1", "device-3"),
                    ("req-1/subReq-1", DRIVER_A, "pool-1", "device-1"),
                    ("req-1/subReq-1", DRIVER_A, "pool-1", "device-2"),
                )
            ],
        ),
    ),
    *[
        (
            f"prioritized-list-subrequests-with-constraints-ref-{ref}",
            dict(
                claims=[
                    claim(
                        "claim-0",
                        request("req-0", CLASS_A, 1, mem("8Gi")),
                        prioritized(
                            "req-1",
                            sub("subReq-0", CLASS_A, 1, mem("2Gi")),
                            sub("subReq-1", CLASS_A, 1, mem("1Gi")),
                        ),
                        constraints=[
                            DeviceConstraint(
                                requests=("req-0", names), match_attribute="driverVersion"
                            )
                        ],
                    )
                ],
                classes=A,
                slices=[
                    slice_(
                        "slice-1",
                        NODE1,
                        "pool-1",
                        DRIVER_A,
                        device("device-1", "8Gi", driverVersion="v1.0.0"),
                    ),
                    slice_("slice-2", NODE1, "pool-2", DRIVER_A, *devices),
                ],
                want=[
                    result(
                        local(NODE1),
                        ("req-0", DRIVER_A, "pool-1", "device-1"),
                        ("req-1/subReq-1", DRIVER_A, "pool-2", chosen),
                    )
                ],
            ),
        )
        for ref, names, devices, chosen in [
            (
                "parent-request",
                "req-1",
                (
                    device("device-2", "2Gi", driverVersion="v2.0.0"),
                    device("device-3", "1Gi", driverVersion="v1.0.0"),
                ),
                "device-3",
            ),
            (
                "sub-request",
                "req-1/subReq-0",
                (device("device-2", "2Gi", driverVersion="v2.0.0"),),
                "device-2",
            ),
        ]
    ],
]


@pytest.mark.parametrize(
    ("case"), [c for _, c in ALLOCATOR_CASES], ids=[n for n, _ in ALLOCATOR_CASES]
)
def test_allocator(case: dict[str, Any]) -> None:
    in_use = {
        (d.driver, d.pool, d.device)
        for c in case.get("allocated", [])
        for d in c.status.allocation.devices
    }
    allocator = Allocator(
        case["claims"], {c.name: c for c in case["classes"]}, case["slices"], in_use, matcher
    )
    target = case.get("node", node(NODE1, "region-1"))
    if "error" in case:
        with pytest.raises(AllocationError, match=case["error"]):
            allocator.allocate(target)
        return
    assert allocator.allocate(target) == case["want"]


def test_cel_runtime_error_names_claim_selector_and_device() -> None:
    allocator = Allocator(
        [claim("claim-0", request("req-0", CLASS_A, 1, 'device.attributes["driver-a"].nope'))],
        {CLASS_A: A[0]},
        [slice_("slice-1", NODE1, "pool-1", DRIVER_A)],
        set(),
        matcher,
    )
    with pytest.raises(AllocationError) as info:
        allocator.allocate(node(NODE1, "region-1"))
    assert str(info.value) == (
        "claim default/claim-0: selector #0 on device driver-a/pool-1/device-1: "
        "CEL runtime error: no such key: nope"
    )


def test_cel_cost_limit_stops_the_selector_on_an_oversized_device() -> None:
    # compile_test.go "expensive": a device with 1000 x 32 attributes drives the cost of a
    # comprehension over them past CELSelectorExpressionMaxCost.
    attributes = {f"driver-a/a{i}": DeviceAttribute("abc") for i in range(32 * 1000)}
    big = Device(name="device-1", attributes=attributes)
    expression = 'device.attributes["driver-a"].map(s, s.size()).exists(n, n == 0)'
    allocator = Allocator(
        [claim("claim-0", request("req-0", CLASS_A, 1, expression))],
        {CLASS_A: A[0]},
        [slice_("slice-1", NODE1, "pool-1", DRIVER_A, big)],
        set(),
        matcher,
    )
    with pytest.raises(AllocationError) as info:
        allocator.allocate(node(NODE1, "region-1"))
    assert str(info.value) == (
        "claim default/claim-0: selector #0 on device driver-a/pool-1/device-1: "
        "CEL runtime error: operation cancelled: actual cost limit exceeded"
    )


# ---- TestPlugin -----------------------------------------------------------------------

POD_UID = "1234"
CLAIM_NAME = "my-pod-my-resource"
CLASS_NAME = "my-resource-class"
WORKER = make_node("worker").label("kubernetes.io/hostname", "worker").obj()
WORKER_SLICE = slice_("worker-some-driver", "worker", "worker", "some-driver", device("instance-1"))
DEVICE_CLASS = klass(CLASS_NAME, "some-driver")
OWNER = OwnerReference(kind="Pod", name="my-pod", uid=POD_UID, controller=True)


def _claim(**status: Any) -> ResourceClaim:
    return ResourceClaim(
        metadata=ObjectMeta(
            name=CLAIM_NAME, namespace="default", uid="claim-uid", owner_references=(OWNER,)
        ),
        spec=ResourceClaimSpec(requests=(request("req-1", CLASS_NAME),)),
        status=ResourceClaimStatus(**status),
    )


PENDING = _claim()
STRUCTURED_ALLOCATION = result(local("worker"), ("req-1", "some-driver", "worker", "instance-1"))
ALLOCATED = _claim(allocation=STRUCTURED_ALLOCATION)
IN_USE = _claim(
    allocation=STRUCTURED_ALLOCATION,
    reserved_for=(ResourceClaimConsumerReference(name="my-pod", uid=POD_UID),),
)
OTHER_ALLOCATED = ResourceClaim(
    metadata=ObjectMeta(name=CLAIM_NAME + "-other", namespace="default", uid="other-uid"),
    spec=PENDING.spec,
    status=ResourceClaimStatus(allocation=STRUCTURED_ALLOCATION),
)
WRONG_TOPOLOGY = _claim(allocation=result(label_selector("no-such-label", "no-such-value")))


def _pod(template: bool = False, in_status: bool = False) -> Pod:
    base = make_pod("my-pod").uid(POD_UID).obj()
    entry = (
        PodResourceClaim(name="my-resource", resource_claim_template_name=CLAIM_NAME)
        if template
        else PodResourceClaim(name="my-resource", resource_claim_name=CLAIM_NAME)
    )
    statuses = (
        (PodResourceClaimStatus(name="my-resource", resource_claim_name=CLAIM_NAME),)
        if in_status
        else ()
    )
    from attrs import evolve

    return evolve(
        base,
        spec=evolve(base.spec, resource_claims=(entry,)),
        status=evolve(base.status, resource_claim_statuses=statuses),
    )


def _deleted(c: ResourceClaim) -> ResourceClaim:
    from attrs import evolve

    return evolve(c, metadata=evolve(c.metadata, deletion_timestamp=1.0))


def _foreign(c: ResourceClaim) -> ResourceClaim:
    from attrs import evolve

    owner = evolve(OWNER, uid=POD_UID + "123")
    return evolve(c, metadata=evolve(c.metadata, owner_references=(owner,)))


UAU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
PLUGIN_CASES: list[tuple[str, dict[str, Any]]] = [
    ("empty", dict(pod=make_pod("foo").obj(), objects=[], prefilter=Status(Code.SKIP))),
    ("claim-reference", dict(pod=_pod(), objects=[ALLOCATED, DEVICE_CLASS], prebind_reserved=True)),
    (
        "claim-template",
        dict(pod=_pod(True, True), objects=[ALLOCATED, DEVICE_CLASS], prebind_reserved=True),
    ),
    (
        "missing-claim",
        dict(
            pod=_pod(True),
            objects=[ALLOCATED],
            preenqueue=Status(UAU, ('pod "default/my-pod": ResourceClaim not created yet',)),
        ),
    ),
    (
        "deleted-claim",
        dict(
            pod=_pod(True, True),
            objects=[_deleted(ALLOCATED)],
            preenqueue=Status(UAU, ('resourceclaim "my-pod-my-resource" is being deleted',)),
        ),
    ),
    (
        "wrong-claim",
        dict(
            pod=_pod(True, True),
            objects=[_foreign(ALLOCATED)],
            preenqueue=Status(
                UAU,
                (
                    "ResourceClaim default/my-pod-my-resource was not created for pod "
                    "default/my-pod (pod is not owner)",
                ),
            ),
        ),
    ),
    (
        "structured-no-resources",
        dict(
            pod=_pod(),
            objects=[PENDING, DEVICE_CLASS],
            filter=Status(UAU, ("cannot allocate all claims",)),
            postfilter=Status(Code.UNSCHEDULABLE, ("still not schedulable",)),
        ),
    ),
    (
        "structured-with-resources",
        dict(
            pod=_pod(),
            objects=[PENDING, DEVICE_CLASS, WORKER_SLICE],
            prebind_allocation=STRUCTURED_ALLOCATION,
        ),
    ),
    (
        "structured-exhausted-resources",
        dict(
            pod=_pod(),
            objects=[PENDING, OTHER_ALLOCATED, DEVICE_CLASS, WORKER_SLICE],
            filter=Status(UAU, ("cannot allocate all claims",)),
            postfilter=Status(Code.UNSCHEDULABLE, ("still not schedulable",)),
        ),
    ),
    (
        "missing-class",
        dict(
            pod=_pod(),
            objects=[PENDING],
            prefilter=Status(
                UAU, ("request req-1: device class my-resource-class does not exist",)
            ),
            postfilter=Status(Code.UNSCHEDULABLE, ("no new claims to deallocate",)),
        ),
    ),
    (
        "wrong-topology",
        dict(
            pod=_pod(),
            objects=[WRONG_TOPOLOGY, DEVICE_CLASS],
            filter=Status(UAU, ("resourceclaim not available on the node",)),
            postfilter=Status(Code.UNSCHEDULABLE, ("deallocation of ResourceClaim completed",)),
            deallocated=True,
        ),
    ),
    ("good-topology", dict(pod=_pod(), objects=[ALLOCATED, DEVICE_CLASS], prebind_reserved=True)),
    (
        "claim-parameters-CEL-runtime-error",
        dict(
            pod=_pod(),
            objects=[
                ResourceClaim(
                    metadata=PENDING.metadata,
                    spec=ResourceClaimSpec(
                        requests=(
                            request(
                                "req-1",
                                CLASS_NAME,
                                1,
                                'device.attributes["some-driver"].noSuchAttribute',
                            ),
                        )
                    ),
                ),
                DEVICE_CLASS,
                WORKER_SLICE,
            ],
            filter=Status(
                Code.ERROR,
                (
                    "claim default/my-pod-my-resource: selector #0 on device "
                    "some-driver/worker/instance-1: "
                    "CEL runtime error: no such key: noSuchAttribute",
                ),
            ),
        ),
    ),
    (
        "class-parameters-CEL-runtime-error",
        dict(
            pod=_pod(),
            objects=[
                PENDING,
                klass(
                    CLASS_NAME, "some-driver", 'device.attributes["some-driver"].noSuchAttribute'
                ),
                WORKER_SLICE,
            ],
            filter=Status(
                Code.ERROR,
                (
                    "class my-resource-class: selector #1 on device some-driver/worker/instance-1: "
                    "CEL runtime error: no such key: noSuchAttribute",
                ),
            ),
        ),
    ),
    (
        "in-use",  # ksched: a claim at its reservedFor limit held by other pods
        dict(
            pod=_pod(),
            objects=[
                _claim(
                    allocation=STRUCTURED_ALLOCATION,
                    reserved_for=tuple(
                        ResourceClaimConsumerReference(name=f"p{i}", uid=f"u{i}")
                        for i in range(256)
                    ),
                ),
                DEVICE_CLASS,
            ],
            prefilter=Status(UAU, ("resourceclaim in use",)),
        ),
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize("case", [c for _, c in PLUGIN_CASES], ids=[n for n, _ in PLUGIN_CASES])
async def test_plugin(case: dict[str, Any]) -> None:
    handle = FakeHandle([WORKER, *case["objects"]])
    pl = DynamicResources.new(None, handle)
    pod: Pod = case["pod"]
    assert pl.pre_enqueue(pod) == case.get("preenqueue")
    if "preenqueue" in case:
        return
    state = CycleState()
    info = NodeInfo.of(WORKER)
    assert pl.pre_filter(state, pod, [info]) == case.get("prefilter")
    if "prefilter" not in case:
        assert pl.filter(state, pod, info) == case.get("filter")
    if "filter" in case or "prefilter" in case:
        if "postfilter" in case:
            _, status = await pl.post_filter(state, pod, NodeToStatus())
            assert status == case["postfilter"]
        if case.get("deallocated"):
            stored = handle.cluster.get_resource_claim("default", CLAIM_NAME)
            assert stored is not None
            assert stored.status == ResourceClaimStatus()
        return
    assert pl.reserve(state, pod, "worker") is None
    assert await pl.pre_bind(state, pod, "worker") is None
    stored = handle.cluster.get_resource_claim("default", CLAIM_NAME)
    assert stored is not None
    assert stored.status.reserved_for == (
        ResourceClaimConsumerReference(name="my-pod", uid=POD_UID),
    )
    if "prebind_allocation" in case:
        assert stored.status.allocation == case["prebind_allocation"]


@pytest.mark.anyio
async def test_in_flight_allocation_blocks_the_device_until_unreserve() -> None:
    """structured-skip-bind: Reserve puts the allocation in flight (the device counts as in
    use for the next pod); Unreserve before PreBind drops it again."""
    other = ResourceClaim(
        metadata=ObjectMeta(name="other", namespace="default", uid="other-uid"), spec=PENDING.spec
    )
    handle = FakeHandle([WORKER, PENDING, other, DEVICE_CLASS, WORKER_SLICE])
    pl = DynamicResources.new(None, handle)
    info = NodeInfo.of(WORKER)
    first, state = _pod(), CycleState()
    assert pl.pre_filter(state, first, [info]) is None
    assert pl.filter(state, first, info) is None
    assert pl.reserve(state, first, "worker") is None
    second = Pod(
        metadata=ObjectMeta(name="second", uid="second-uid"),
        spec=make_pod("second")
        .obj()
        .spec.__class__(resource_claims=(PodResourceClaim(name="r", resource_claim_name="other"),)),
    )
    state2 = CycleState()
    assert pl.pre_filter(state2, second, [info]) is None
    assert pl.filter(state2, second, info) == Status(UAU, ("cannot allocate all claims",))
    # the first pod's own claim is "in the process of being allocated" for anyone else
    assert pl.pre_filter(CycleState(), first, [info]) == Status(
        UAU, ("resource claim default/my-pod-my-resource is in the process of being allocated",)
    )
    await pl.unreserve(state, first, "worker")
    state3 = CycleState()
    assert pl.pre_filter(state3, second, [info]) is None
    assert pl.filter(state3, second, info) is None


@pytest.mark.anyio
async def test_unreserve_after_bind_failure_drops_the_reservation_keeps_the_allocation() -> None:
    """unreserveAfterBindFailure: Unreserve takes the pod out of reservedFor; the claim
    stays allocated, so the next attempt reserves it again."""
    handle = FakeHandle([WORKER, PENDING, DEVICE_CLASS, WORKER_SLICE])
    pl = DynamicResources.new(None, handle)
    pod, state, info = _pod(), CycleState(), NodeInfo.of(WORKER)
    assert pl.pre_filter(state, pod, [info]) is None
    assert pl.filter(state, pod, info) is None
    assert pl.reserve(state, pod, "worker") is None
    assert await pl.pre_bind(state, pod, "worker") is None
    await pl.unreserve(state, pod, "worker")
    stored = handle.cluster.get_resource_claim("default", CLAIM_NAME)
    assert stored is not None
    assert stored.status == ResourceClaimStatus(allocation=STRUCTURED_ALLOCATION)
    again = CycleState()
    assert pl.pre_filter(again, pod, [info]) is None
    assert pl.filter(again, pod, info) is None


def test_pods_without_claims_stay_on_the_lean_path() -> None:
    pl = DynamicResources.new(None, FakeHandle([WORKER]))
    pod = make_pod("plain").obj()
    state = CycleState()
    assert pl.pre_enqueue(pod) is None
    assert pl.pre_filter(state, pod, []) == Status(Code.SKIP)
    assert state.get("DynamicResources") is None
    assert pl.sign_pod(pod) == ()


def test_score_prefers_the_earlier_first_available_subrequest() -> None:
    """computeScore: 8 minus the position of the chosen subrequest; plain requests and pods
    without claims skip scoring."""
    prio = ResourceClaim(
        metadata=PENDING.metadata,
        spec=ResourceClaimSpec(
            requests=(prioritized("r", sub("gpu-b", CLASS_B), sub("gpu-a", CLASS_NAME)),)
        ),
    )
    n2 = make_node("n2").obj()
    other_slice = slice_("n2-b", "n2", "n2", DRIVER_B, device("b-1"))
    handle = FakeHandle(
        [WORKER, n2, prio, DEVICE_CLASS, klass(CLASS_B, DRIVER_B), WORKER_SLICE, other_slice]
    )
    pl = DynamicResources.new(None, handle)
    pod, state = _pod(), CycleState()
    infos = [NodeInfo.of(WORKER), NodeInfo.of(n2)]
    assert pl.pre_filter(state, pod, infos) is None
    assert [pl.filter(state, pod, i) for i in infos] == [None, None]
    assert pl.pre_score(state, pod, infos) is None
    scores = {i.name: pl.score(state, pod, i) for i in infos}
    assert scores == {"worker": 7, "n2": 8}
    pl.normalize_score(state, pod, scores)
    assert scores == {"worker": 87, "n2": 100}
    plain = CycleState()
    assert pl.pre_filter(plain, make_pod("plain").obj(), infos) == Status(Code.SKIP)
    assert pl.pre_score(plain, make_pod("plain").obj(), infos) == Status(Code.SKIP)


def test_pods_with_claims_are_not_batched() -> None:
    pl = DynamicResources.new(None, FakeHandle([WORKER]))
    signed = pl.sign_pod(_pod())
    assert isinstance(signed, Status) and signed.code is Code.UNSCHEDULABLE


def test_disabled_on_a_cluster_without_the_resource_api() -> None:
    """A cluster store without resource.k8s.io (no claim accessors): the plugin does
    nothing, as upstream's plugin with the feature off."""

    class NoDRA:
        cluster = object()

    pl = DynamicResources.new(None, NoDRA())  # type: ignore[arg-type]  # no cluster API at all
    assert not pl.enabled
    assert pl.pre_enqueue(_pod()) is None
    assert pl.pre_filter(CycleState(), _pod(), []) == Status(Code.SKIP)
    assert pl.events_to_register() == []


def test_claim_change_hints() -> None:
    """isSchedulableAfterClaimChange: the pod's claim created or its status changed; any
    claim deallocated; otherwise skip."""
    pl = DynamicResources.new(None, FakeHandle([WORKER, PENDING]))
    pod = _pod()
    from attrs import evolve

    unrelated = evolve(OTHER_ALLOCATED)
    assert pl.is_schedulable_after_claim_change(pod, None, PENDING) is QueueingHint.QUEUE
    assert pl.is_schedulable_after_claim_change(pod, None, unrelated) is QueueingHint.SKIP
    freed = evolve(unrelated, status=ResourceClaimStatus())
    assert pl.is_schedulable_after_claim_change(pod, unrelated, freed) is QueueingHint.QUEUE
    relabeled = evolve(PENDING, metadata=evolve(PENDING.metadata, labels={"a": "b"}))
    assert pl.is_schedulable_after_claim_change(pod, PENDING, relabeled) is QueueingHint.SKIP
    assert pl.is_schedulable_after_claim_change(pod, PENDING, ALLOCATED) is QueueingHint.QUEUE
    waiting = _pod(True)
    assert pl.is_schedulable_after_pod_change(waiting, waiting, waiting) is QueueingHint.SKIP
    assert (
        pl.is_schedulable_after_pod_change(waiting, waiting, _pod(True, True)) is QueueingHint.QUEUE
    )

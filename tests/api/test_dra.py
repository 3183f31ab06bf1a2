"""resource.k8s.io manifests and CEL device selectors."""

from __future__ import annotations

from fractions import Fraction

import pytest

from ksched import ManifestError
from ksched.api import (
    CelError,
    Device,
    DeviceAttribute,
    DeviceClass,
    Pod,
    ResourceClaim,
    ResourceSlice,
    SemVer,
    compile_selector,
    read_object,
)

GI = 1024**3
DRIVER = "gpu.example.com"
A100 = Device(
    name="gpu-0",
    attributes={
        "model": DeviceAttribute("a100"),
        "cores": DeviceAttribute(108),
        "mig": DeviceAttribute(True),
        "driverVersion": DeviceAttribute(SemVer("1.2.3")),
        "other.example.com/rack": DeviceAttribute("r1"),
    },
    capacity={"memory": Fraction(80 * GI)},
)


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        ('device.driver == "gpu.example.com"', True),
        ('device.attributes["gpu.example.com"].model == "a100"', True),
        ('device.attributes["gpu.example.com"].cores > 100', True),
        ('device.attributes["gpu.example.com"].mig', True),
        ('device.attributes["other.example.com"].rack == "r1"', True),
        # upstream small-and-large selectors
        ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0', True),
        ('device.capacity["gpu.example.com"].memory.compareTo(quantity("81Gi")) >= 0', False),
        ('device.capacity["gpu.example.com"].memory == quantity("80Gi")', True),
        ('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("80Gi"))', False),
        ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))', True),
        ('device.attributes["gpu.example.com"].driverVersion.isLessThan(semver("1.10.0"))', True),
        # an unknown domain reads as an empty map (compile.go newStringInterfaceMapWithDefault)
        ('device.attributes["unknown.example.com"].size() == 0', True),
        ('"model" in device.attributes["gpu.example.com"]', True),
    ],
)
def test_selector_environment(expression: str, want: bool) -> None:
    assert compile_selector(expression).matches(A100, DRIVER) is want


def test_missing_attribute_is_a_runtime_error_naming_the_key() -> None:
    with pytest.raises(CelError, match="no such key: nope"):
        compile_selector('device.attributes["gpu.example.com"].nope == 1').matches(A100, DRIVER)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("device.driver ==", "compilation failed"),
        ("noSuchVar", "undeclared reference to 'noSuchVar'"),  # upstream invalid-CEL-one-device
        ("cel.bind(d.x, device.driver, d == 'x')", "variable names must be simple identifiers"),
        ("x" * (10 * 1024 + 1), "longer than 10240"),
    ],
)
def test_selector_compile_errors(expression: str, message: str) -> None:
    with pytest.raises(CelError, match=message):
        compile_selector(expression)


def test_selectors_compile_once() -> None:
    expression = 'device.driver == "cached.example.com"'
    assert compile_selector(expression) is compile_selector(expression)


def _class(expression: str) -> dict[str, object]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }


def test_device_class_with_bad_cel_names_object_and_field() -> None:
    with pytest.raises(ManifestError) as info:
        read_object(_class('device.driver == "a" &&'))
    assert str(info.value).startswith(
        "DeviceClass gpu: spec.selectors[0].cel.expression: compilation failed"
    )


def test_claim_with_bad_cel_names_object_and_field() -> None:
    claim = {
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu",
                            "selectors": [{"cel": {"expression": "1 +"}}],
                        },
                    }
                ]
            }
        },
    }
    with pytest.raises(ManifestError, match=r"^ResourceClaim ns/c: spec\.devices\.requests\[0\]"):
        read_object(claim)


def test_reads_slice_claim_and_pod_claims() -> None:
    s = read_object(
        {
            "kind": "ResourceSlice",
            "metadata": {"name": "n1-gpu"},
            "spec": {
                "driver": DRIVER,
                "nodeName": "n1",
                "pool": {"name": "n1", "generation": 2, "resourceSliceCount": 1},
                "devices": [
                    {
                        "name": "gpu-0",
                        "attributes": {"model": {"string": "a100"}, "v": {"version": "1.0.0"}},
                        "capacity": {"memory": {"value": "80Gi"}},
                    }
                ],
            },
        }
    )
    assert isinstance(s, ResourceSlice)
    assert s.pool.generation == 2
    assert s.devices[0].capacity["memory"] == 80 * GI
    assert s.devices[0].attributes["v"] == DeviceAttribute(SemVer("1.0.0"))
    c = read_object(
        {
            "kind": "ResourceClaim",
            "metadata": {"name": "c"},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "r",
                            "firstAvailable": [
                                {"name": "big", "deviceClassName": "a100"},
                                {"name": "small", "deviceClassName": "t4", "count": 2},
                            ],
                        },
                        {
                            "name": "all",
                            "exactly": {"deviceClassName": "nic", "allocationMode": "All"},
                        },
                    ],
                    "constraints": [
                        {"requests": ["r", "all"], "matchAttribute": "gpu.example.com/numa"}
                    ],
                }
            },
        }
    )
    assert isinstance(c, ResourceClaim)
    assert [s.name for s in c.spec.requests[0].first_available] == ["big", "small"]
    assert c.spec.requests[1].allocation_mode == "All"
    assert c.spec.constraints[0].match_attribute == "gpu.example.com/numa"
    pod = read_object(
        {
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
                "containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}],
            },
            "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x"}]},
        }
    )
    assert isinstance(pod, Pod)
    assert pod.spec.resource_claims[0].resource_claim_template_name == "t"
    assert pod.spec.containers[0].claims == ("gpu",)
    assert pod.status.resource_claim_statuses[0].resource_claim_name == "p-gpu-x"


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            {
                "kind": "ResourceSlice",
                "metadata": {"name": "s"},
                "spec": {"driver": "d", "pool": {"name": "p"}},
            },
            "ResourceSlice s: spec.nodeName: exactly one of nodeName, nodeSelector, allNodes",
        ),
        (
            {
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {"resourceClaims": [{"name": "gpu"}]},
            },
            "Pod default/p: spec.resourceClaims[0].resourceClaimName: exactly one of",
        ),
        (
            {
                "kind": "ResourceClaim",
                "metadata": {"name": "c"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "r", "exactly": {"deviceClassName": "x", "count": 0}}]
                    }
                },
            },
            "ResourceClaim default/c: spec.devices.requests[0].exactly.count: must be greater",
        ),
    ],
)
def test_malformed_objects(doc: dict[str, object], message: str) -> None:
    with pytest.raises(ManifestError, match="^" + message.replace("[", r"\[").replace("]", r"\]")):
        read_object(doc)


def test_device_class_reads() -> None:
    c = read_object(_class('device.driver == "gpu.example.com"'))
    assert isinstance(c, DeviceClass)
    assert c.selectors == ('device.driver == "gpu.example.com"',)

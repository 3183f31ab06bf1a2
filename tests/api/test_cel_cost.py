"""CEL selector cost limits: cel-go's estimate, validation, and the runtime limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from ksched import ManifestError
from ksched.api import CelError, Device, DeviceAttribute, compile_selector, read_object
from ksched.api._cel import ERR_COST_LIMIT_EXCEEDED
from ksched.api._cel_cost import Sizes, estimate_cost, parse
from ksched.cli import main

# staging/src/k8s.io/dynamic-resource-allocation/cel/compile_test.go: expectCost.
UPSTREAM_COSTS = [
    ("true", "true", 0),
    ("false", "false", 0),
    (
        "runtime-error-lookup-identifier",
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        6,
    ),
    (
        "runtime-error-lookup-map",
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        6,
    ),
    ("domain-check-negative", '"no-such-domain" in device.attributes', 3),
    ("domain-check-positive", '"dra.example.com" in device.attributes', 3),
    ("empty-driver-name", 'device.driver == ""', 2),
    ("real-driver-name", 'device.driver == "dra.example.com"', 4),
    ("driver-name-qualifier", 'device.attributes["dra.example.com"].name', 4),
    ("driver-name-qualifier-map-lookup", 'device.attributes["dra.example.com"]["name"]', 4),
    ("qualified-attribute-name", 'device.attributes["other.example.com"].name', 4),
    ("int", 'device.attributes["dra.example.com"].name > 0', 5),
    ("string", 'device.attributes["dra.example.com"].name == "fish"', 5),
    (
        "version",
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))',
        6,
    ),
    (
        "quantity",
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        6,
    ),
    (
        "check-positive",
        '"name" in device.capacity["dra.example.com"] && '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        10,
    ),
    (
        "check-negative",
        '!("name" in device.capacity["dra.example.com"]) || '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        11,
    ),
    (
        "all",
        """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
""",
        52,
    ),
    (
        "many",
        'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && '
        'device.attributes["dra.example.com"].c',
        12,
    ),
    ("bind", 'cel.bind(dra, device.attributes["dra.example.com"], dra.name)', 15),
    (
        "split_attribute",
        'device.attributes["dra.example.com"].services.split("example").size() >= 2',
        19,
    ),
    ("regexp_attribute", 'device.attributes["dra.example.com"].services.matches("[^a]?sym")', 18),
]

# pkg/apis/resource/validation/validation_resourceclaim_test.go "CEL-cost" (from the
# apiserver's validatingadmissionpolicy_test.go).
_TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
CEL_COST = (
    f"{_TEN}.all(x, {_TEN}.all(y, {_TEN}.all(z, {_TEN}.all(z2, {_TEN}.all(z3, {_TEN}.all(z4, "
    f"{_TEN}.all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)


@pytest.mark.parametrize(
    ("expression", "cost"), [c[1:] for c in UPSTREAM_COSTS], ids=[c[0] for c in UPSTREAM_COSTS]
)
def test_estimated_cost_matches_upstream(expression: str, cost: int) -> None:
    assert estimate_cost(parse(expression)) == cost
    assert compile_selector(expression).max_cost == cost


def test_nested_comprehensions_as_upstream_expensive_case() -> None:
    # compile_test.go "expensive": over the limit.
    assert estimate_cost(parse(CEL_COST)) == 85555551


def test_map_result_is_as_long_as_its_range() -> None:
    # cel-go v0.24+ (checker/cost.go costComprehension): a map() result has its range's
    # size, so the chain is bounded: range 3; first map 10 + 1 + 32 * (1 + 1 + 10 + 1 + 4)
    # = 555; second map 10 + 1 + 32 * (1 + 1 + 10 + 2) = 459; sum() 32 (one per int);
    # == 1.
    expression = (
        'device.attributes["dra.example.com"].map(s, s.lowerAscii()).map(s, s.size()).sum() == 0'
    )
    assert estimate_cost(parse(expression)) == 3 + 555 + 459 + 32 + 1


def test_comprehension_cost_scales_with_range() -> None:
    # all(): range + (loop condition 2 + step 1 + predicate) per element + result 1.
    one = estimate_cost(parse("[1].all(x, x > 0)"))
    ten = estimate_cost(parse(f"{_TEN}.all(x, x > 0)"))
    assert (one, ten) == (10 + 1 * 5 + 1, 10 + 10 * 5 + 1)
    assert estimate_cost(parse(CEL_COST)) > 1_000_000


def _class(expression: str) -> dict[str, object]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }


def test_over_the_cost_limit_is_rejected_naming_object_and_field() -> None:
    with pytest.raises(ManifestError) as info:
        read_object(_class(CEL_COST))
    assert str(info.value) == (
        "DeviceClass gpu: spec.selectors[0].cel.expression: too complex, exceeds cost limit"
    )


def test_claim_selector_over_the_cost_limit_is_rejected() -> None:
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
                            "selectors": [{"cel": {"expression": CEL_COST}}],
                        },
                    }
                ]
            }
        },
    }
    with pytest.raises(ManifestError, match=r"selectors\[0\]\.cel\.expression: too complex"):
        read_object(claim)


@pytest.mark.parametrize(("extra", "ok"), [(0, True), (1, False)], ids=["max-length", "too-long"])
def test_length_limit(extra: int, ok: bool) -> None:
    # validation_resourceclaim_test.go "CEL-length": the longest allowed, and one more.
    base = 'device.driver == ""'
    expression = base.replace('""', '"' + "x" * (10 * 1024 - len(base) + extra) + '"')
    if ok:
        read_object(_class(expression))
        return
    with pytest.raises(ManifestError) as info:
        read_object(_class(expression))
    assert str(info.value) == (
        "DeviceClass gpu: spec.selectors[0].cel.expression: Too long: may not be more than "
        "10240 bytes"
    )


def _many_attributes(count: int) -> Device:
    # compile_test.go "expensive": ids padded to the maximum id length.
    attributes = {}
    for i in range(count):
        suffix = f"-{i}"
        attributes["dra.example.com/" + "x" * (32 - len(suffix)) + suffix] = DeviceAttribute("abc")
    return Device(name="d", attributes=attributes)


EXPENSIVE = 'device.attributes["dra.example.com"].map(s, s.size()).exists(n, n == 0)'


def test_runtime_limit_stops_an_expensive_evaluation() -> None:
    selector = compile_selector(EXPENSIVE)
    with pytest.raises(CelError, match=f"^{ERR_COST_LIMIT_EXCEEDED}$"):
        selector.matches(_many_attributes(32 * 1000), "dra.example.com")


_ATTRS = 'device.attributes["dra.example.com"]'
QUADRATIC = f"{_ATTRS}.all(a, {_ATTRS}.all(b, {_ATTRS}.all(c, {_ATTRS}.all(d, a != b || c != d))))"


def test_runtime_limit_lets_a_small_device_through() -> None:
    selector = compile_selector(QUADRATIC)
    assert selector.max_cost > 1_000_000  # over the limit at 32 attributes: checked per device
    assert selector.matches(_many_attributes(3), "dra.example.com") is False
    assert selector.check_cost(_many_attributes(3), "dra.example.com") < 2_000
    with pytest.raises(CelError, match=f"^{ERR_COST_LIMIT_EXCEEDED}$"):
        selector.matches(_many_attributes(32), "dra.example.com")


def test_device_bound_grows_with_the_device() -> None:
    tree = parse(EXPENSIVE)
    small = estimate_cost(tree, Sizes(attributes=10, tracked=True))
    large = estimate_cost(tree, Sizes(attributes=20, tracked=True))
    assert small < large < 1_000_000


def test_simulate_rejects_a_selector_over_the_cost_limit_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
        f'spec:\n  selectors:\n  - cel: {{expression: "{CEL_COST}"}}\n'
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        "status: {allocatable: {cpu: '1'}}\n"
    )
    assert main(["simulate", "-f", str(path), "-o", "json"]) == 2
    err = capsys.readouterr().err
    field = "DeviceClass gpu: spec.selectors[0].cel.expression"
    assert f"{field}: too complex, exceeds cost limit" in err

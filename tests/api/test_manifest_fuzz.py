"""Fuzzing the manifest reader: random YAML text and random objects at
``ksched.load_manifests`` and ``read_manifest``, strict and not. Each input ends in an
object or a ManifestError, never another exception, and within a bounded time.

Hostile shapes found this way are pinned below as plain cases: integers of thousands of
digits (CPython's ValueError), flow and block collections nested thousands deep
(PyYAML: quadratic scanning, then RecursionError), alias bombs ("billion laughs").
"""

from __future__ import annotations

import copy
import string
import time
from typing import Any

import attrs
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ksched
from ksched import ManifestError
from ksched.api import read_manifest

BOUND = 2.0
"""Seconds any one input may take (generous: a shared 2-core machine; a failure here was
tens of seconds)."""
FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)

FIELDS = [
    "apiVersion", "kind", "metadata", "name", "namespace", "labels", "annotations", "spec",
    "status", "containers", "initContainers", "resources", "requests", "limits", "cpu",
    "memory", "image", "ports", "containerPort", "hostPort", "nodeName", "nodeSelector",
    "affinity", "nodeAffinity", "tolerations", "key", "operator", "values", "effect",
    "priority", "priorityClassName", "schedulerName", "topologySpreadConstraints",
    "capacity", "allocatable", "taints", "items", "overhead", "schedulingGates",
]  # fmt: skip
KINDS = ["Pod", "Node", "List", "PriorityClass", "Namespace", "Service", "PodDisruptionBudget",
         "ReplicaSet", "StatefulSet", "Deployment", "Job", "PersistentVolumeClaim", "CronJob",
         "ResourceClaim", "DeviceClass", "Nope", ""]  # fmt: skip
QUANTITY_LIKE = st.one_of(
    st.from_regex(r"\A[+-]?[0-9]{0,30}(\.[0-9]{0,30})?([eE][+-]?[0-9]{1,12}|Ki|Mi|Ei|m|n|k)?\Z"),
    st.sampled_from(["1e10000000", "8Ei", "-1", "0.9n", "1e2147483648", "Infinity", "NaN"]),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    QUANTITY_LIKE,
    st.sampled_from([*KINDS, "v1", "default", "In", "Exists", "NoSchedule", "a" * 300]),
)
KEYS = st.one_of(st.sampled_from(FIELDS), st.text(max_size=12))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(KEYS, inner, max_size=6)),
    max_leaves=40,
)


def _pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "x"}},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "pause",
                    "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}},
                    "ports": [{"containerPort": 80, "hostPort": 8080}],
                }
            ],
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
            "nodeSelector": {"zone": "a"},
        },
    }


def _node() -> dict[str, Any]:
    res = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n", "labels": {"zone": "a"}},
        "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
        "status": {"capacity": res, "allocatable": dict(res)},
    }


def _outcome(call: Any) -> None:
    """``call()`` gives objects or a ManifestError, in bounded time."""
    start = time.process_time()
    try:
        result = call()
    except ManifestError as exc:
        assert str(exc)  # a message to show
    else:
        objects = result if isinstance(result, list) else [result]
        assert all(attrs.has(type(o)) for o in objects)  # ksched's object model
    assert time.process_time() - start < BOUND


@st.composite
def _mutated(draw: st.DrawFn) -> dict[str, Any]:
    """A valid Pod or Node with a few fields replaced, added or removed at random."""
    obj = draw(st.sampled_from([_pod, _node]))()
    for _ in range(draw(st.integers(1, 4))):
        target: Any = obj
        for _ in range(draw(st.integers(0, 4))):
            if isinstance(target, dict) and target:
                child = target[draw(st.sampled_from(sorted(target, key=str)))]
            elif isinstance(target, list) and target:
                child = target[draw(st.integers(0, len(target) - 1))]
            else:
                break
            if not isinstance(child, dict | list):
                break
            target = child
        if isinstance(target, dict):
            key = draw(st.one_of(st.sampled_from(sorted(target, key=str) or ["x"]), KEYS))
            if draw(st.booleans()) and key in target:
                del target[key]
            else:
                target[key] = draw(VALUES)
        elif isinstance(target, list):
            target.append(draw(VALUES))
    mutated: dict[str, Any] = obj
    return mutated


@FUZZ
@given(obj=_mutated(), strict=st.booleans())
def test_random_objects_read_or_fail_clearly(obj: dict[str, Any], strict: bool) -> None:
    _outcome(lambda: read_manifest(copy.deepcopy(obj), strict=strict))


@FUZZ
@given(obj=st.one_of(VALUES, st.dictionaries(KEYS, VALUES, max_size=8)), strict=st.booleans())
def test_arbitrary_values_read_or_fail_clearly(obj: Any, strict: bool) -> None:
    _outcome(lambda: read_manifest(obj, strict=strict))


def _yaml_of(docs: list[Any]) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False)


@FUZZ
@given(
    docs=st.lists(st.one_of(_mutated(), VALUES), min_size=1, max_size=3),
    cut=st.integers(min_value=0, max_value=10_000),
    noise=st.text(alphabet=string.printable, max_size=20),
    strict=st.booleans(),
)
def test_random_yaml_loads_or_fails_clearly(
    docs: list[Any], cut: int, noise: str, strict: bool
) -> None:
    text = _yaml_of(docs)
    for variant in (text, text[: cut % (len(text) + 1)], text[:cut] + noise + text[cut:]):
        _outcome(lambda v=variant: ksched.load_manifests(v, strict=strict))


@FUZZ
@given(text=st.text(max_size=300), strict=st.booleans())
def test_random_text_loads_or_fails_clearly(text: str, strict: bool) -> None:
    _outcome(lambda: ksched.load_manifests(text, strict=strict))


def _alias_bomb(levels: int) -> str:
    lines = ["- &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        lines.append(f"- &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


HOSTILE_TEXT = {
    "a 5000-digit integer": "kind: Pod\nmetadata: {name: p}\nspec: {priority: " + "7" * 5000 + "}",
    "5000 nested flow lists": "[" * 5000 + "]" * 5000,
    "5000 nested flow maps": "a: " + "{a: " * 5000 + "1" + "}" * 5000,
    "1200 nested block maps": "a:\n" + "".join(" " * i + "b:\n" for i in range(1, 1200)),
    "5000 nested block lists": "- " * 5000 + "x\n",
    "an alias bomb as a document": _alias_bomb(9),
    "an alias bomb in a pod's labels": (
        "kind: Pod\nmetadata:\n  name: p\n  annotations:\n"
        + "".join(f"    a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9 if i else ["x"] * 9) + "]\n"
                  for i in range(9))
        + "spec: {containers: [{name: c, image: i}]}\n"
    ),
    "brackets in strings and comments are not nesting": (
        "# " + "[" * 500 + "\nkind: Pod\nmetadata: {name: \"" + "[" * 500 + "\"}\n"
    ),
}  # fmt: skip


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("name", list(HOSTILE_TEXT))
def test_hostile_yaml_is_a_manifest_error_in_bounded_time(name: str, strict: bool) -> None:
    start = time.process_time()
    with pytest.raises(ManifestError) as caught:
        ksched.load_manifests(HOSTILE_TEXT[name], source="hostile.yaml", strict=strict)
    assert time.process_time() - start < BOUND
    assert str(caught.value).startswith(("hostile.yaml", "Pod ", "object "))


def test_deep_dicts_from_json_are_a_manifest_error() -> None:
    nested: Any = "x"
    for _ in range(5000):
        nested = {"a": nested}
    pod = _pod()
    pod["spec"]["x"] = nested
    for strict in (True, False):
        with pytest.raises(ManifestError, match="nested too deeply"):
            read_manifest(pod, strict=strict)


def test_legitimate_flow_style_and_anchors_still_load() -> None:
    text = (
        "base: &base {cpu: 100m, memory: 1Gi}\n"
        "---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: {app: x}}\n"
        "spec: {containers: [{name: c, image: i, resources: {requests: *base}}]}\n"
    )
    with pytest.raises(ManifestError):  # the first document is not an object
        ksched.load_manifests(text)
    pods = ksched.load_manifests(text.split("---\n", 1)[1].replace("*base", "{cpu: 100m}"))
    assert [p.name for p in pods if isinstance(p, ksched.Pod)] == ["a"] and len(pods) == 1


@pytest.mark.parametrize(
    "change",
    [
        lambda o: o.update(kind=[None]),  # found by the fuzzer: a TypeError in describe()
        lambda o: o["status"]["allocatable"].update(cpu=[]),  # a TypeError in quantity_value
        lambda o: o["status"]["capacity"].update(memory={"a": 1}),
        lambda o: o["metadata"].update(name=["x"] * 10_000),
    ],
    ids=["kind-a-list", "quantity-a-list", "quantity-a-map", "name-a-long-list"],
)
def test_fuzzer_findings_are_manifest_errors(change: Any) -> None:
    node = _node()
    change(node)
    for strict in (True, False):
        with pytest.raises(ManifestError) as caught:
            read_manifest(copy.deepcopy(node), strict=strict)
        assert len(str(caught.value)) < 2_000  # a message, not the value's whole repr

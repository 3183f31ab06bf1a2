"""Objects made from one template: their bodies are checked and read once, and every
object still reads (and fails) exactly as it would alone."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from ksched import ManifestError, read_manifest, read_object, validate_object
from ksched.api import Node, ObjectMeta, Pod, _fields, _manifest, _validation, validate_and_read


@pytest.fixture(autouse=True)
def _fresh_memos() -> Iterator[None]:
    _validation.forget_read_bodies()
    yield
    _validation.forget_read_bodies()


def _pod(name: str, **meta: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m"}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, **meta},
        "spec": {"containers": [container], "tolerations": [{"operator": "Exists"}]},
    }


def _node(name: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"zone": "a"}, **meta},
        "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
    }


def _pods(*data: dict[str, Any]) -> list[Pod]:
    out = [read_manifest(d) for d in data]
    assert all(isinstance(p, Pod) for p in out)
    return out  # type: ignore[return-value]  # checked just above


def _nodes(*data: dict[str, Any]) -> list[Node]:
    out = [read_manifest(d) for d in data]
    assert all(isinstance(n, Node) for n in out)
    return out  # type: ignore[return-value]  # checked just above


def _alone(data: dict[str, Any]) -> Any:
    """What reading ``data`` gives with nothing remembered."""
    _validation.forget_read_bodies()
    return read_manifest(copy.deepcopy(data))


def test_pods_from_one_template_share_one_spec_and_read_as_alone() -> None:
    pods = _pods(*(_pod(f"web-{i}", labels={"app": "web"}) for i in range(3)))
    assert pods[0].spec is pods[1].spec is pods[2].spec
    assert [p.key for p in pods] == ["default/web-0", "default/web-1", "default/web-2"]
    assert pods[2] == _alone(_pod("web-2", labels={"app": "web"}))


def test_nodes_of_one_pool_share_spec_and_status_and_read_as_alone() -> None:
    nodes = _nodes(*(_node(f"node-{i}") for i in range(3)))
    assert nodes[0].status is nodes[2].status and nodes[0].spec is nodes[2].spec
    assert nodes[1].status.allocatable == {"cpu": 4000, "memory": 16 * 2**30, "pods": 110}
    assert nodes[1] == _alone(_node("node-1"))


def test_a_bad_name_after_a_valid_twin_is_rejected_in_the_same_words() -> None:
    bad = _node("Node_1")
    with pytest.raises(ManifestError) as alone:
        _alone(bad)
    read_manifest(_node("node-0"))
    with pytest.raises(ManifestError) as after_twin:
        read_manifest(bad)
    assert str(after_twin.value) == str(alone.value)
    assert str(alone.value).startswith('Node Node_1: metadata.name: Invalid value: "Node_1"')


def test_a_node_reads_its_metadata_before_unschedulable() -> None:
    # The reader's order: taints, capacity, metadata, then spec.unschedulable.
    data = _node("n", labels={"zone": ["a"]})
    data["spec"]["unschedulable"] = "yes"
    with pytest.raises(ManifestError, match=r"^Node n: metadata\.labels\.zone: expected"):
        read_object(data)


def test_unknown_fields_keep_their_order_when_the_body_was_seen() -> None:
    data = _pod("p")
    data = {"bogus": 1, **data, "extra": {"x": 1}}
    data["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "rs", "colour": 1}]
    data["spec"]["containers"][0]["resoures"] = {}
    expected = [
        "bogus",
        "metadata.ownerReferences[0].colour",
        "spec.containers[0].resoures",
        "extra",
    ]
    first = [p.path for p in validate_object(data) if p.kind == "UnknownField"]
    again = [p.path for p in validate_object(copy.deepcopy(data)) if p.kind == "UnknownField"]
    assert first == again == expected


def test_metadata_read_from_the_dict_is_the_field_readers() -> None:
    meta: dict[str, Any] = {
        "name": "p",
        "namespace": "ns",
        "uid": "u-1",
        "labels": {"app": "web"},
        "annotations": {"note": "x"},
    }
    [pod] = _pods(_pod("p", **{k: v for k, v in meta.items() if k != "name"}))
    fast = pod.metadata
    slow = _fields._metadata(_fields._Fields("Pod ns/p", "metadata", meta), namespaced=True)
    assert (
        fast
        == slow
        == ObjectMeta(
            name="p", namespace="ns", uid="u-1", labels={"app": "web"}, annotations={"note": "x"}
        )
    )
    # YAML's numbers in labels are not plain strings: the field reader turns them into text.
    [pod] = _pods(_pod("q", labels={"tier": 1}))
    assert pod.metadata.labels == {"tier": "1"}


def test_annotation_keys_are_checked_for_every_object() -> None:
    good = _pod("a", annotations={"note": "one"})
    assert validate_object(good) == []
    assert validate_object(_pod("b", annotations={"note": "two"})) == []
    bad = [str(p) for p in validate_object(_pod("c", annotations={"-bad": "v"}))]
    again = [str(p) for p in validate_object(_pod("d", annotations={"-bad": "w"}))]
    assert bad == again and len(bad) == 1 and bad[0].startswith("metadata.annotations: Invalid")


def test_a_pod_with_a_status_reads_it() -> None:
    read_manifest(_pod("a"))
    data = _pod("b")
    data["status"] = {"nominatedNodeName": "node-1"}
    [pod] = _pods(data)
    assert pod.status.nominated_node_name == "node-1"
    data["status"] = "Running"
    with pytest.raises(ManifestError, match="status: expected a mapping"):
        read_object(data)


def test_the_usual_shape_after_a_clean_twin_reads_as_alone() -> None:
    read_manifest(_pod("web-0"))
    assert _validation._usual_bodies  # a clean body: later twins take the short way
    meta = {"namespace": "ns", "uid": "u", "labels": {"a": "b"}, "annotations": {"n": "x"}}
    pod = read_manifest(_pod("web-1", **meta))
    assert pod == _alone(_pod("web-1", **meta))
    read_manifest(_node("node-0"))
    assert read_manifest(_node("node-1")) == _alone(_node("node-1"))


@pytest.mark.parametrize(
    "meta",
    [
        {"namespace": "Bad_NS"},
        {"labels": {"-bad": "v"}},
        {"annotations": {"-bad": "v"}},
        {"labels": {"app": "web" * 30}},
    ],
    ids=["namespace", "label key", "annotation key", "label value"],
)
def test_bad_metadata_after_a_clean_twin_is_rejected_in_the_same_words(
    meta: dict[str, Any],
) -> None:
    with pytest.raises(ManifestError) as alone:
        _alone(_pod("p", **meta))
    read_manifest(_pod("twin"))
    with pytest.raises(ManifestError) as after_twin:
        read_manifest(_pod("p", **meta))
    assert str(after_twin.value) == str(alone.value)


def test_an_unknown_field_after_a_clean_twin_still_warns_or_fails() -> None:
    read_manifest(_pod("twin"))
    data = _pod("p")
    data["metadata"]["colour"] = "red"
    with pytest.raises(ManifestError, match=r'^Pod default/p: unknown field "metadata\.colour"$'):
        read_manifest(copy.deepcopy(data))
    found: list[str] = []
    read_manifest(data, strict=False, warnings=found)
    assert len(found) == 1 and "metadata.colour" in found[0]


def test_a_body_with_a_warning_is_not_taken_the_short_way() -> None:
    data = _pod("a")
    data["spec"]["containers"][0]["colour"] = "red"
    found: list[str] = []
    read_manifest(data, strict=False, warnings=found)
    again: list[str] = []
    twin = copy.deepcopy(data)
    twin["metadata"]["name"] = "b"
    read_manifest(twin, strict=False, warnings=again)
    assert len(found) == len(again) == 1 and "spec.containers[0].colour" in again[0]


@pytest.mark.parametrize(
    "data",
    [
        _pod("p"),
        _node("n"),
        {**_pod("p"), "spec": {"containers": [{"name": "c", "colour": "red"}]}},
        {
            **_pod("p"),
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "-1"}}}]},
        },
        {**_pod("p"), "spec": {"containers": "not a list"}},
    ],
    ids=["pod", "node", "unknown field", "negative request", "wrong shape"],
)
def test_validate_and_read_is_validate_object_then_read_object(data: dict[str, Any]) -> None:
    expected = validate_object(copy.deepcopy(data), strict=False)
    errors = [p for p in expected if not p.warning]
    obj = None if errors else read_object(copy.deepcopy(data))
    _validation.forget_read_bodies()
    problems, read = validate_and_read(copy.deepcopy(data), strict=False)
    assert problems == expected
    assert read == obj
    assert (read is None) == bool(errors)


def test_validate_and_read_keys_the_body_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = _manifest.body_key

    def counted(kind: str, data: Any, *, from_json: bool = False) -> _manifest.BodyKey | None:
        calls.append(kind)
        return real(kind, data, from_json=from_json)

    monkeypatch.setattr(_validation, "body_key", counted)
    monkeypatch.setattr(_manifest, "body_key", counted)
    problems, pod = validate_and_read(_pod("p"))
    assert problems == [] and isinstance(pod, Pod)
    assert calls == ["Pod"]


def test_forget_read_bodies_makes_the_next_read_a_full_one() -> None:
    first, second = _pods(_pod("a"), _pod("b"))
    assert first.spec is second.spec  # one template, one spec
    _validation.forget_read_bodies()
    (third,) = _pods(_pod("c"))
    assert third.spec is not first.spec and third.spec == first.spec


def _with_spec(**spec: Any) -> dict[str, Any]:
    data = _pod("p")
    data["spec"]["containers"][0].update(spec)
    return data


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"x": 1}, {"x": 1.0}),
        ({"x": 0.0}, {"x": -0.0}),
        ({"x": True}, {"x": 1}),
        ({"x": "1"}, {"x": 1}),
        ({"x": 1, "y": 2}, {"y": 2, "x": 1}),
    ],
    ids=["int and float", "signed zero", "bool and int", "string and number", "key order"],
)
def test_a_json_body_key_tells_apart_what_repr_tells_apart(
    a: dict[str, Any], b: dict[str, Any]
) -> None:
    first, second = _with_spec(**a), _with_spec(**b)
    assert repr(first["spec"]) != repr(second["spec"])
    fast = [_manifest.body_key("Pod", d, from_json=True) for d in (first, second)]
    assert isinstance(fast[0], bytes) and isinstance(fast[1], bytes)
    assert fast[0] != fast[1]
    again = _manifest.body_key("Pod", copy.deepcopy(first), from_json=True)
    assert again == fast[0]


@pytest.mark.parametrize(
    "value",
    [None, float("nan"), float("inf"), 2**70, {1: "x"}],
    ids=["None", "NaN", "infinity", "a 70-bit integer", "a non-string key"],
)
def test_a_json_body_key_falls_back_to_repr_for_what_json_cannot_tell(value: Any) -> None:
    data = _with_spec(x=value)
    assert _manifest.body_key("Pod", data, from_json=True) == _manifest.body_key("Pod", data)
    assert isinstance(_manifest.body_key("Pod", data), str)


def test_a_node_without_a_spec_keys_apart_from_one_with_an_empty_spec() -> None:
    bare, empty = _node("n"), _node("n")
    del bare["spec"]
    empty["spec"] = {}
    keys = {_manifest.body_key("Node", d, from_json=True) for d in (bare, empty)}
    assert len(keys) == 2 and all(isinstance(k, bytes) for k in keys)


@pytest.mark.parametrize(
    "data",
    [
        _pod("p"),
        _node("n"),
        {**_pod("p"), "spec": {"containers": [{"name": "c", "colour": "red"}]}},
        {**_pod("p"), "spec": {"containers": [{"name": "c", "resources": {"limits": None}}]}},
    ],
    ids=["pod", "node", "unknown field", "a null"],
)
def test_reading_decoded_json_reads_as_the_plain_path(data: dict[str, Any]) -> None:
    plain = validate_and_read(copy.deepcopy(data), strict=False)
    _validation.forget_read_bodies()
    first = validate_and_read(copy.deepcopy(data), strict=False, from_json=True)
    twin = validate_and_read(copy.deepcopy(data), strict=False, from_json=True)  # memo hit
    assert first == plain and twin == plain

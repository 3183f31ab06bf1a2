"""Reading manifests: objects, ``kind: List``, and errors naming object and field."""

from __future__ import annotations

import pytest

from ksched._errors import KschedError, ManifestError
from ksched.api import Node, Pod, PriorityClass, load_manifests, read_object

POD = """
apiVersion: v1
kind: Pod
metadata: {name: web-0, labels: {app: web}}
spec:
  priority: 5
  containers:
  - name: c
    resources:
      requests: {cpu: 500m, memory: 1Gi}
  initContainers:
  - name: side
    restartPolicy: Always
    resources: {requests: {cpu: 100m}}
"""


def _pod(**requests: object) -> dict[str, object]:
    return {
        "kind": "Pod",
        "metadata": {"name": "web-0"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]},
    }


def test_pod_fields_are_read() -> None:
    [pod] = load_manifests(POD)
    assert isinstance(pod, Pod)
    assert pod.key == "default/web-0"
    assert pod.labels == {"app": "web"}
    assert pod.spec.priority == 5
    assert pod.spec.containers[0].requests == {"cpu": 500, "memory": 2**30}
    assert pod.spec.init_containers[0].restart_policy == "Always"
    assert pod.spec.scheduler_name == "default-scheduler"


def test_node_allocatable_defaults_to_capacity() -> None:
    node = read_object(
        {"kind": "Node", "metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "4"}}}
    )
    assert isinstance(node, Node)
    assert node.status.allocatable == {"cpu": 4000}


def test_invalid_quantity_names_object_and_field() -> None:
    with pytest.raises(ManifestError) as info:
        read_object(_pod(cpu="1.5x"))
    assert str(info.value) == (
        "Pod default/web-0: spec.containers[0].resources.requests.cpu: invalid quantity '1.5x'"
    )


def test_error_in_second_container_names_its_index() -> None:
    data = {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {
            "containers": [
                {"name": "a"},
                {"name": "b", "resources": {"limits": {"memory": "lots"}}},
            ]
        },
    }
    with pytest.raises(ManifestError, match=r"^Pod ns/p: spec\.containers\[1\]\.resources"):
        read_object(data)


def test_node_error_is_not_namespaced() -> None:
    data = {"kind": "Node", "metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "x"}}}
    with pytest.raises(ManifestError) as info:
        read_object(data)
    assert str(info.value) == "Node n1: status.capacity.cpu: invalid quantity 'x'"


def test_unknown_kind() -> None:
    with pytest.raises(ManifestError) as info:
        read_object({"kind": "Gadget", "metadata": {"name": "g"}})
    assert str(info.value) == "Gadget g: kind: unsupported kind 'Gadget'"


def test_missing_name() -> None:
    with pytest.raises(ManifestError) as info:
        read_object({"kind": "Pod", "metadata": {}})
    assert str(info.value) == "Pod default/<unnamed>: metadata.name: required"


def test_not_a_mapping() -> None:
    with pytest.raises(ManifestError, match="expected a Kubernetes object"):
        read_object(["Pod"])


def test_wrong_field_type_names_field() -> None:
    data = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": "c"}}
    with pytest.raises(ManifestError) as info:
        read_object(data)
    assert str(info.value).startswith("Pod default/p: spec.containers: expected a list")


def test_priority_class_requires_value() -> None:
    with pytest.raises(ManifestError) as info:
        read_object({"kind": "PriorityClass", "metadata": {"name": "high"}})
    assert str(info.value) == "PriorityClass high: value: required"


def test_kind_list_is_unpacked() -> None:
    text = """
kind: List
items:
- {kind: Node, metadata: {name: n1}}
- {kind: PriorityClass, metadata: {name: high}, value: 1000}
---
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c}]}
"""
    objs = load_manifests(text)
    assert [type(o) for o in objs] == [Node, PriorityClass, Pod]


def test_error_inside_list_names_item_object() -> None:
    text = (
        "kind: List\nitems:\n"
        "- {kind: Pod, metadata: {name: p, namespace: x}, spec: {containers: [{name: c}]}}\n- {}\n"
    )
    with pytest.raises(ManifestError, match=r"^object <unnamed>: kind: unsupported kind None"):
        load_manifests(text)


def test_invalid_yaml_names_source() -> None:
    with pytest.raises(ManifestError, match=r"^cluster\.yaml: invalid YAML"):
        load_manifests("kind: [", source="cluster.yaml")


def test_empty_documents_are_skipped() -> None:
    assert load_manifests("---\n---\n") == []


def test_manifest_error_types() -> None:
    assert issubclass(ManifestError, KschedError)
    assert issubclass(ManifestError, ValueError)

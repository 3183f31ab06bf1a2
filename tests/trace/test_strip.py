"""What a trace keeps of an object (the fields the plugins read) and what --anonymize
replaces; the kept fields still read as the same object for the scheduler."""

from __future__ import annotations

import copy
from typing import Any

from ksched.api import LabelSelector, Node, Pod, read_object
from ksched.trace import NEVER_RECORDED, Anonymizer, strip_object

POD: dict[str, Any] = {
    "metadata": {
        "name": "web-0",
        "namespace": "shop",
        "uid": "u-1",
        "resourceVersion": "812",
        "labels": {"app": "web", "tier": "3"},
        "annotations": {
            "kubectl.kubernetes.io/last-applied-configuration": "{...}" * 100,
            "team": "payments",
        },
        "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "web",
                "uid": "rs-1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    },
    "spec": {
        "schedulerName": "default-scheduler",
        "serviceAccountName": "web",
        "dnsPolicy": "ClusterFirst",
        "nodeSelector": {"kubernetes.io/os": "linux", "pool": "blue"},
        "tolerations": [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}],
        "containers": [
            {
                "name": "app",
                "image": "registry.example/shop/web:1.2",
                "env": [{"name": "DB_PASSWORD", "value": "hunter2"}],
                "envFrom": [{"secretRef": {"name": "db"}}],
                "command": ["/bin/web", "--token=abc"],
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": 80}},
                "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                "ports": [{"containerPort": 80, "hostPort": 8080}],
            }
        ],
    },
    "status": {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False"}],
        "nominatedNodeName": "n2",
    },
}
NODE: dict[str, Any] = {
    "metadata": {
        "name": "n2",
        "labels": {"kubernetes.io/hostname": "n2", "topology.kubernetes.io/zone": "eu-1a"},
    },
    "spec": {
        "podCIDR": "10.0.0.0/24",
        "taints": [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}],
    },
    "status": {
        "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
        "allocatable": {"cpu": "7800m", "memory": "30Gi", "pods": "110"},
        "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "now"}],
        "nodeInfo": {"kernelVersion": "6.1"},
        "images": [{"names": ["registry.example/shop/web:1.2"], "sizeBytes": 50000000}],
    },
}


def test_a_pod_keeps_what_the_plugins_read_and_no_secret_value() -> None:
    stripped = strip_object(POD, "Pod", "v1")
    assert stripped is not None
    text = repr(stripped)
    for gone in (
        "hunter2",
        "managedFields",
        "last-applied",
        "--token",
        "serviceAccountName",
        "livenessProbe",
        "resourceVersion",
        "conditions",
        "phase",
        "envFrom",
    ):
        assert gone not in text, gone
    assert stripped["spec"]["containers"] == [
        {
            "name": "app",
            "image": "registry.example/shop/web:1.2",
            "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
            "ports": [{"containerPort": 80, "hostPort": 8080}],
        }
    ]
    assert stripped["metadata"]["annotations"] == {"team": "payments"}
    assert stripped["metadata"]["ownerReferences"][0] == {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "web",
        "uid": "rs-1",
        "controller": True,
    }
    assert stripped["status"] == {"nominatedNodeName": "n2"}
    # the scheduler reads the same pod from it
    original = read_object({"apiVersion": "v1", "kind": "Pod", **POD})
    kept = read_object(stripped)
    assert isinstance(original, Pod) and isinstance(kept, Pod)
    assert kept.spec == original.spec
    assert kept.metadata.labels == original.metadata.labels


def test_a_node_keeps_allocatable_taints_and_images() -> None:
    stripped = strip_object(NODE, "Node", "v1")
    assert stripped is not None
    assert stripped["spec"] == {"taints": NODE["spec"]["taints"]}
    assert set(stripped["status"]) == {"allocatable", "images"}
    original = read_object({"apiVersion": "v1", "kind": "Node", **NODE})
    kept = read_object(stripped)
    assert isinstance(original, Node) and isinstance(kept, Node)
    assert kept.status.allocatable == original.status.allocatable
    assert kept.spec == original.spec and kept.status.images == original.status.images


def test_secrets_and_their_like_are_never_recorded() -> None:
    assert {"Secret", "ConfigMap"} <= NEVER_RECORDED
    secret = {"metadata": {"name": "db"}, "data": {"password": "aHVudGVyMg=="}}
    assert strip_object(secret, "Secret", "v1") is None


def test_anonymized_names_and_label_values_stay_consistent() -> None:
    anon = Anonymizer(key=b"k" * 32)
    pod = anon.object(strip_object(POD, "Pod", "v1") or {})
    node = anon.object(strip_object(NODE, "Node", "v1") or {})
    text = repr(pod) + repr(node)
    for secret in ("web-0", "shop", "payments", "registry.example", "eu-1a", "blue", "'n2'"):
        assert secret not in text, secret
    # the hostname label is still the node's name, the taint still matches the toleration,
    # the node still holds the pod's image
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == node["metadata"]["name"]
    assert pod["status"]["nominatedNodeName"] == node["metadata"]["name"]
    assert pod["spec"]["tolerations"][0]["value"] == node["spec"]["taints"][0]["value"]
    assert node["status"]["images"][0]["names"] == [pod["spec"]["containers"][0]["image"]]
    # keys, integers and the kept well-known values keep their meaning
    assert pod["spec"]["nodeSelector"]["kubernetes.io/os"] == "linux"
    assert pod["metadata"]["labels"]["tier"] == "3"
    assert set(pod["metadata"]["labels"]) == {"app", "tier"}
    assert "annotations" not in pod["metadata"]
    assert pod["spec"]["schedulerName"] == "default-scheduler"
    assert anon.key("shop/web-0") == f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


def test_an_anonymized_selector_still_selects_what_it_selected() -> None:
    anon = Anonymizer(key=b"k" * 32)
    selector = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}],
    }
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"selector": copy.deepcopy(selector), "minAvailable": 1},
    }
    labels = anon.object({"metadata": {"labels": {"app": "web", "tier": "front"}}})
    other = anon.object({"metadata": {"labels": {"app": "db", "tier": "front"}}})
    read = read_object(anon.object(pdb))
    sel = read.selector  # type: ignore[union-attr]
    assert isinstance(sel, LabelSelector)
    assert sel.matches(labels["metadata"]["labels"])
    assert not sel.matches(other["metadata"]["labels"])


def test_the_same_key_gives_the_same_tokens_and_another_key_others() -> None:
    a, b, c = Anonymizer(key=b"1" * 32), Anonymizer(key=b"1" * 32), Anonymizer(key=b"2" * 32)
    assert a.token("node-7") == b.token("node-7") != c.token("node-7")
    assert a.token("node-7").startswith("x") and len(a.token("node-7")) == 13
    assert a.token("system-node-critical") == "system-node-critical"

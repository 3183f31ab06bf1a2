"""What a trace keeps of an object: the fields the plugins read, nothing else.

Dropped everywhere: ``managedFields``, ``resourceVersion``, ``generation``, ``selfLink``,
kubectl's last-applied annotation and ``status`` (but where a plugin reads it). Pods keep
their scheduling fields and, of each container, name, image, resources, ports and
restartPolicy: never ``env``/``envFrom`` values, commands, probes. Secrets are never
recorded (no reader asks for them; ``strip_object`` refuses them too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["NEVER_RECORDED", "strip_object"]

NEVER_RECORDED = frozenset({"Secret", "ConfigMap", "ServiceAccount", "Event"})
"""Kinds that never go into a trace, whatever asks."""

_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_METADATA = (
    "name",
    "namespace",
    "uid",
    "labels",
    "annotations",
    "ownerReferences",
    "creationTimestamp",
    "deletionTimestamp",
)
_OWNER_FIELDS = ("apiVersion", "kind", "name", "uid", "controller")

_POD_SPEC = (
    "nodeName",
    "schedulerName",
    "priority",
    "priorityClassName",
    "preemptionPolicy",
    "nodeSelector",
    "affinity",
    "tolerations",
    "topologySpreadConstraints",
    "overhead",
    "volumes",
    "schedulingGates",
    "resourceClaims",
    "schedulingGroup",
    "workloadRef",
    "hostNetwork",
)
"""api/_manifest.py _pod_spec reads these (hostNetwork: host ports of the pod)."""
_CONTAINER = ("name", "image", "resources", "ports", "restartPolicy")
_VOLUME_SOURCES_READ = frozenset(
    {
        "persistentVolumeClaim",
        "ephemeral",
        "csi",
        "iscsi",
        "rbd",
        "gcePersistentDisk",
        "awsElasticBlockStore",
        "azureDisk",
        "cinder",
    }
)
"""Volume sources the volume plugins read (api/_storage_manifest.py); of any other
(configMap, secret, projected, emptyDir...) only its kind is kept."""
_POD_STATUS = ("nominatedNodeName", "startTime", "resourceClaimStatuses")
_NODE_SPEC = ("unschedulable", "taints")
_NODE_STATUS = ("allocatable", "images", "declaredFeatures")

_STATUS_READ: Mapping[str, tuple[str, ...]] = {
    "PodDisruptionBudget": ("disruptionsAllowed",),
    "PersistentVolume": ("phase",),
    "PersistentVolumeClaim": ("phase",),
    "ResourceClaim": ("allocation", "reservedFor"),
    "PodGroup": ("phase", "scheduled", "running"),
}
"""Kinds whose status a plugin reads, and which of its fields."""
_SPEC_OF_OWNERS = ("selector", "replicas", "template")
_SPEC_READ: Mapping[str, tuple[str, ...]] = {
    "ReplicaSet": _SPEC_OF_OWNERS,
    "StatefulSet": _SPEC_OF_OWNERS,
    "ReplicationController": _SPEC_OF_OWNERS,
    "Service": ("selector",),
    "Namespace": (),
}
"""Kinds of which a plugin reads only part of the spec (the selectors), and which part."""


def _pick(data: Any, fields: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(data, Mapping):
        return {}
    return {f: data[f] for f in fields if data.get(f) not in (None, {}, [], "")}


def _metadata(meta: Any) -> dict[str, Any]:
    out = _pick(meta, _METADATA)
    annotations = out.get("annotations")
    if isinstance(annotations, Mapping) and _LAST_APPLIED in annotations:
        annotations = {k: v for k, v in annotations.items() if k != _LAST_APPLIED}
        if annotations:
            out["annotations"] = annotations
        else:
            del out["annotations"]
    owners = out.get("ownerReferences")
    if isinstance(owners, list):
        out["ownerReferences"] = [_pick(o, _OWNER_FIELDS) for o in owners]
    return out


def _volume(volume: Any) -> Any:
    if not isinstance(volume, Mapping):
        return volume
    return {
        field: value if field == "name" or field in _VOLUME_SOURCES_READ else {}
        for field, value in volume.items()
    }


def _pod_spec(spec: Any) -> dict[str, Any]:
    out = _pick(spec, _POD_SPEC)
    if isinstance(out.get("volumes"), list):
        out["volumes"] = [_volume(v) for v in out["volumes"]]
    for field in ("containers", "initContainers"):
        containers = spec.get(field) if isinstance(spec, Mapping) else None
        if isinstance(containers, list):
            out[field] = [_pick(c, _CONTAINER) for c in containers]
    return out


def _template(template: Any) -> dict[str, Any]:
    if not isinstance(template, Mapping):
        return {}
    out: dict[str, Any] = {"metadata": _metadata(template.get("metadata"))}
    out["spec"] = _pod_spec(template.get("spec"))
    return out


def strip_object(raw: Mapping[str, Any], kind: str, api_version: str) -> dict[str, Any] | None:
    """The object as a trace stores it (a new dict); None for a kind never recorded.

    ``kind`` and ``apiVersion`` are given by the caller: list items carry neither.
    """
    if kind in NEVER_RECORDED:
        return None
    out: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    out["metadata"] = _metadata(raw.get("metadata"))
    if kind == "Pod":
        out["spec"] = _pod_spec(raw.get("spec"))
        status = _pick(raw.get("status"), _POD_STATUS)
        if status:
            out["status"] = status
        return out
    if kind == "Node":
        spec = _pick(raw.get("spec"), _NODE_SPEC)
        if spec:
            out["spec"] = spec
        out["status"] = _pick(raw.get("status"), _NODE_STATUS)
        if "allocatable" not in out["status"]:  # a node without allocatable reads capacity
            capacity = (raw.get("status") or {}).get("capacity")
            if capacity:
                out["status"]["allocatable"] = capacity
        return out
    spec_fields = _SPEC_READ.get(kind)
    if spec_fields is not None:
        spec = _pick(raw.get("spec"), spec_fields)
        if "template" in spec:
            spec["template"] = _template(spec["template"])
        if spec:
            out["spec"] = spec
        return out
    for field, value in raw.items():
        if field not in ("apiVersion", "kind", "metadata", "status"):
            out[field] = value
    status_fields = _STATUS_READ.get(kind)
    if status_fields:
        status = _pick(raw.get("status"), status_fields)
        if status:
            out["status"] = status
    return out

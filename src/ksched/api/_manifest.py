"""Reading Kubernetes manifests (dicts from YAML/JSON) into the object model.

This is the only code that knows dict shapes. Every error names the object
(``Kind namespace/name``) and the field path, and nothing is half-built.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from .._errors import ManifestError
from ._dra import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from ._fields import (
    SIM_EPOCH,
    _Fields,
    _metadata,
    _opt_label_selector,
    parse_time,
    read_node_selector,
    read_preferred_terms,
)
from ._model import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    Namespace,
    Node,
    NodeAffinity,
    NodeSpec,
    NodeStatus,
    ObjectMeta,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    PodDisruptionBudget,
    PodGroup,
    PodResourceClaim,
    PodResourceClaimStatus,
    PodSpec,
    PodStatus,
    PodTemplate,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from ._scheduling_groups import SchedulingPodGroup, Workload
from ._scheduling_groups_manifest import (
    SCHEDULING_NAMESPACED,
    SCHEDULING_READERS,
    read_scheduling_group,
    store_kind,
)
from ._storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from ._workloads import DaemonSet, Deployment, Job, compute_hash

__all__ = [
    "BODY_FIELDS",
    "SIM_EPOCH",
    "BodyKey",
    "KubeObject",
    "body_key",
    "forget_read_specs",
    "parse_time",
    "read_object",
    "read_with_key",
]

KubeObject = (
    Node
    | Pod
    | PriorityClass
    | PodDisruptionBudget
    | PodGroup
    | Namespace
    | Service
    | ReplicationController
    | ReplicaSet
    | StatefulSet
    | PersistentVolume
    | PersistentVolumeClaim
    | StorageClass
    | CSINode
    | CSIDriver
    | CSIStorageCapacity
    | Deployment
    | DaemonSet
    | Job
    | DeviceClass
    | ResourceSlice
    | ResourceClaim
    | ResourceClaimTemplate
    | Workload
    | SchedulingPodGroup
)


# ---- kinds -------------------------------------------------------------------------


def _node(f: _Fields, key: BodyKey | None = None) -> Node:
    if key is None:
        key = body_key("Node", f.data)
    if key is not None:
        body = _node_bodies.get(key)
        if body is not None:  # read before: only the metadata can be wrong
            return Node(metadata=_read_metadata(f, namespaced=False), spec=body[0], status=body[1])
    node = _node_in_order(f)
    if key is not None:
        if len(_node_bodies) >= _BODIES_LIMIT:
            _node_bodies.clear()
        _node_bodies[key] = (node.spec, node.status)
    return node


def _node_in_order(f: _Fields) -> Node:
    spec, status = f.sub("spec"), f.sub("status")
    taints = tuple(
        Taint(
            key=t.text("key"),
            value=t.text("value"),
            effect=t.choice("effect", ("NoSchedule", "PreferNoSchedule", "NoExecute")) or "",
        )
        for t in spec.items("taints")
    )
    capacity = status.resources("capacity")
    allocatable = status.resources("allocatable") if "allocatable" in status.data else capacity
    images = tuple(
        ContainerImage(names=i.strings("names"), size_bytes=i.integer("sizeBytes", 0) or 0)
        for i in status.items("images")
    )
    return Node(
        metadata=_read_metadata(f, namespaced=False),
        spec=NodeSpec(unschedulable=spec.flag("unschedulable"), taints=taints),
        status=NodeStatus(allocatable=allocatable, capacity=capacity, images=images),
    )


def _container(f: _Fields) -> Container:
    res = f.sub("resources")
    ports = tuple(
        ContainerPort(
            container_port=p.integer("containerPort", 0) or 0,
            host_port=p.integer("hostPort", 0) or 0,
            host_ip=p.text("hostIP"),
            protocol=p.choice("protocol", ("TCP", "UDP", "SCTP"), "TCP") or "TCP",
        )
        for p in f.items("ports")
    )
    limits = res.resources("limits")
    return Container(
        name=f.text("name"),
        image=f.text("image"),
        # the API server defaults a request missing beside a limit to the limit
        requests={**limits, **res.resources("requests")},
        limits=limits,
        ports=ports,
        restart_policy=f.opt_str("restartPolicy"),
        claims=tuple(c.text("name") for c in res.items("claims")),
    )


def _affinity_term(f: _Fields) -> PodAffinityTerm:
    return PodAffinityTerm(
        topology_key=f.text("topologyKey"),
        label_selector=_opt_label_selector(f, "labelSelector"),
        namespaces=f.strings("namespaces"),
        namespace_selector=_opt_label_selector(f, "namespaceSelector"),
        match_label_keys=f.strings("matchLabelKeys"),
        mismatch_label_keys=f.strings("mismatchLabelKeys"),
    )


def _weighted_terms(f: _Fields, field: str) -> tuple[WeightedPodAffinityTerm, ...]:
    return tuple(
        WeightedPodAffinityTerm(
            weight=t.integer("weight") or 0, term=_affinity_term(t.sub("podAffinityTerm"))
        )
        for t in f.items(field)
    )


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _affinity(f: _Fields) -> Affinity | None:
    if not f.data:
        return None
    node = pod = anti = None
    if f.data.get("nodeAffinity") is not None:
        na = f.sub("nodeAffinity")
        required = read_node_selector(na.sub(_REQUIRED)) if na.data.get(_REQUIRED) else None
        node = NodeAffinity(required=required, preferred=read_preferred_terms(na, _PREFERRED))
    if f.data.get("podAffinity") is not None:
        pa = f.sub("podAffinity")
        pod = PodAffinity(
            required=tuple(_affinity_term(t) for t in pa.items(_REQUIRED)),
            preferred=_weighted_terms(pa, _PREFERRED),
        )
    if f.data.get("podAntiAffinity") is not None:
        paa = f.sub("podAntiAffinity")
        anti = PodAntiAffinity(
            required=tuple(_affinity_term(t) for t in paa.items(_REQUIRED)),
            preferred=_weighted_terms(paa, _PREFERRED),
        )
    return Affinity(node_affinity=node, pod_affinity=pod, pod_anti_affinity=anti)


def _spread(f: _Fields) -> TopologySpreadConstraint:
    max_skew = f.integer("maxSkew")
    if max_skew is None or max_skew < 1:
        raise f.fail("maxSkew", f"must be greater than zero, got {max_skew!r}")
    min_domains = f.integer("minDomains")
    if min_domains is not None and min_domains < 1:
        raise f.fail("minDomains", f"must be greater than zero, got {min_domains!r}")
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=f.text("topologyKey"),
        when_unsatisfiable=f.choice(
            "whenUnsatisfiable", ("DoNotSchedule", "ScheduleAnyway"), "DoNotSchedule"
        )
        or "DoNotSchedule",
        label_selector=_opt_label_selector(f, "labelSelector"),
        min_domains=min_domains,
        node_affinity_policy=f.choice("nodeAffinityPolicy", ("Honor", "Ignore")),
        node_taints_policy=f.choice("nodeTaintsPolicy", ("Honor", "Ignore")),
        match_label_keys=f.strings("matchLabelKeys"),
    )


def _pod_spec(spec: _Fields) -> PodSpec:
    tolerations = tuple(
        Toleration(
            key=t.text("key"),
            operator=t.choice("operator", ("Equal", "Exists"), "Equal") or "Equal",
            value=t.text("value"),
            effect=t.choice("effect", ("", "NoSchedule", "PreferNoSchedule", "NoExecute"), "")
            or "",
            toleration_seconds=t.integer("tolerationSeconds"),
        )
        for t in spec.items("tolerations")
    )
    gates = tuple(g.text("name") for g in spec.items("schedulingGates"))
    return PodSpec(
        containers=tuple(_container(c) for c in spec.items("containers")),
        init_containers=tuple(_container(c) for c in spec.items("initContainers")),
        node_name=spec.opt_str("nodeName") or None,
        node_selector=spec.string_map("nodeSelector"),
        affinity=_affinity(spec.sub("affinity")),
        tolerations=tolerations,
        topology_spread_constraints=tuple(
            _spread(c) for c in spec.items("topologySpreadConstraints")
        ),
        scheduler_name=spec.text("schedulerName") or "default-scheduler",
        priority=spec.integer("priority"),
        priority_class_name=spec.text("priorityClassName"),
        preemption_policy=spec.choice("preemptionPolicy", ("PreemptLowerPriority", "Never")),
        scheduling_gates=gates,
        overhead=spec.resources("overhead"),
        volumes=read_volumes(spec),
        resource_claims=tuple(_pod_claim(c) for c in spec.items("resourceClaims")),
        scheduling_group=read_scheduling_group(spec),
    )


_BODIES_LIMIT = 4096
_specs: dict[BodyKey, PodSpec] = {}
"""Pod specs read, by :func:`body_key`: pods made from one template share one spec."""
_node_bodies: dict[BodyKey, tuple[NodeSpec, NodeStatus]] = {}
"""Node specs and statuses read, by :func:`body_key`: a node pool's nodes share them."""
NO_POD_STATUS = PodStatus()

BODY_FIELDS: Mapping[str, tuple[str, ...]] = {"Pod": ("spec",), "Node": ("spec", "status")}
"""The fields of a kind read (and checked) from their own dicts alone, whatever the
metadata: objects made from one template read them once."""


def forget_read_specs() -> None:
    """Empty the memos of Pod specs and Node bodies read."""
    _specs.clear()
    _node_bodies.clear()


BodyKey = str | bytes
"""What :func:`body_key` gives: a ``repr`` (str) or, for decoded JSON, a serialization."""

_JSON_KEY_OPTIONS = (
    orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
"""What is not plain JSON raises (and the key falls back to ``repr``)."""


def body_key(kind: str, data: Mapping[str, Any], *, from_json: bool = False) -> BodyKey | None:
    """A key equal for objects of ``kind`` whose body fields are equal dicts (their
    ``repr``); None for other kinds and other shapes.

    With ``from_json`` (``data`` came from a JSON decoder: only dicts, lists, strings,
    numbers, booleans and None) the key is the bodies' orjson serialization, about 8x
    cheaper than a ``repr`` and equal exactly when the bodies are; a body whose
    serialization holds ``null`` anywhere (None and NaN both serialize so) or that orjson
    does not take is keyed by ``repr``.
    """
    fields = BODY_FIELDS.get(kind)
    if fields is None:
        return None
    values = tuple(map(data.get, fields))
    for value in values:
        if value is not None and type(value) is not dict:
            return None
    if from_json:
        present = {f: v for f, v in zip(fields, values, strict=True) if v is not None}
        try:
            key = orjson.dumps(present, option=_JSON_KEY_OPTIONS)
        except TypeError:  # orjson.JSONEncodeError: a big integer, a non-str key, ...
            pass
        else:
            if b"null" not in key:
                return key
    return repr(values)


def _pod(f: _Fields, key: BodyKey | None = None) -> Pod:
    if key is None:
        key = body_key("Pod", f.data)
    if key is not None:
        pod_spec = _specs.get(key)
        raw_status = f.data.get("status")
        if pod_spec is not None and (raw_status is None or raw_status == {}):  # read before
            meta = _read_metadata(f, namespaced=True)
            return Pod(metadata=meta, spec=pod_spec, status=NO_POD_STATUS)
    spec, status = f.sub("spec"), f.sub("status")
    # A spec is read from its dict alone: equal dicts (a workload's pods) read once.
    pod_spec = _specs.get(key) if key is not None else None
    if pod_spec is None:
        pod_spec = _pod_spec(spec)
        if key is not None:
            if len(_specs) >= _BODIES_LIMIT:
                _specs.clear()
            _specs[key] = pod_spec
    if not status.data:
        pod_status = NO_POD_STATUS
    else:
        pod_status = PodStatus(
            nominated_node_name=status.opt_str("nominatedNodeName") or None,
            start_time=status.time("startTime"),
            resource_claim_statuses=tuple(
                PodResourceClaimStatus(
                    name=c.text("name"), resource_claim_name=c.opt_str("resourceClaimName")
                )
                for c in status.items("resourceClaimStatuses")
            ),
        )
    return Pod(metadata=_read_metadata(f, namespaced=True), spec=pod_spec, status=pod_status)


_PLAIN_METADATA = frozenset({"name", "namespace", "uid", "labels", "annotations"})


def plain_map(value: object) -> bool:
    if value is None:
        return True
    if type(value) is not dict:
        return False
    return all(type(k) is str and type(v) is str for k, v in value.items())


def _read_metadata(f: _Fields, *, namespaced: bool) -> ObjectMeta:
    """``_metadata(f.sub("metadata"))``, straight from the dict when it holds only
    strings under the fields a manifest usually sets (nothing there can be wrong)."""
    data = f.data.get("metadata")
    if type(data) is dict and data.keys() <= _PLAIN_METADATA:
        name, namespace, uid = data.get("name"), data.get("namespace"), data.get("uid")
        labels, annotations = data.get("labels"), data.get("annotations")
        if (
            type(name) is str
            and (namespace is None or type(namespace) is str)
            and (uid is None or type(uid) is str)
            and plain_map(labels)
            and plain_map(annotations)
        ):
            return ObjectMeta(
                name=name,
                namespace=(namespace or "default") if namespaced else "",
                uid=uid or "",
                labels=dict(labels) if labels else {},
                annotations=dict(annotations) if annotations else {},
            )
    return _metadata(f.sub("metadata"), namespaced=namespaced)


def _pod_claim(f: _Fields) -> PodResourceClaim:
    claim = PodResourceClaim(
        name=f.text("name"),
        resource_claim_name=f.opt_str("resourceClaimName"),
        resource_claim_template_name=f.opt_str("resourceClaimTemplateName"),
    )
    if (claim.resource_claim_name is None) == (claim.resource_claim_template_name is None):
        raise f.fail(
            "resourceClaimName",
            "exactly one of resourceClaimName, resourceClaimTemplateName is required",
        )
    return claim


def _priority_class(f: _Fields) -> PriorityClass:
    value = f.integer("value")
    if value is None:
        raise f.fail("value", "required")
    return PriorityClass(
        name=f.sub("metadata").text("name"),
        value=value,
        global_default=f.flag("globalDefault"),
        preemption_policy=f.choice("preemptionPolicy", ("PreemptLowerPriority", "Never")),
    )


def _int_or_percent(f: _Fields, field: str) -> int | str | None:
    raw = f.data.get(field)
    if raw is None:
        return None
    if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0:
        return raw
    if isinstance(raw, str) and raw.endswith("%") and raw[:-1].isdigit():
        return raw
    if isinstance(raw, str) and raw.isdigit():
        return int(raw)
    raise f.fail(field, f"expected a non-negative integer or a percentage, got {raw!r}")


def _pdb(f: _Fields) -> PodDisruptionBudget:
    spec, status = f.sub("spec"), f.sub("status")
    return PodDisruptionBudget(
        metadata=_metadata(f.sub("metadata"), namespaced=True),
        selector=_opt_label_selector(spec, "selector"),
        min_available=_int_or_percent(spec, "minAvailable"),
        max_unavailable=_int_or_percent(spec, "maxUnavailable"),
        disruptions_allowed=status.integer("disruptionsAllowed"),
    )


def _pod_group(f: _Fields) -> PodGroup:
    spec = f.sub("spec")
    min_member = spec.integer("minMember", 1)
    if min_member is None or min_member < 0:
        raise spec.fail("minMember", f"must not be negative, got {min_member!r}")
    timeout = spec.integer("scheduleTimeoutSeconds")
    return PodGroup(
        metadata=_metadata(f.sub("metadata"), namespaced=True),
        min_member=min_member,
        min_resources=spec.resources("minResources"),
        schedule_timeout_seconds=timeout,
    )


def _namespace(f: _Fields) -> Namespace:
    meta = f.sub("metadata")
    return Namespace(name=meta.text("name"), labels=meta.string_map("labels"))


def _service(f: _Fields) -> Service:
    return Service(
        metadata=_metadata(f.sub("metadata"), namespaced=True),
        selector=f.sub("spec").string_map("selector"),
    )


def _rc(f: _Fields) -> ReplicationController:
    spec = f.sub("spec")
    return ReplicationController(
        metadata=_metadata(f.sub("metadata"), namespaced=True),
        selector=spec.string_map("selector"),
        replicas=_count(spec, "replicas", 1),
        template=_template(spec, required=False),
    )


def _template(f: _Fields, *, required: bool) -> PodTemplate | None:
    if f.data.get("template") is None:
        if required:
            raise f.fail("template", "Required value")
        return None
    template = f.sub("template")
    return PodTemplate(
        metadata=_metadata(template.sub("metadata"), namespaced=True),
        spec=_pod_spec(template.sub("spec")),
        hash=compute_hash(template.data),
    )


def _count(f: _Fields, field: str, default: int) -> int:
    value = f.integer(field, default)
    return default if value is None else value


def _rs(f: _Fields) -> ReplicaSet:
    spec = f.sub("spec")
    return ReplicaSet(
        metadata=_metadata(f.sub("metadata"), namespaced=True),
        selector=_opt_label_selector(spec, "selector"),
        replicas=_count(spec, "replicas", 1),
        template=_template(spec, required=False),
    )


def _sts(f: _Fields) -> StatefulSet:
    spec = f.sub("spec")
    return StatefulSet(
        metadata=_metadata(f.sub("metadata"), namespaced=True),
        selector=_opt_label_selector(spec, "selector"),
        replicas=_count(spec, "replicas", 1),
        template=_template(spec, required=False),
        pod_management_policy=spec.choice(
            "podManagementPolicy", ("OrderedReady", "Parallel"), "OrderedReady"
        )
        or "OrderedReady",
        service_name=spec.text("serviceName"),
        volume_claim_templates=tuple(t.data for t in spec.items("volumeClaimTemplates")),
    )


def _deployment(f: _Fields) -> Deployment:
    spec = f.sub("spec")
    template = _template(spec, required=True)
    assert template is not None
    return Deployment(
        metadata=_metadata(f.sub("metadata"), namespaced=True),
        selector=_opt_label_selector(spec, "selector"),
        replicas=_count(spec, "replicas", 1),
        template=template,
    )


def _daemonset(f: _Fields) -> DaemonSet:
    spec = f.sub("spec")
    template = _template(spec, required=True)
    assert template is not None
    return DaemonSet(
        metadata=_metadata(f.sub("metadata"), namespaced=True),
        selector=_opt_label_selector(spec, "selector"),
        template=template,
    )


def _job(f: _Fields) -> Job:
    spec = f.sub("spec")
    template = _template(spec, required=True)
    assert template is not None
    return Job(
        metadata=_metadata(f.sub("metadata"), namespaced=True),
        parallelism=_count(spec, "parallelism", 1),
        completions=spec.integer("completions"),
        template=template,
    )


_READERS: dict[str, Callable[[_Fields], Any]] = {
    "Node": _node,
    "Pod": _pod,
    "PriorityClass": _priority_class,
    "PodDisruptionBudget": _pdb,
    "PodGroup": _pod_group,
    "Namespace": _namespace,
    "Service": _service,
    "ReplicationController": _rc,
    "ReplicaSet": _rs,
    "StatefulSet": _sts,
    "Deployment": _deployment,
    "DaemonSet": _daemonset,
    "Job": _job,
}

_NAMESPACED = {
    "Pod",
    "PodDisruptionBudget",
    "PodGroup",
    "Service",
    "ReplicationController",
    "ReplicaSet",
    "StatefulSet",
    "Deployment",
    "DaemonSet",
    "Job",
    "CronJob",
}
_READERS.update(SCHEDULING_READERS)
_NAMESPACED |= SCHEDULING_NAMESPACED


# resource.k8s.io kinds read with this module's field reader (imported last: they use it).
from ._dra_manifest import DRA_NAMESPACED, DRA_READERS  # noqa: E402

_READERS.update(DRA_READERS)
_NAMESPACED |= DRA_NAMESPACED


def describe(data: Mapping[str, Any]) -> str:
    """``Kind namespace/name`` for messages, from whatever the dict holds."""
    kind = data.get("kind") or "object"
    if not isinstance(kind, str):  # named in a message, not looked up
        kind = reprlib.repr(kind)
    namespaced = store_kind(data) in _NAMESPACED or kind in _NAMESPACED
    meta = data.get("metadata")
    if type(meta) is not dict and not isinstance(meta, Mapping):
        meta = {}
    name, namespace = meta.get("name") or "<unnamed>", meta.get("namespace") or "default"
    if not isinstance(name, str):  # bounded: the value may be huge
        name = reprlib.repr(name)
    if not isinstance(namespace, str):
        namespace = reprlib.repr(namespace)
    if namespaced:
        return f"{kind} {namespace}/{name}"
    return f"{kind} {name}"


def read_object(data: object) -> KubeObject:
    """One Kubernetes object from its dict form, as given (see ``read_manifest``).

    Raises:
        ManifestError: unknown kind, missing name, or a malformed field; the message
            names the object and the field.
    """
    return read_with_key(data, None)


def read_with_key(data: object, key: BodyKey | None) -> KubeObject:
    """``read_object`` given the object's ``body_key`` if the caller has it (else None)."""
    if type(data) is not dict and not isinstance(data, Mapping):
        got = reprlib.repr(data)  # bounded: the value may be huge
        raise ManifestError(f"expected a Kubernetes object (a mapping), got {got}")
    label = describe(data)
    kind = data.get("kind")
    reader = _READERS.get(store_kind(data))
    if reader is None:
        if kind == "CronJob":
            raise ManifestError(
                f"{label}: kind: CronJob is not simulated (its schedule is wall-clock time); "
                "give the Job it would create instead"
            )
        raise ManifestError(f"{label}: kind: unsupported kind {kind!r}")
    meta = data.get("metadata")
    if (type(meta) is not dict and not isinstance(meta, Mapping)) or not meta.get("name"):
        raise ManifestError(f"{label}: metadata.name: required")
    fields = _Fields(label, "", data)
    obj: KubeObject
    if reader is _pod:
        obj = _pod(fields, key)
    elif reader is _node:
        obj = _node(fields, key)
    else:
        obj = reader(fields)
    return obj


# Storage kinds read in their own module, which uses the readers above.
from ._storage_manifest import STORAGE_NAMESPACED, STORAGE_READERS, read_volumes  # noqa: E402

_READERS.update(STORAGE_READERS)
_NAMESPACED |= STORAGE_NAMESPACED

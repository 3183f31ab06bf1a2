"""Strict field decoding: the field names of the kinds ksched reads.

# staging/src/k8s.io/api/{core,apps,batch,policy,scheduling}/v1/types.go (json tags) and
# apimachinery's strict decoding ("strict decoding error: unknown field ...").

A table, not a schema: every field of the objects and sub-objects ksched reads is listed
by its JSON name, so a typo (``resoures:``) is caught with its path as ``kubectl apply``
with server-side strict validation catches it. Sub-objects ksched does not read (``env``,
probes, volumes, ``securityContext``, ``status`` of most kinds...) are opaque: their own
field names are not checked. Fields that hold a list or a mapping are checked to hold
one: ``containers: {name: web}`` is ``spec.containers: expected a list, got a mapping``
(kube-apiserver refuses to decode it, naming the type it wanted).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from ._names import FieldProblem

__all__ = ["API_VERSIONS", "schema_problems", "unknown_fields"]

OPAQUE: Final = "opaque"
"""Any value: a field ksched does not read below this point."""
MAP: Final = "map"
"""A mapping whose keys are data (labels, requests), not field names."""
LIST: Final = "list"
"""A list whose items are not walked (command, finalizers, values)."""

Schema = Mapping[str, Any]  # field -> OPAQUE, MAP, LIST, a nested Schema, or [Schema]


def _fields(*names: str, **nested: Any) -> dict[str, Any]:
    out: dict[str, Any] = dict.fromkeys(names, OPAQUE)
    out.update(nested)
    return out


OWNER_REFERENCE = _fields("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")
OBJECT_META = _fields(
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    labels=MAP,
    annotations=MAP,
    finalizers=LIST,
    ownerReferences=[OWNER_REFERENCE],
)
REQUIREMENT = _fields("key", "operator", values=LIST)
LABEL_SELECTOR = _fields(matchLabels=MAP, matchExpressions=[REQUIREMENT])
NODE_SELECTOR_TERM = _fields(matchExpressions=[REQUIREMENT], matchFields=[REQUIREMENT])
NODE_SELECTOR = _fields(nodeSelectorTerms=[NODE_SELECTOR_TERM])
POD_AFFINITY_TERM = _fields(
    "topologyKey",
    namespaces=LIST,
    matchLabelKeys=LIST,
    mismatchLabelKeys=LIST,
    labelSelector=LABEL_SELECTOR,
    namespaceSelector=LABEL_SELECTOR,
)
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
POD_AFFINITY = {
    _REQUIRED: [POD_AFFINITY_TERM],
    _PREFERRED: [_fields("weight", podAffinityTerm=POD_AFFINITY_TERM)],
}
AFFINITY = _fields(
    nodeAffinity={
        _REQUIRED: NODE_SELECTOR,
        _PREFERRED: [_fields("weight", preference=NODE_SELECTOR_TERM)],
    },
    podAffinity=POD_AFFINITY,
    podAntiAffinity=POD_AFFINITY,
)
CONTAINER = _fields(
    "name",
    "image",
    "workingDir",
    "resizePolicy",
    "restartPolicy",
    "restartPolicyRules",
    "volumeMounts",
    "volumeDevices",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty",
    command=LIST,
    args=LIST,
    env=LIST,
    envFrom=LIST,
    ports=[_fields("name", "hostPort", "containerPort", "protocol", "hostIP")],
    resources=_fields(limits=MAP, requests=MAP, claims=[_fields("name", "request")]),
)
POD_SPEC = _fields(
    "restartPolicy",
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "dnsPolicy",
    "serviceAccountName",
    "serviceAccount",
    "automountServiceAccountToken",
    "nodeName",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "shareProcessNamespace",
    "securityContext",
    "hostname",
    "hostnameOverride",
    "subdomain",
    "schedulerName",
    "hostAliases",
    "priorityClassName",
    "priority",
    "dnsConfig",
    "readinessGates",
    "runtimeClassName",
    "enableServiceLinks",
    "preemptionPolicy",
    "setHostnameAsFQDN",
    "os",
    "hostUsers",
    "resourceClaims",
    "resources",
    volumes=LIST,
    ephemeralContainers=LIST,
    nodeSelector=MAP,
    imagePullSecrets=LIST,
    overhead=MAP,
    initContainers=[CONTAINER],
    containers=[CONTAINER],
    affinity=AFFINITY,
    tolerations=[_fields("key", "operator", "value", "effect", "tolerationSeconds")],
    topologySpreadConstraints=[
        _fields(
            "maxSkew",
            "topologyKey",
            "whenUnsatisfiable",
            "minDomains",
            "nodeAffinityPolicy",
            "nodeTaintsPolicy",
            matchLabelKeys=LIST,
            labelSelector=LABEL_SELECTOR,
        )
    ],
    schedulingGates=[_fields("name")],
    schedulingGroup=_fields("podGroupName"),
    workloadRef=_fields("name", "podGroup", "podGroupReplicaKey"),
)
POD_TEMPLATE = _fields(metadata=OBJECT_META, spec=POD_SPEC)


def _kind(spec: Schema | None = None, **top: Any) -> dict[str, Any]:
    out = _fields("apiVersion", "kind", "status", metadata=OBJECT_META, **top)
    if spec is not None:
        out["spec"] = spec
    return out


_PV_SOURCES = (
    "csi",
    "hostPath",
    "local",
    "nfs",
    "awsElasticBlockStore",
    "gcePersistentDisk",
    "azureDisk",
    "azureFile",
    "cinder",
    "rbd",
    "iscsi",
    "fc",
    "flexVolume",
    "cephfs",
    "glusterfs",
    "portworxVolume",
    "photonPersistentDisk",
    "quobyte",
    "scaleIO",
    "storageos",
    "vsphereVolume",
    "flocker",
)
"""PersistentVolume sources (opaque below their names)."""

DEVICE_SELECTOR = _fields(cel=_fields("expression"))
_DEVICE_REQUEST = (
    "deviceClassName",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
)
CLAIM_SPEC = _fields(
    devices=_fields(
        "config",
        requests=[
            _fields(
                "name",
                exactly=_fields(*_DEVICE_REQUEST, selectors=[DEVICE_SELECTOR]),
                firstAvailable=[_fields("name", *_DEVICE_REQUEST, selectors=[DEVICE_SELECTOR])],
            )
        ],
        constraints=[_fields("requests", "matchAttribute", "distinctAttribute")],
    )
)

# scheduling.k8s.io Workload API (v1alpha1's podGroups[].policy, then podGroupTemplates[]
# .schedulingPolicy); the fields ksched does not read yet are named, not checked.
GROUP_POLICY = _fields("basic", gang=_fields("minCount"))
_TEMPLATE_EXTRAS = (
    "schedulingConstraints",
    "resourceClaims",
    "disruptionMode",
    "priorityClassName",
    "priority",
    "preemptionPolicy",
)
WORKLOAD_SPEC = _fields(
    "compositePodGroupTemplates",
    controllerRef=_fields("apiGroup", "kind", "name"),
    podGroups=[_fields("name", policy=GROUP_POLICY)],
    podGroupTemplates=[_fields("name", *_TEMPLATE_EXTRAS, schedulingPolicy=GROUP_POLICY)],
)
SCHEDULING_POD_GROUP_SPEC = _fields(
    *_TEMPLATE_EXTRAS,
    podGroupTemplateRef=_fields(workload=_fields("workloadName", "podGroupTemplateName")),
    schedulingPolicy=GROUP_POLICY,
)

SCHEMAS: Mapping[str, Schema] = {
    "Pod": _kind(POD_SPEC),
    "Node": _kind(
        _fields(
            "podCIDR",
            "podCIDRs",
            "providerID",
            "unschedulable",
            "configSource",
            "externalID",
            taints=[_fields("key", "value", "effect", "timeAdded")],
        ),
        status=_fields(
            "phase",
            "conditions",
            "addresses",
            "daemonEndpoints",
            "nodeInfo",
            "volumesInUse",
            "volumesAttached",
            "config",
            "runtimeHandlers",
            "features",
            "declaredFeatures",
            capacity=MAP,
            allocatable=MAP,
            images=[_fields("names", "sizeBytes")],
        ),
    ),
    "PriorityClass": _kind(
        None, value=OPAQUE, globalDefault=OPAQUE, description=OPAQUE, preemptionPolicy=OPAQUE
    ),
    "PodDisruptionBudget": _kind(
        _fields(
            "minAvailable", "maxUnavailable", "unhealthyPodEvictionPolicy", selector=LABEL_SELECTOR
        )
    ),
    "PodGroup": _kind(_fields("minMember", "minResources", "scheduleTimeoutSeconds")),
    "Namespace": _kind(_fields("finalizers")),
    "Service": _kind(
        _fields(
            "ports",
            "selector",
            "clusterIP",
            "clusterIPs",
            "type",
            "externalIPs",
            "sessionAffinity",
            "loadBalancerIP",
            "loadBalancerSourceRanges",
            "externalName",
            "externalTrafficPolicy",
            "healthCheckNodePort",
            "publishNotReadyAddresses",
            "sessionAffinityConfig",
            "ipFamilies",
            "ipFamilyPolicy",
            "allocateLoadBalancerNodePorts",
            "loadBalancerClass",
            "internalTrafficPolicy",
            "trafficDistribution",
        )
    ),
    "ReplicationController": _kind(
        _fields("replicas", "minReadySeconds", "selector", template=POD_TEMPLATE)
    ),
    "ReplicaSet": _kind(
        _fields("replicas", "minReadySeconds", selector=LABEL_SELECTOR, template=POD_TEMPLATE)
    ),
    "Deployment": _kind(
        _fields(
            "replicas",
            "strategy",
            "minReadySeconds",
            "revisionHistoryLimit",
            "paused",
            "progressDeadlineSeconds",
            selector=LABEL_SELECTOR,
            template=POD_TEMPLATE,
        )
    ),
    "StatefulSet": _kind(
        _fields(
            "replicas",
            "volumeClaimTemplates",
            "serviceName",
            "podManagementPolicy",
            "updateStrategy",
            "revisionHistoryLimit",
            "minReadySeconds",
            "persistentVolumeClaimRetentionPolicy",
            "ordinals",
            selector=LABEL_SELECTOR,
            template=POD_TEMPLATE,
        )
    ),
    "DaemonSet": _kind(
        _fields(
            "updateStrategy",
            "minReadySeconds",
            "revisionHistoryLimit",
            selector=LABEL_SELECTOR,
            template=POD_TEMPLATE,
        )
    ),
    "Job": _kind(
        _fields(
            "parallelism",
            "completions",
            "activeDeadlineSeconds",
            "podFailurePolicy",
            "successPolicy",
            "backoffLimit",
            "backoffLimitPerIndex",
            "maxFailedIndexes",
            "manualSelector",
            "ttlSecondsAfterFinished",
            "completionMode",
            "suspend",
            "podReplacementPolicy",
            "managedBy",
            selector=LABEL_SELECTOR,
            template=POD_TEMPLATE,
        )
    ),
    # storage.k8s.io and the core storage kinds (the volume plugins read them)
    "PersistentVolume": _kind(
        _fields(
            "capacity",
            "accessModes",
            "persistentVolumeReclaimPolicy",
            "storageClassName",
            "mountOptions",
            "volumeMode",
            "volumeAttributesClassName",
            *_PV_SOURCES,
            claimRef=_fields(
                "apiVersion", "kind", "name", "namespace", "uid", "resourceVersion", "fieldPath"
            ),
            nodeAffinity=_fields(required=NODE_SELECTOR),
        )
    ),
    "PersistentVolumeClaim": _kind(
        _fields(
            "accessModes",
            "volumeName",
            "storageClassName",
            "volumeMode",
            "dataSource",
            "dataSourceRef",
            "volumeAttributesClassName",
            selector=LABEL_SELECTOR,
            resources=_fields(requests=MAP, limits=MAP),
        )
    ),
    "StorageClass": _kind(
        None,
        provisioner=OPAQUE,
        parameters=OPAQUE,
        reclaimPolicy=OPAQUE,
        mountOptions=OPAQUE,
        allowVolumeExpansion=OPAQUE,
        volumeBindingMode=OPAQUE,
        allowedTopologies=[_fields(matchLabelExpressions=[_fields("key", "values")])],
    ),
    "CSINode": _kind(
        _fields(drivers=[_fields("name", "nodeID", "topologyKeys", allocatable=_fields("count"))])
    ),
    "CSIDriver": _kind(
        _fields(
            "attachRequired",
            "podInfoOnMount",
            "volumeLifecycleModes",
            "storageCapacity",
            "fsGroupPolicy",
            "tokenRequests",
            "requiresRepublish",
            "seLinuxMount",
            "nodeAllocatableUpdatePeriodSeconds",
            "serviceAccountTokenInSecrets",
        )
    ),
    "CSIStorageCapacity": _kind(
        None,
        storageClassName=OPAQUE,
        capacity=OPAQUE,
        maximumVolumeSize=OPAQUE,
        nodeTopology=LABEL_SELECTOR,
    ),
    # resource.k8s.io/v1 (DynamicResources reads them)
    "DeviceClass": _kind(_fields("config", "extendedResourceName", selectors=[DEVICE_SELECTOR])),
    "ResourceSlice": _kind(
        _fields(
            "driver",
            "nodeName",
            "allNodes",
            "perDeviceNodeSelection",
            "sharedCounters",
            pool=_fields("name", "generation", "resourceSliceCount"),
            nodeSelector=NODE_SELECTOR,
            devices=[
                _fields(
                    "name",
                    "attributes",
                    "capacity",
                    "consumesCounters",
                    "nodeName",
                    "allNodes",
                    "taints",
                    "bindsToNode",
                    "bindingConditions",
                    "bindingFailureConditions",
                    "allowMultipleAllocations",
                    nodeSelector=NODE_SELECTOR,
                )
            ],
        )
    ),
    "ResourceClaim": _kind(CLAIM_SPEC),
    "ResourceClaimTemplate": _kind(_fields(metadata=OBJECT_META, spec=CLAIM_SPEC)),
    "Workload": _kind(WORKLOAD_SPEC),
    "SchedulingPodGroup": _kind(SCHEDULING_POD_GROUP_SPEC),
}
"""Kind -> its field table. A kind ksched reads has one: ``read_manifest`` checks only these."""

API_VERSIONS: Mapping[str, tuple[str, ...]] = {
    "Pod": ("v1",),
    "Node": ("v1",),
    "Namespace": ("v1",),
    "Service": ("v1",),
    "ReplicationController": ("v1",),
    "PriorityClass": ("scheduling.k8s.io/v1",),
    "PodDisruptionBudget": ("policy/v1",),
    "PodGroup": ("scheduling.x-k8s.io/v1alpha1", "scheduling.sigs.k8s.io/v1alpha1"),
    "ReplicaSet": ("apps/v1",),
    "Deployment": ("apps/v1",),
    "StatefulSet": ("apps/v1",),
    "DaemonSet": ("apps/v1",),
    "Job": ("batch/v1",),
    "Workload": (
        "scheduling.k8s.io/v1alpha1",
        "scheduling.k8s.io/v1alpha2",
        "scheduling.k8s.io/v1alpha3",
        "scheduling.k8s.io/v1beta1",
    ),
    "SchedulingPodGroup": (
        "scheduling.k8s.io/v1alpha2",
        "scheduling.k8s.io/v1alpha3",
        "scheduling.k8s.io/v1beta1",
    ),
}
"""Kind -> the apiVersions ksched reads it in (``SchedulingPodGroup``: the
scheduling.k8s.io PodGroup, see ``_scheduling_groups_manifest.store_kind``)."""


def _shape(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    return "a number" if isinstance(value, int | float) else type(value).__name__


def _wrong_type(path: str, expected: str, value: Any) -> FieldProblem:
    return FieldProblem(path, "TypeInvalid", f"expected {expected}, got {_shape(value)}")


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _is_list(value: Any) -> bool:
    return type(value) is list or isinstance(value, list)


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _walk(schema: Schema, data: Mapping[str, Any], path: str) -> Iterator[str | FieldProblem]:
    """The unknown fields and wrong shapes under ``data`` (at ``path``), in order; a path
    is only spelled out for a field that is yielded or walked into."""
    for key, value in data.items():
        sub = schema.get(key) if type(key) is str or isinstance(key, str) else None
        if sub is None:
            yield _join(path, key)
        elif sub is OPAQUE or value is None:
            continue
        elif sub is MAP:
            if not _is_mapping(value):
                yield _wrong_type(_join(path, key), "a mapping", value)
        elif sub is LIST:
            if not _is_list(value):
                yield _wrong_type(_join(path, key), "a list", value)
        elif type(sub) is list:
            here = _join(path, key)
            if not _is_list(value):
                yield _wrong_type(here, "a list", value)
                continue
            for i, item in enumerate(value):
                if _is_mapping(item):
                    yield from _walk(sub[0], item, f"{here}[{i}]")
                elif item is not None:
                    yield _wrong_type(f"{here}[{i}]", "a mapping", item)
        elif _is_mapping(value):
            yield from _walk(sub, value, _join(path, key))
        else:
            yield _wrong_type(_join(path, key), "a mapping", value)


def schema_problems(kind: str, data: Mapping[str, Any]) -> list[str | FieldProblem]:
    """The paths of fields ``kind`` does not have, and a problem for each field holding
    the wrong shape (a mapping where a list belongs, a string where an object does).

    A kind without a table (not read by ksched) has none.
    """
    schema = SCHEMAS.get(kind)
    return [] if schema is None else list(_walk(schema, data, ""))


def unknown_fields(kind: str, data: Mapping[str, Any]) -> list[str]:
    """The paths of fields ``kind`` does not have (``spec.containers[0].resoures``).

    A kind without a table (not read by ksched) has none.
    """
    return [p for p in schema_problems(kind, data) if isinstance(p, str)]
